package tiny

// beta uses c.go (limit); its local Alpha is not a use of a.go.
func beta() int {
	Alpha := 0
	x := struct{ size int }{size: limit}
	return Alpha + x.size
}
