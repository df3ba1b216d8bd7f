package host

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schema is a compiled JSON Schema from a plugin.
type schema struct{ s *jsonschema.Schema }

// noLoader refuses every external reference: a plugin's schema must not make
// the host read files or fetch URLs.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema references are not allowed (%s)", url)
}

// Caps on a plugin's schema, checked before it is parsed: compiling a
// schema nested a thousand levels deep takes seconds of CPU, and a catalog
// compiles the schemas of every tool. Real schemas nest a few levels and
// weigh a few KiB.
const (
	maxSchemaBytes = 256 << 10
	maxSchemaDepth = 64
)

// compileSchema compiles raw as a JSON Schema (draft 2020-12 unless it says
// otherwise) that must describe an object, within maxSchemaBytes and
// maxSchemaDepth.
func compileSchema(raw []byte) (*schema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, errors.New("schema is missing")
	}
	if len(raw) > maxSchemaBytes {
		return nil, fmt.Errorf("schema is larger than %d bytes (%d)", maxSchemaBytes, len(raw))
	}
	if jsonDepth(raw) > maxSchemaDepth {
		return nil, fmt.Errorf("schema nests deeper than %d levels", maxSchemaDepth)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New("schema is not a JSON object")
	}
	if obj["type"] != "object" {
		return nil, errors.New(`schema must have "type": "object"`)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	const loc = "mcphost:///schema.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, err
	}
	return &schema{s}, nil
}

// jsonDepth returns how deep the objects and arrays of a JSON text nest,
// without decoding it.
func jsonDepth(raw []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, b := range raw {
		switch {
		case inString && escaped:
			escaped = false
		case inString && b == '\\':
			escaped = true
		case inString:
			inString = b != '"'
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			depth++
			deepest = max(deepest, depth)
		case b == '}' || b == ']':
			depth--
		}
	}
	return deepest
}

// validate checks a JSON document against the schema. The error lists each
// failing location, e.g. "/count: got string, want integer".
func (s *schema) validate(raw []byte) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = []byte("{}")
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("not valid JSON: %w", err)
	}
	err = s.s.Validate(inst)
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return err
	}
	var problems []string
	var walk func(u *jsonschema.OutputUnit)
	walk = func(u *jsonschema.OutputUnit) {
		if u.Error != nil && len(u.Errors) == 0 {
			loc := u.InstanceLocation
			if loc == "" {
				loc = "/"
			}
			problems = append(problems, loc+": "+u.Error.String())
		}
		for i := range u.Errors {
			walk(&u.Errors[i])
		}
	}
	walk(verr.BasicOutput())
	sort.Strings(problems)
	if len(problems) == 0 {
		return verr
	}
	return errors.New(strings.Join(problems, "; "))
}
