//go:build windows

package tiny

func beta() int { return Alpha("") }
