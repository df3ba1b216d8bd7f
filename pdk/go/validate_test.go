//go:build !wasm

package pdk

import (
	"strings"
	"testing"
)

type searchArgs struct {
	Query   string   `json:"query" jsonschema:"minLength=2,maxLength=10"`
	Limit   int      `json:"limit,omitempty" jsonschema:"minimum=1,maximum=50"`
	Mode    string   `json:"mode,omitempty" jsonschema:"enum=fast|full"`
	Tags    []string `json:"tags,omitempty" jsonschema:"maxItems=2,enum=a|b|c,uniqueItems"`
	Score   float64  `json:"score,omitempty" jsonschema:"exclusiveMaximum=1"`
	Step    float64  `json:"step,omitempty" jsonschema:"multipleOf=0.25"`
	Filters *struct {
		Lang string `json:"lang"`
	} `json:"filters,omitempty"`
	Weights map[string]int `json:"weights,omitempty"`
}

func TestValidateArguments(t *testing.T) {
	s, err := inputSchema(typeFor[searchArgs]())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args string
		want string // "" for valid
	}{
		{`{"query":"go"}`, ""},
		{`{"query":"go","limit":50,"mode":"fast","tags":["a","c"],"score":0.5,"step":0.75,"filters":{"lang":"en"},"weights":{"x":1}}`, ""},
		{`{"query":"go","limit":null,"filters":null}`, ""},
		{`{}`, `missing required argument "query"`},
		{`{"query":1}`, `"query": must be a string, not an integer`},
		{`{"query":"g"}`, `"query": must be at least 2 characters long`},
		{`{"query":"ééééééééééé"}`, `"query": must be at most 10 characters long`},
		{`{"query":"go","limit":0}`, `"limit": must be >= 1`},
		{`{"query":"go","limit":51}`, `"limit": must be <= 50`},
		{`{"query":"go","limit":1.5}`, `"limit": must be an integer, not a number`},
		{`{"query":"go","mode":"slow"}`, `"mode": must be one of "fast", "full"`},
		{`{"query":"go","tags":["a","d"]}`, `"tags[1]": must be one of "a", "b", "c"`},
		{`{"query":"go","tags":["a","b","c"]}`, `"tags": must have at most 2 items`},
		{`{"query":"go","tags":["a","a"]}`, `"tags": items must be unique`},
		{`{"query":"go","score":1}`, `"score": must be < 1`},
		{`{"query":"go","step":0.3}`, `"step": must be a multiple of 0.25`},
		{`{"query":"go","filters":{}}`, `"filters": missing required property "lang"`},
		{`{"query":"go","filters":{"lang":true}}`, `"filters.lang": must be a string, not a boolean`},
		{`{"query":"go","weights":{"x":"heavy"}}`, `"weights.x": must be an integer, not a string`},
		{`[]`, `arguments: must be an object, not an array`},
	} {
		v, err := decodeJSON([]byte(c.args))
		if err != nil {
			t.Fatal(err)
		}
		err = validate(s, v, "")
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.args, err)
		case c.want != "" && (err == nil || err.Error() != c.want):
			t.Errorf("%s: error %v, want %s", c.args, err, c.want)
		}
	}
}

func TestDecodeArguments(t *testing.T) {
	s, _ := inputSchema(typeFor[searchArgs]())
	var a searchArgs
	if err := decodeArguments([]byte(`{"query":"go","limit":3}`), s, &a); err != nil || a.Query != "go" || a.Limit != 3 {
		t.Errorf("decode = %+v, %v", a, err)
	}
	if err := decodeArguments([]byte(`{"query":`), s, &a); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("truncated JSON: %v", err)
	}
	if err := decodeArguments([]byte(`{"a":1} {}`), s, &a); err == nil {
		t.Error("trailing data accepted")
	}
	// Without a schema (WithInputSchema) type errors come from encoding/json.
	var b struct {
		N int `json:"n"`
	}
	if err := decodeArguments([]byte(`{"n":"x"}`), nil, &b); err == nil || !strings.Contains(err.Error(), `"n": cannot use a JSON string as int`) {
		t.Errorf("type error: %v", err)
	}
	if err := decodeArguments(nil, nil, &b); err != nil {
		t.Errorf("absent arguments: %v", err)
	}
}
