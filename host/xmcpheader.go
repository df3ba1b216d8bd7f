package host

import (
	"encoding/json"
	"fmt"
	"strings"
)

// x-mcp-header (2026-07-28, Streamable HTTP): a tool's inputSchema may
// mark parameters whose values clients mirror in Mcp-Param-{Name} headers,
// so intermediaries can route on them (HeaderParam). The HTTP transport
// checks the mirror against the arguments (package mcphttp).

// headerParams returns the parameters of an inputSchema marked with
// x-mcp-header, or why the marks break the rules clients enforce (they
// leave such a tool out): each is a non-empty token, unique regardless of
// case, on a string, integer or boolean property statically reachable from
// the root (a chain of properties keys, not through items, a composition, a
// condition or a $ref).
func headerParams(schema json.RawMessage) ([]HeaderParam, error) {
	var root any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, err
	}
	w := headerWalk{seen: map[string]bool{}}
	w.schema(root, true, nil)
	return w.params, w.err
}

// headerWalk collects the x-mcp-header marks of a schema.
type headerWalk struct {
	params []HeaderParam
	seen   map[string]bool // lower-cased names
	err    error
}

// schema visits a subschema; static says whether a chain of properties
// keys (path) leads to it from the root.
func (w *headerWalk) schema(v any, static bool, path []string) {
	s, ok := v.(map[string]any)
	if !ok || w.err != nil {
		w.any(v)
		return
	}
	if mark, ok := s["x-mcp-header"]; ok {
		w.mark(s, mark, static && len(path) > 0, path)
	}
	for key, sub := range s {
		switch key {
		case "properties":
			props, _ := sub.(map[string]any)
			for name, p := range props {
				w.schema(p, static, append(path[:len(path):len(path)], name))
			}
		case "enum", "const", "default", "examples": // values, not schemas
		default:
			w.any(sub)
		}
	}
}

// any visits a value that is not reached through properties alone.
func (w *headerWalk) any(v any) {
	switch v := v.(type) {
	case map[string]any:
		w.schema(v, false, nil)
	case []any:
		for _, e := range v {
			w.any(e)
		}
	}
}

// mark checks one x-mcp-header mark and records it.
func (w *headerWalk) mark(s map[string]any, mark any, static bool, path []string) {
	name, _ := mark.(string)
	switch t, _ := s["type"].(string); {
	case !isToken(name):
		w.err = fmt.Errorf("x-mcp-header %v must be a non-empty token (letters, digits and !#$%%&'*+-.^_`|~)", mark)
	case !static:
		w.err = fmt.Errorf("x-mcp-header %q must be on a property reachable through properties alone (not items, a composition, a condition or a $ref)", name)
	case t != "string" && t != "integer" && t != "boolean":
		w.err = fmt.Errorf("x-mcp-header %q is on a property of type %q; it must be string, integer or boolean", name, t)
	case w.seen[strings.ToLower(name)]:
		w.err = fmt.Errorf("x-mcp-header %q is used twice (names are compared regardless of case)", name)
	default:
		w.seen[strings.ToLower(name)] = true
		w.params = append(w.params, HeaderParam{Name: name, Path: path})
	}
}

// isToken reports whether s is an HTTP token (RFC 9110, 1*tchar).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", c)) {
			return false
		}
	}
	return true
}
