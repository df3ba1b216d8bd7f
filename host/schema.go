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

// compileSchema compiles raw as a JSON Schema (draft 2020-12 unless it says
// otherwise) that must describe an object.
func compileSchema(raw []byte) (*schema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, errors.New("schema is missing")
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
