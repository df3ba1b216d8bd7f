package pdk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// decodeJSON decodes b into a generic value, keeping numbers exact.
func decodeJSON(b []byte) (any, error) {
	d := decoder{data: b, useNumber: true}
	if v, ok := d.valueInterface(); ok && d.end() {
		return v, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("unexpected data after JSON value")
	}
	return v, nil
}

// validate checks v (decoded with decodeJSON) against s. It enforces type,
// enum, required, numeric bounds, lengths and item counts; format and
// pattern are left to the host. Optional properties may be null, as
// encoding/json then leaves the field at its zero value.
func validate(s *schema, v any, path string) error {
	if s == nil {
		return nil
	}
	if len(s.Type) > 0 && !typeMatches(s, v) {
		return fmt.Errorf("%s: must be %s, not %s", where(path), typeNames(s.Type), jsonTypeName(v))
	}
	if s.Enum != nil && !enumContains(s.Enum, v) {
		return fmt.Errorf("%s: must be one of %s", where(path), enumList(s.Enum))
	}
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return fmt.Errorf("%s: invalid number %s", where(path), x)
		}
		if s.Minimum != nil && f < *s.Minimum {
			return fmt.Errorf("%s: must be >= %s", where(path), fmtNum(*s.Minimum))
		}
		if s.Maximum != nil && f > *s.Maximum {
			return fmt.Errorf("%s: must be <= %s", where(path), fmtNum(*s.Maximum))
		}
		if s.ExclusiveMinimum != nil && f <= *s.ExclusiveMinimum {
			return fmt.Errorf("%s: must be > %s", where(path), fmtNum(*s.ExclusiveMinimum))
		}
		if s.ExclusiveMaximum != nil && f >= *s.ExclusiveMaximum {
			return fmt.Errorf("%s: must be < %s", where(path), fmtNum(*s.ExclusiveMaximum))
		}
		if s.MultipleOf != nil && *s.MultipleOf > 0 {
			q := f / *s.MultipleOf
			if math.Abs(q-math.Round(q)) > 1e-9 {
				return fmt.Errorf("%s: must be a multiple of %s", where(path), fmtNum(*s.MultipleOf))
			}
		}
	case string:
		if s.MinLength == nil && s.MaxLength == nil {
			break // counting the characters of a long text takes time
		}
		n := utf8.RuneCountInString(x)
		if s.MinLength != nil && n < *s.MinLength {
			return fmt.Errorf("%s: must be at least %d characters long", where(path), *s.MinLength)
		}
		if s.MaxLength != nil && n > *s.MaxLength {
			return fmt.Errorf("%s: must be at most %d characters long", where(path), *s.MaxLength)
		}
	case []any:
		if s.MinItems != nil && len(x) < *s.MinItems {
			return fmt.Errorf("%s: must have at least %d items", where(path), *s.MinItems)
		}
		if s.MaxItems != nil && len(x) > *s.MaxItems {
			return fmt.Errorf("%s: must have at most %d items", where(path), *s.MaxItems)
		}
		if s.UniqueItems {
			seen := map[string]bool{}
			for _, item := range x {
				k, _ := json.Marshal(item)
				if seen[string(k)] {
					return fmt.Errorf("%s: items must be unique", where(path))
				}
				seen[string(k)] = true
			}
		}
		for i, item := range x {
			if err := validate(s.Items, item, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	case map[string]any:
		for _, r := range s.Required {
			if _, ok := x[r]; !ok {
				if path == "" {
					return fmt.Errorf("missing required argument %q", r)
				}
				return fmt.Errorf("%s: missing required property %q", where(path), r)
			}
		}
		for _, p := range s.Properties {
			val, ok := x[p.Name]
			if !ok || (val == nil && !s.required(p.Name)) {
				continue
			}
			if err := validate(p.Schema, val, join(path, p.Name)); err != nil {
				return err
			}
		}
		if s.AdditionalProperties != nil || s.NoAdditional {
			keys := make([]string, 0, len(x))
			for k := range x {
				if s.property(k) == nil {
					keys = append(keys, k)
				}
			}
			sort.Strings(keys)
			for _, k := range keys {
				if s.NoAdditional {
					return fmt.Errorf("%s: unexpected property %q", where(path), k)
				}
				if err := validate(s.AdditionalProperties, x[k], join(path, k)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func where(path string) string {
	if path == "" {
		return "arguments"
	}
	return strconv.Quote(path)
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func typeMatches(s *schema, v any) bool {
	for _, t := range s.Type {
		switch t {
		case "null":
			if v == nil {
				return true
			}
		case "boolean":
			if _, ok := v.(bool); ok {
				return true
			}
		case "string":
			if _, ok := v.(string); ok {
				return true
			}
		case "number":
			if _, ok := v.(json.Number); ok {
				return true
			}
		case "integer":
			if n, ok := v.(json.Number); ok && isInteger(n) {
				return true
			}
		case "array":
			if _, ok := v.([]any); ok {
				return true
			}
		case "object":
			if _, ok := v.(map[string]any); ok {
				return true
			}
		}
	}
	return false
}

// isInteger reports whether n is an integer Go can decode into an int64
// or uint64 (so "1.0" is not).
func isInteger(n json.Number) bool {
	if _, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return true
	}
	_, err := strconv.ParseUint(string(n), 10, 64)
	return err == nil
}

func jsonTypeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case json.Number:
		if isInteger(x) {
			return "an integer"
		}
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func typeNames(types []string) string {
	names := make([]string, 0, len(types))
	for _, t := range types {
		switch t {
		case "null":
			names = append(names, "null")
		case "array", "integer", "object":
			names = append(names, "an "+t)
		default:
			names = append(names, "a "+t)
		}
	}
	return strings.Join(names, " or ")
}

func enumContains(enum []any, v any) bool {
	for _, e := range enum {
		if valuesEqual(e, v) {
			return true
		}
	}
	return false
}

func valuesEqual(e, v any) bool {
	if n, ok := v.(json.Number); ok {
		f, err := n.Float64()
		if err != nil {
			return false
		}
		switch x := e.(type) {
		case int64:
			return f == float64(x)
		case float64:
			return f == x
		case json.Number:
			g, err := x.Float64()
			return err == nil && f == g
		}
		return false
	}
	switch v.(type) {
	case string, bool, nil:
		return e == v
	}
	a, err1 := json.Marshal(e)
	b, err2 := json.Marshal(v)
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}

func enumList(enum []any) string {
	parts := make([]string, len(enum))
	for i, e := range enum {
		b, _ := json.Marshal(e)
		parts[i] = string(b)
	}
	return strings.Join(parts, ", ")
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
