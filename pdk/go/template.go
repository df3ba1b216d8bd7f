package pdk

import (
	"fmt"
	"strconv"
	"strings"
)

// uriTemplate is an RFC 6570 URI template used to match URIs (not to
// expand them). It understands expressions with the operators none, +, #,
// /, ., ;, ? and &, several variables per expression, explode (*) and
// prefix (:n) modifiers. Matching tries the shortest expansion of each
// expression first and backtracks; values are percent-decoded.
type uriTemplate struct {
	raw   string
	parts []tplPart
}

type tplPart struct {
	literal string
	op      byte // 0 for a literal; ' ' for an expression without operator
	vars    []tplVar
}

type tplVar struct {
	name    string
	explode bool
	prefix  int
}

func parseURITemplate(s string) (*uriTemplate, error) {
	t := &uriTemplate{raw: s}
	for len(s) > 0 {
		open := strings.IndexByte(s, '{')
		if open < 0 {
			if strings.IndexByte(s, '}') >= 0 {
				return nil, fmt.Errorf("uri template %q: unbalanced }", t.raw)
			}
			t.parts = append(t.parts, tplPart{literal: s})
			break
		}
		if open > 0 {
			lit := s[:open]
			if strings.IndexByte(lit, '}') >= 0 {
				return nil, fmt.Errorf("uri template %q: unbalanced }", t.raw)
			}
			t.parts = append(t.parts, tplPart{literal: lit})
		}
		end := strings.IndexByte(s[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("uri template %q: unclosed {", t.raw)
		}
		expr := s[open+1 : open+end]
		s = s[open+end+1:]
		p := tplPart{op: ' '}
		if expr != "" && strings.IndexByte("+#./;?&", expr[0]) >= 0 {
			p.op = expr[0]
			expr = expr[1:]
		}
		if expr == "" {
			return nil, fmt.Errorf("uri template %q: empty expression", t.raw)
		}
		for _, spec := range strings.Split(expr, ",") {
			v := tplVar{name: spec}
			if strings.HasSuffix(spec, "*") {
				v.name, v.explode = strings.TrimSuffix(spec, "*"), true
			} else if name, n, ok := strings.Cut(spec, ":"); ok {
				l, err := strconv.Atoi(n)
				if err != nil || l <= 0 || l >= 10000 {
					return nil, fmt.Errorf("uri template %q: bad prefix in %q", t.raw, spec)
				}
				v.name, v.prefix = name, l
			}
			if v.name == "" || strings.ContainsAny(v.name, "{}/?#&=+ ") {
				return nil, fmt.Errorf("uri template %q: bad variable %q", t.raw, spec)
			}
			p.vars = append(p.vars, v)
		}
		t.parts = append(t.parts, p)
	}
	return t, nil
}

// varNames returns the template's variable names in order.
func (t *uriTemplate) varNames() []string {
	var names []string
	for _, p := range t.parts {
		for _, v := range p.vars {
			names = append(names, v.name)
		}
	}
	return names
}

// match reports whether uri matches the template and returns the values
// of its variables (variables an optional expression left undefined are
// absent).
func (t *uriTemplate) match(uri string) (map[string]string, bool) {
	vars := map[string]string{}
	if matchParts(t.parts, uri, vars) {
		return vars, true
	}
	return nil, false
}

func matchParts(parts []tplPart, s string, vars map[string]string) bool {
	if len(parts) == 0 {
		return s == ""
	}
	p := parts[0]
	if p.op == 0 {
		return strings.HasPrefix(s, p.literal) && matchParts(parts[1:], s[len(p.literal):], vars)
	}
	// Shortest candidate first (so "{name}{.ext}" splits "readme.md" at the
	// dot); the candidate may not cross a character the expression cannot
	// produce.
	limit := len(s)
	for i := 0; i < len(s); i++ {
		if stopsExpression(p.op, s[i]) {
			limit = i
			break
		}
	}
	for end := 0; end <= limit; end++ {
		got := map[string]string{}
		if !matchExpression(p, s[:end], got) {
			continue
		}
		if matchParts(parts[1:], s[end:], vars) {
			for k, v := range got {
				vars[k] = v
			}
			return true
		}
	}
	return false
}

// stopsExpression reports whether byte c cannot be part of an expansion
// with operator op.
func stopsExpression(op byte, c byte) bool {
	switch op {
	case '+', '#':
		return false
	case '?', '&':
		return c == '#'
	case ' ':
		return c == '/' || c == '?' || c == '#'
	case '/':
		return c == '?' || c == '#'
	case '.', ';':
		return c == '/' || c == '?' || c == '#'
	}
	return false
}

// matchExpression matches chunk against the whole expression p.
func matchExpression(p tplPart, chunk string, vars map[string]string) bool {
	switch p.op {
	case ' ', '+':
		if chunk == "" {
			return false // a routing variable must have a value
		}
		return assignList(p, chunk, ',', vars)
	case '#', '/', '.':
		if chunk == "" {
			return true // all variables undefined
		}
		if chunk[0] != p.op {
			return false
		}
		sep := byte(',')
		if p.op != '#' {
			sep = p.op
		}
		return assignList(p, chunk[1:], sep, vars)
	case '?', '&', ';':
		if chunk == "" {
			return true
		}
		if chunk[0] != p.op {
			return false
		}
		sep := byte('&')
		if p.op == ';' {
			sep = ';'
		}
		for _, pair := range strings.Split(chunk[1:], string(sep)) {
			name, value, _ := strings.Cut(pair, "=")
			known := false
			for _, v := range p.vars {
				if v.name == name {
					if old, ok := vars[name]; ok && v.explode {
						value = old + "," + value
					}
					vars[name] = percentDecode(value)
					known = true
				}
			}
			if !known {
				return false // a parameter of another expression
			}
		}
		return true
	}
	return false
}

// assignList splits chunk at sep over the expression's variables; the last
// variable takes the rest (leniently, also when it is not exploded: clients
// do not always percent-encode separators).
func assignList(p tplPart, chunk string, sep byte, vars map[string]string) bool {
	rest := chunk
	for i, v := range p.vars {
		var value string
		last := i == len(p.vars)-1
		if last {
			value = rest
		} else {
			j := strings.IndexByte(rest, sep)
			if j < 0 {
				value, rest = rest, ""
			} else {
				value, rest = rest[:j], rest[j+1:]
			}
		}
		if v.prefix > 0 && len([]rune(percentDecode(value))) > v.prefix {
			return false
		}
		if value != "" || last {
			vars[v.name] = percentDecode(value)
		}
		if rest == "" && !last {
			break
		}
	}
	return true
}

// percentDecode decodes %XX escapes; it returns s unchanged when an escape
// is malformed.
func percentDecode(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b = append(b, s[i])
			continue
		}
		if i+2 >= len(s) {
			return s
		}
		hi, ok1 := unhex(s[i+1])
		lo, ok2 := unhex(s[i+2])
		if !ok1 || !ok2 {
			return s
		}
		b = append(b, hi<<4|lo)
		i += 2
	}
	return string(b)
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
