package main

func writeDoc(string, *Report) error { return nil }
