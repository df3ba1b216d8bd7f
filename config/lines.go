package config

import (
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// The toml package keeps key positions to itself, so the lines of keys are
// found by scanning the source again. The scan runs only on text the toml
// parser accepted, which keeps it short: it follows table headers, array of
// tables headers and key/value pairs (with dotted and quoted keys) and
// skips values, strings and comments. Keys inside inline tables and arrays
// are not recorded; lookups fall back to the enclosing key.

// keyPath is the path of a key. Elements of arrays of tables are index elements,
// made by index.
type keyPath []string

// index returns the path element of the i-th element of an array.
func index(i int) string { return "[" + strconv.Itoa(i) + "]" }

func isIndex(s string) bool {
	return len(s) > 2 && s[0] == '[' && s[len(s)-1] == ']'
}

// add returns p extended by elems without sharing p's backing array.
func (p keyPath) add(elems ...string) keyPath {
	return append(p[:len(p):len(p)], elems...)
}

// String formats p as a dotted TOML key, with indexes in brackets:
// plugins.files.mounts[0].host.
func (p keyPath) String() string {
	var b strings.Builder
	for i, e := range p {
		switch {
		case isIndex(e):
			b.WriteString(e)
		default:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(toml.Key{e}.String())
		}
	}
	return b.String()
}

func (p keyPath) id() string { return strings.Join(p, "\x00") }

// lineIndex maps key paths to the line that first mentions them.
type lineIndex map[string]int

// line returns the line of p, or of its nearest recorded ancestor; 0 if
// none is recorded.
func (li lineIndex) line(p keyPath) int {
	for n := len(p); n > 0; n-- {
		if l, ok := li[p[:n].id()]; ok {
			return l
		}
	}
	return 0
}

// scanner walks TOML source the toml parser has accepted.
type scanner struct {
	src    string
	pos    int
	starts []int // byte offset of each line's start
	lines  lineIndex
	arrays map[string]int // array of tables path id → number of elements
}

// indexLines scans src and returns the line of every table and key.
func indexLines(src string) lineIndex {
	s := &scanner{src: src, starts: []int{0}, lines: lineIndex{}, arrays: map[string]int{}}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			s.starts = append(s.starts, i+1)
		}
	}
	var table keyPath
	for {
		s.skipBlank()
		if s.pos >= len(s.src) {
			return s.lines
		}
		line := s.lineAt(s.pos)
		if s.src[s.pos] == '[' {
			array := strings.HasPrefix(s.src[s.pos:], "[[")
			s.pos++
			if array {
				s.pos++
			}
			table = s.header(s.key(), array, line)
			s.skipComment() // the closing brackets and any comment
			continue
		}
		p := table.add(s.key()...)
		for n := len(table) + 1; n <= len(p); n++ {
			s.record(p[:n], line)
		}
		s.skipSpace()
		s.pos++ // '='
		s.skipValue()
	}
}

// header resolves the key of a table header to a path, recording it. In
// TOML a header names the last element of every array of tables on its
// way, and [[key]] appends a new element to key itself.
func (s *scanner) header(key []string, array bool, line int) keyPath {
	var p keyPath
	for i, k := range key {
		p = p.add(k)
		s.record(p, line)
		n, isArray := s.arrays[p.id()]
		switch {
		case array && i == len(key)-1:
			s.arrays[p.id()] = n + 1
			p = p.add(index(n))
		case isArray:
			p = p.add(index(n - 1))
		default:
			continue
		}
		s.record(p, line)
	}
	return p
}

func (s *scanner) record(p keyPath, line int) {
	if _, ok := s.lines[p.id()]; !ok {
		s.lines[p.id()] = line
	}
}

func (s *scanner) lineAt(off int) int {
	return sort.Search(len(s.starts), func(i int) bool { return s.starts[i] > off })
}

// skipBlank skips whitespace, newlines and comments.
func (s *scanner) skipBlank() {
	for s.pos < len(s.src) {
		switch s.src[s.pos] {
		case ' ', '\t', '\r', '\n':
			s.pos++
		case '#':
			s.skipComment()
		default:
			return
		}
	}
}

// skipSpace skips spaces and tabs.
func (s *scanner) skipSpace() {
	for s.pos < len(s.src) && (s.src[s.pos] == ' ' || s.src[s.pos] == '\t') {
		s.pos++
	}
}

// skipComment skips to the end of the line, leaving the newline.
func (s *scanner) skipComment() {
	if i := strings.IndexByte(s.src[s.pos:], '\n'); i >= 0 {
		s.pos += i
	} else {
		s.pos = len(s.src)
	}
}

// key reads a dotted key: bare or quoted parts separated by dots, with
// optional whitespace around them.
func (s *scanner) key() []string {
	var parts []string
	for {
		s.skipSpace()
		start := s.pos
		switch {
		case s.pos < len(s.src) && (s.src[s.pos] == '"' || s.src[s.pos] == '\''):
			s.skipString()
			parts = append(parts, unquote(s.src[start:s.pos]))
		default:
			for s.pos < len(s.src) && isBare(s.src[s.pos]) {
				s.pos++
			}
			parts = append(parts, s.src[start:s.pos])
		}
		s.skipSpace()
		if s.pos >= len(s.src) || s.src[s.pos] != '.' {
			return parts
		}
		s.pos++
	}
}

func isBare(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// unquote returns the value of a quoted key, letting the toml package deal
// with escapes.
func unquote(quoted string) string {
	var v struct{ K string }
	if _, err := toml.Decode("K = "+quoted, &v); err != nil {
		return quoted
	}
	return v.K
}

// skipValue skips a value, which ends at the first newline outside
// strings, arrays and inline tables.
func (s *scanner) skipValue() {
	depth := 0
	for s.pos < len(s.src) {
		switch s.src[s.pos] {
		case '"', '\'':
			s.skipString()
			continue
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		case '#':
			s.skipComment()
			continue
		case '\n':
			if depth == 0 {
				return
			}
		}
		s.pos++
	}
}

// skipString skips a basic, literal or multi-line string starting at pos.
func (s *scanner) skipString() {
	q := s.src[s.pos]
	delim := string(q)
	if strings.HasPrefix(s.src[s.pos:], strings.Repeat(delim, 3)) {
		delim = strings.Repeat(delim, 3)
	}
	s.pos += len(delim)
	for s.pos < len(s.src) {
		switch {
		case q == '"' && s.src[s.pos] == '\\':
			s.pos += 2
		case strings.HasPrefix(s.src[s.pos:], delim):
			s.pos += len(delim)
			// A multi-line string may end with up to two quotes of
			// content before its closing delimiter.
			for n := 0; len(delim) == 3 && n < 2 && s.pos < len(s.src) && s.src[s.pos] == q; n++ {
				s.pos++
			}
			return
		default:
			s.pos++
		}
	}
}
