package config

import (
	"fmt"
	"strings"
)

// Error is one problem in a configuration file.
type Error struct {
	// File is the file name as given to Load.
	File string
	// Line is the 1-based line of the problem; 0 when unknown.
	Line int
	// Key is the dotted key the problem concerns ("plugins.files.timeout",
	// "plugins.files.mounts[0].guest"); "" for syntax errors.
	Key string
	// Msg describes the problem, naming the key when there is one.
	Msg string
}

// Error formats e as "file:line: message".
func (e Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}

// Errors is every problem found in a configuration file, in line order.
type Errors []Error

// Error returns one line per problem.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}
