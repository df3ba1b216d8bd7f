// Package tiny is a package whose measures are known: its files a, b and c
// use each other a → b, a → c, b → c and c → a, so one pair runs back
// against any order of them.
package tiny

import "strings"

// Alpha uses b.go (beta) and c.go (Gamma, and its method run by name).
func Alpha(s string) string {
	beta()
	g := Gamma{}
	g.run()
	return strings.ToUpper(s)
}

// A is a const of an iota block.
const (
	A Kind = iota
	B
)

type task struct {
	era    *int
	modern bool
}

func (t *task) test(era *int) bool {
	if t.modern && era != nil {
		return t.era == nil
	}
	switch {
	case !t.modern:
		return (t.era) != nil
	}
	return t.modern != (nil == era)
}
