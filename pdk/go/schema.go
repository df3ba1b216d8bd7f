package pdk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// schema is the subset of JSON Schema 2020-12 the PDK generates from Go
// types and validates tool arguments against. It marshals with its keywords
// and properties in a stable, declaration order.
type schema struct {
	Type             []string // empty: any type
	Title            string
	Description      string
	Format           string
	ContentEncoding  string
	Enum             []any
	Default          any
	Examples         []any
	Deprecated       bool
	Minimum          *float64
	Maximum          *float64
	ExclusiveMinimum *float64
	ExclusiveMaximum *float64
	MultipleOf       *float64
	MinLength        *int
	MaxLength        *int
	Pattern          string
	Items            *schema
	MinItems         *int
	MaxItems         *int
	UniqueItems      bool
	Properties       []property
	Required         []string
	// AdditionalProperties is the schema of properties not in Properties;
	// NoAdditional writes "additionalProperties": false instead.
	AdditionalProperties *schema
	NoAdditional         bool
}

type property struct {
	Name   string
	Schema *schema
	depth  int // embedding depth, for encoding/json's shadowing rule
}

func (s *schema) is(t string) bool {
	for _, x := range s.Type {
		if x == t {
			return true
		}
	}
	return false
}

// primary is the schema's first non-null type ("" for any).
func (s *schema) primary() string {
	for _, x := range s.Type {
		if x != "null" {
			return x
		}
	}
	return ""
}

func (s *schema) property(name string) *schema {
	for _, p := range s.Properties {
		if p.Name == name {
			return p.Schema
		}
	}
	return nil
}

func (s *schema) required(name string) bool {
	for _, r := range s.Required {
		if r == name {
			return true
		}
	}
	return false
}

// MarshalJSON writes the schema as a JSON Schema object.
func (s *schema) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	put := func(key string, v any) error {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		b.WriteString(strconv.Quote(key))
		b.WriteByte(':')
		enc, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		b.Write(enc)
		return nil
	}
	var err error
	check := func(e error) {
		if err == nil {
			err = e
		}
	}
	switch len(s.Type) {
	case 0:
	case 1:
		check(put("type", s.Type[0]))
	default:
		check(put("type", s.Type))
	}
	if s.Title != "" {
		check(put("title", s.Title))
	}
	if s.Description != "" {
		check(put("description", s.Description))
	}
	if s.Format != "" {
		check(put("format", s.Format))
	}
	if s.ContentEncoding != "" {
		check(put("contentEncoding", s.ContentEncoding))
	}
	if s.Enum != nil {
		check(put("enum", s.Enum))
	}
	if s.Default != nil {
		check(put("default", s.Default))
	}
	if s.Examples != nil {
		check(put("examples", s.Examples))
	}
	if s.Deprecated {
		check(put("deprecated", true))
	}
	for _, f := range []struct {
		key string
		v   *float64
	}{
		{"minimum", s.Minimum}, {"maximum", s.Maximum},
		{"exclusiveMinimum", s.ExclusiveMinimum}, {"exclusiveMaximum", s.ExclusiveMaximum},
		{"multipleOf", s.MultipleOf},
	} {
		if f.v != nil {
			check(put(f.key, *f.v))
		}
	}
	for _, f := range []struct {
		key string
		v   *int
	}{{"minLength", s.MinLength}, {"maxLength", s.MaxLength}} {
		if f.v != nil {
			check(put(f.key, *f.v))
		}
	}
	if s.Pattern != "" {
		check(put("pattern", s.Pattern))
	}
	if s.Items != nil {
		check(put("items", s.Items))
	}
	for _, f := range []struct {
		key string
		v   *int
	}{{"minItems", s.MinItems}, {"maxItems", s.MaxItems}} {
		if f.v != nil {
			check(put(f.key, *f.v))
		}
	}
	if s.UniqueItems {
		check(put("uniqueItems", true))
	}
	if len(s.Properties) > 0 {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		b.WriteString(`"properties":{`)
		for i, p := range s.Properties {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(p.Name))
			b.WriteByte(':')
			enc, e := json.Marshal(p.Schema)
			check(e)
			b.Write(enc)
		}
		b.WriteByte('}')
	}
	if len(s.Required) > 0 {
		check(put("required", s.Required))
	}
	if s.NoAdditional {
		check(put("additionalProperties", false))
	} else if s.AdditionalProperties != nil {
		check(put("additionalProperties", s.AdditionalProperties))
	}
	b.WriteByte('}')
	return b.Bytes(), err
}

// typeFor returns the reflect.Type of T, also for interface types.
func typeFor[T any]() reflect.Type { return reflect.TypeOf((*T)(nil)).Elem() }

// SchemaFor returns the JSON Schema the PDK derives from T for tool
// arguments (see the package documentation for the rules and tags).
func SchemaFor[T any]() (json.RawMessage, error) {
	s, err := schemaFor(typeFor[T](), false)
	if err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

var (
	timeType       = reflect.TypeOf(time.Time{})
	rawMessageType = reflect.TypeOf(json.RawMessage(nil))
	numberType     = reflect.TypeOf(json.Number(""))
)

// schemaFor derives the schema of t. In output mode (the schema of what the
// plugin produces) fields that encoding/json may write as null (nil
// pointers, slices and maps without omitempty) are nullable.
func schemaFor(t reflect.Type, output bool) (*schema, error) {
	g := &schemaGen{output: output, seen: map[reflect.Type]bool{}}
	return g.typeSchema(t)
}

type schemaGen struct {
	output bool
	seen   map[reflect.Type]bool // structs being generated, to stop cycles
}

func (g *schemaGen) typeSchema(t reflect.Type) (*schema, error) {
	switch t {
	case timeType:
		return &schema{Type: []string{"string"}, Format: "date-time"}, nil
	case rawMessageType:
		return &schema{}, nil
	case numberType:
		return &schema{Type: []string{"number"}}, nil
	}
	switch t.Kind() {
	case reflect.Bool:
		return &schema{Type: []string{"boolean"}}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return &schema{Type: []string{"integer"}}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		zero := 0.0
		return &schema{Type: []string{"integer"}, Minimum: &zero}, nil
	case reflect.Float32, reflect.Float64:
		return &schema{Type: []string{"number"}}, nil
	case reflect.String:
		return &schema{Type: []string{"string"}}, nil
	case reflect.Interface:
		return &schema{}, nil
	case reflect.Pointer:
		return g.typeSchema(t.Elem())
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			return &schema{Type: []string{"string"}, ContentEncoding: "base64"}, nil
		}
		items, err := g.typeSchema(t.Elem())
		if err != nil {
			return nil, err
		}
		g.nullable(items, t.Elem())
		s := &schema{Type: []string{"array"}, Items: items}
		if t.Kind() == reflect.Array {
			n := t.Len()
			s.MinItems, s.MaxItems = &n, &n
		}
		return s, nil
	case reflect.Map:
		switch t.Key().Kind() {
		case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		default:
			return nil, fmt.Errorf("map key type %s cannot be a JSON object key", t.Key())
		}
		values, err := g.typeSchema(t.Elem())
		if err != nil {
			return nil, err
		}
		g.nullable(values, t.Elem())
		return &schema{Type: []string{"object"}, AdditionalProperties: values}, nil
	case reflect.Struct:
		if g.seen[t] {
			// A recursive type: describe the inner occurrence loosely.
			return &schema{Type: []string{"object"}}, nil
		}
		g.seen[t] = true
		defer delete(g.seen, t)
		s := &schema{Type: []string{"object"}}
		if err := g.fields(s, t, 0); err != nil {
			return nil, err
		}
		return s, nil
	}
	return nil, fmt.Errorf("type %s has no JSON representation", t)
}

// nullable lets s accept null when, in output mode, a value of type t may
// be encoded as null.
func (g *schemaGen) nullable(s *schema, t reflect.Type) {
	if !g.output || len(s.Type) == 0 || s.is("null") {
		return
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map:
		if t == rawMessageType {
			return
		}
		s.Type = append(s.Type, "null")
	}
}

// fields adds the properties of struct t to s, following encoding/json:
// untagged embedded structs are flattened, "-" and unexported fields are
// skipped, the shallowest field of a name wins.
func (g *schemaGen) fields(s *schema, t reflect.Type, depth int) error {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		jsonTag := f.Tag.Get("json")
		if jsonTag == "-" {
			continue
		}
		name, opts := parseJSONTag(jsonTag)
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if g.seen[ft] {
					continue
				}
				g.seen[ft] = true
				err := g.fields(s, ft, depth+1)
				delete(g.seen, ft)
				if err != nil {
					return err
				}
				continue
			}
		}
		if f.PkgPath != "" { // unexported
			continue
		}
		if name == "" {
			name = f.Name
		}
		fs, err := g.typeSchema(f.Type)
		if err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
		if opts["string"] {
			switch fs.primary() {
			case "integer", "number", "boolean":
				fs = &schema{Type: []string{"string"}}
			}
		}
		omit := opts["omitempty"] || opts["omitzero"]
		if !omit {
			g.nullable(fs, f.Type)
		}
		req, err := applyFieldTags(fs, f)
		if err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
		required := !omit && f.Type.Kind() != reflect.Pointer
		if req != 0 {
			required = req > 0
		}
		addProperty(s, property{Name: name, Schema: fs, depth: depth}, required)
	}
	return nil
}

func addProperty(s *schema, p property, required bool) {
	for i, old := range s.Properties {
		if old.Name != p.Name {
			continue
		}
		if p.depth >= old.depth {
			return
		}
		s.Properties[i] = p
		req := s.Required[:0]
		for _, r := range s.Required {
			if r != p.Name {
				req = append(req, r)
			}
		}
		s.Required = req
		if required {
			s.Required = append(s.Required, p.Name)
		}
		return
	}
	s.Properties = append(s.Properties, p)
	if required {
		s.Required = append(s.Required, p.Name)
	}
}

func parseJSONTag(tag string) (string, map[string]bool) {
	parts := strings.Split(tag, ",")
	opts := map[string]bool{}
	for _, o := range parts[1:] {
		opts[o] = true
	}
	return parts[0], opts
}

// itemKeywords are the keywords that, on an array field, constrain the
// items rather than the array.
var itemKeywords = map[string]bool{
	"enum": true, "format": true, "pattern": true, "minLength": true, "maxLength": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true,
	"multipleOf": true,
}

// applyFieldTags applies the field's `description` and `jsonschema` tags to
// s. It returns +1 for "required", -1 for "optional", 0 otherwise.
func applyFieldTags(s *schema, f reflect.StructField) (int, error) {
	for _, key := range []string{"description", "jsonschema"} {
		if _, ok := f.Tag.Lookup(key); !ok && strings.Contains(string(f.Tag), key+`:"`) {
			// reflect ignores a tag value that is not a valid Go string.
			return 0, fmt.Errorf("%s tag is not a valid quoted string (write \\, and \\| for escaped commas and bars)", key)
		}
	}
	if d, ok := f.Tag.Lookup("description"); ok {
		s.Description = d
	}
	tag, ok := f.Tag.Lookup("jsonschema")
	if !ok || tag == "" {
		return 0, nil
	}
	req := 0
	for _, item := range splitUnescaped(tag, ',') {
		if item == "" {
			continue
		}
		key, value, hasValue := strings.Cut(item, "=")
		key = strings.TrimSpace(key)
		target := s
		if itemKeywords[key] && s.primary() == "array" && s.Items != nil {
			target = s.Items
		}
		var err error
		switch key {
		case "required":
			req = 1
		case "optional":
			req = -1
		case "nullable":
			if len(target.Type) > 0 && !target.is("null") {
				target.Type = append(target.Type, "null")
			}
		case "uniqueItems":
			target.UniqueItems = true
		case "deprecated":
			target.Deprecated = true
		default:
			if !hasValue {
				return 0, fmt.Errorf("jsonschema tag: %q needs a value (%s=...)", key, key)
			}
			err = applyKeyword(target, key, value)
		}
		if err != nil {
			return 0, fmt.Errorf("jsonschema tag %s: %w", key, err)
		}
	}
	return req, nil
}

func applyKeyword(s *schema, key, value string) error {
	var err error
	num := func() *float64 {
		f, e := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if e != nil {
			err = fmt.Errorf("%q is not a number", value)
			return nil
		}
		return &f
	}
	count := func() *int {
		n, e := strconv.Atoi(strings.TrimSpace(value))
		if e != nil || n < 0 {
			err = fmt.Errorf("%q is not a non-negative integer", value)
			return nil
		}
		return &n
	}
	switch key {
	case "description":
		s.Description = unescape(value)
	case "title":
		s.Title = unescape(value)
	case "format":
		s.Format = unescape(value)
	case "pattern":
		s.Pattern = strings.ReplaceAll(value, `\,`, ",")
	case "enum":
		s.Enum = nil
		for _, v := range splitUnescaped(value, '|') {
			x, e := parseValue(s, unescape(v))
			if e != nil {
				return e
			}
			s.Enum = append(s.Enum, x)
		}
	case "examples", "example":
		for _, v := range splitUnescaped(value, '|') {
			x, e := parseValue(s, unescape(v))
			if e != nil {
				return e
			}
			s.Examples = append(s.Examples, x)
		}
	case "default":
		x, e := parseValue(s, unescape(value))
		if e != nil {
			return e
		}
		s.Default = x
	case "minimum":
		s.Minimum = num()
	case "maximum":
		s.Maximum = num()
	case "exclusiveMinimum":
		s.ExclusiveMinimum = num()
	case "exclusiveMaximum":
		s.ExclusiveMaximum = num()
	case "multipleOf":
		s.MultipleOf = num()
	case "minLength":
		s.MinLength = count()
	case "maxLength":
		s.MaxLength = count()
	case "minItems":
		s.MinItems = count()
	case "maxItems":
		s.MaxItems = count()
	default:
		return fmt.Errorf("unknown keyword %q", key)
	}
	return err
}

// parseValue parses a tag value (enum member, default, example) as a value
// of s's type.
func parseValue(s *schema, v string) (any, error) {
	switch s.primary() {
	case "integer":
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", v)
		}
		return n, nil
	case "number":
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", v)
		}
		return f, nil
	case "boolean":
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("%q is not a boolean", v)
		}
		return b, nil
	case "array", "object", "":
		var x any
		if err := json.Unmarshal([]byte(v), &x); err != nil {
			if s.primary() == "" {
				return v, nil
			}
			return nil, fmt.Errorf("%q is not JSON", v)
		}
		return x, nil
	}
	return v, nil
}

// splitUnescaped splits s at each sep not preceded by a backslash, keeping
// escapes in the parts.
func splitUnescaped(s string, sep byte) []string {
	var parts []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case sep:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// unescape removes the backslash of the escapes \, and \|.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	return strings.NewReplacer(`\,`, ",", `\|`, "|").Replace(s)
}
