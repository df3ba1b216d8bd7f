package tiny

func useAll() { Alpha(""); beta() }
