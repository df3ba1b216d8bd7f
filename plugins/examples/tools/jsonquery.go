//go:build wasip1

package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	pdk "github.com/mcphost/mcphost/pdk/go"
)

type jsonQueryArgs struct {
	Document string `json:"document" description:"The JSON document, as text"`
	Path     string `json:"path" description:"Dotted path (items[0].name, \"\" for the whole document; quote keys with dots as [\"a.b\"]) or JSON Pointer (/items/0/name)"`
}

// QueryResult is the structured output of json_query.
type QueryResult struct {
	Found bool `json:"found"`
	// Value is the value at the path (null when not found).
	Value any `json:"value"`
	// Type is the JSON type of the value: object, array, string, number,
	// boolean or null ("" when not found).
	Type string `json:"type,omitempty" jsonschema:"enum=object|array|string|number|boolean|null"`
	// Missing is the first path element that was not found.
	Missing string `json:"missing,omitempty"`
}

func jsonQuery(_ *pdk.Context, a jsonQueryArgs) (QueryResult, error) {
	dec := json.NewDecoder(strings.NewReader(a.Document))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return QueryResult{}, fmt.Errorf("document is not valid JSON: %v", err)
	}
	steps, err := parsePath(a.Path)
	if err != nil {
		return QueryResult{}, err
	}
	cur := doc
	for _, step := range steps {
		next, ok := lookup(cur, step)
		if !ok {
			return QueryResult{Missing: step}, nil
		}
		cur = next
	}
	return QueryResult{Found: true, Value: cur, Type: jsonType(cur)}, nil
}

func lookup(v any, step string) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		r, ok := x[step]
		return r, ok
	case []any:
		i, err := strconv.Atoi(step)
		if err != nil {
			return nil, false
		}
		if i < 0 {
			i += len(x) // -1 is the last element
		}
		if i < 0 || i >= len(x) {
			return nil, false
		}
		return x[i], true
	}
	return nil, false
}

// parsePath splits a JSON Pointer (RFC 6901) or a dotted path into steps.
func parsePath(p string) ([]string, error) {
	p = strings.TrimSpace(p)
	if p == "" || p == "." || p == "$" {
		return nil, nil
	}
	if strings.HasPrefix(p, "/") {
		var steps []string
		for _, s := range strings.Split(p[1:], "/") {
			steps = append(steps, strings.NewReplacer("~1", "/", "~0", "~").Replace(s))
		}
		return steps, nil
	}
	p = strings.TrimPrefix(strings.TrimPrefix(p, "$"), ".")
	var steps []string
	for i := 0; i < len(p); {
		switch p[i] {
		case '.':
			i++
		case '[':
			end := strings.IndexByte(p[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("path %q: unclosed [", p)
			}
			inner := strings.TrimSpace(p[i+1 : i+end])
			if strings.HasPrefix(inner, `"`) || strings.HasPrefix(inner, `'`) {
				// A quoted key may contain "]": find the closing quote.
				q := inner[0]
				end2 := strings.IndexByte(p[i+2:], q)
				if end2 < 0 {
					return nil, fmt.Errorf("path %q: unclosed quote", p)
				}
				key := p[i+2 : i+2+end2]
				rest := p[i+2+end2+1:]
				j := strings.IndexByte(rest, ']')
				if j < 0 || strings.TrimSpace(rest[:j]) != "" {
					return nil, fmt.Errorf("path %q: expected ] after quoted key", p)
				}
				steps = append(steps, key)
				i = len(p) - len(rest) + j + 1
				continue
			}
			steps = append(steps, inner)
			i += end + 1
		default:
			j := i
			for j < len(p) && p[j] != '.' && p[j] != '[' {
				j++
			}
			steps = append(steps, p[i:j])
			i = j
		}
	}
	return steps, nil
}

func jsonType(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	}
	return "null"
}
