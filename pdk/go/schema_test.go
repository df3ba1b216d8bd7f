//go:build !wasm

package pdk

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

type weatherArgs struct {
	City   string   `json:"city" description:"City name, e.g. Paris"`
	Units  string   `json:"units,omitempty" jsonschema:"enum=celsius|fahrenheit,default=celsius"`
	Days   int      `json:"days" jsonschema:"minimum=1,maximum=14,description=Days to forecast\\, at most 14"`
	Detail *bool    `json:"detail"`
	Tags   []string `json:"tags,omitempty" jsonschema:"enum=rain|sun,maxItems=2,uniqueItems"`
	Note   string   `json:"note" jsonschema:"optional,maxLength=100,title=Note"`
	Extra  *int     `json:"extra,omitempty" jsonschema:"required"`
	hidden string
	Skip   string `json:"-"`
}

func schemaJSON(t *testing.T, v reflect.Type, output bool) string {
	t.Helper()
	s, err := schemaFor(v, output)
	if err != nil {
		t.Fatal(err)
	}
	return mustJSON(t, s)
}

func TestSchemaStructTags(t *testing.T) {
	got := schemaJSON(t, typeFor[weatherArgs](), false)
	want := `{"type":"object","properties":{` +
		`"city":{"type":"string","description":"City name, e.g. Paris"},` +
		`"units":{"type":"string","enum":["celsius","fahrenheit"],"default":"celsius"},` +
		`"days":{"type":"integer","description":"Days to forecast, at most 14","minimum":1,"maximum":14},` +
		`"detail":{"type":"boolean"},` +
		`"tags":{"type":"array","items":{"type":"string","enum":["rain","sun"]},"maxItems":2,"uniqueItems":true},` +
		`"note":{"type":"string","title":"Note","maxLength":100},` +
		`"extra":{"type":"integer"}},` +
		`"required":["city","days","extra"]}`
	if got != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}
}

type inner struct {
	Name  string            `json:"name"`
	Score float64           `json:"score,omitempty" jsonschema:"exclusiveMinimum=0,multipleOf=0.5"`
	Attrs map[string]int    `json:"attrs,omitempty"`
	Raw   json.RawMessage   `json:"raw,omitempty"`
	Any   any               `json:"any,omitempty"`
	When  time.Time         `json:"when"`
	Data  []byte            `json:"data,omitempty"`
	Fixed [2]uint8          `json:"fixed"`
	Kids  []*inner          `json:"kids,omitempty"`
	Count uint              `json:"count,string"`
	Level int               `json:"level" jsonschema:"enum=1|2|3"`
	Ratio float32           `json:"ratio" jsonschema:"enum=0.5|1.5,default=0.5,examples=1.5"`
	Flags map[string]string `json:"flags,omitempty" jsonschema:"default={\"a\":\"b\"}"`
}

func TestSchemaKinds(t *testing.T) {
	got := schemaJSON(t, typeFor[inner](), false)
	want := `{"type":"object","properties":{` +
		`"name":{"type":"string"},` +
		`"score":{"type":"number","exclusiveMinimum":0,"multipleOf":0.5},` +
		`"attrs":{"type":"object","additionalProperties":{"type":"integer"}},` +
		`"raw":{},"any":{},` +
		`"when":{"type":"string","format":"date-time"},` +
		`"data":{"type":"string","contentEncoding":"base64"},` +
		`"fixed":{"type":"array","items":{"type":"integer","minimum":0},"minItems":2,"maxItems":2},` +
		`"kids":{"type":"array","items":{"type":"object"}},` +
		`"count":{"type":"string"},` +
		`"level":{"type":"integer","enum":[1,2,3]},` +
		`"ratio":{"type":"number","enum":[0.5,1.5],"default":0.5,"examples":[1.5]},` +
		`"flags":{"type":"object","default":{"a":"b"},"additionalProperties":{"type":"string"}}},` +
		`"required":["name","when","fixed","count","level","ratio"]}`
	if got != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}
}

type Base struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type withEmbedded struct {
	Base
	Name  string `json:"name,omitempty" description:"overrides Base.Name"`
	Named Base   `json:"named"`
	*Ptr
}

type Ptr struct {
	Deep int `json:"deep"`
}

func TestSchemaEmbedded(t *testing.T) {
	got := schemaJSON(t, typeFor[withEmbedded](), false)
	want := `{"type":"object","properties":{` +
		`"id":{"type":"string"},` +
		`"name":{"type":"string","description":"overrides Base.Name"},` +
		`"named":{"type":"object","properties":{"id":{"type":"string"},"name":{"type":"string"}},"required":["id","name"]},` +
		`"deep":{"type":"integer"}},` +
		`"required":["id","named","deep"]}`
	if got != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}
}

type outputShape struct {
	Count int            `json:"count"`
	Words []string       `json:"words"`
	Maybe *int           `json:"maybe"`
	Opt   []string       `json:"opt,omitempty"`
	Map   map[string]int `json:"map"`
	Items []*Base        `json:"items"`
}

func TestSchemaOutputNullable(t *testing.T) {
	got := schemaJSON(t, typeFor[outputShape](), true)
	want := `{"type":"object","properties":{` +
		`"count":{"type":"integer"},` +
		`"words":{"type":["array","null"],"items":{"type":"string"}},` +
		`"maybe":{"type":["integer","null"]},` +
		`"opt":{"type":"array","items":{"type":"string"}},` +
		`"map":{"type":["object","null"],"additionalProperties":{"type":"integer"}},` +
		`"items":{"type":["array","null"],"items":{"type":["object","null"],"properties":{"id":{"type":"string"},"name":{"type":"string"}},"required":["id","name"]}}},` +
		`"required":["count","words","opt","map","items"]}`
	// "opt" has omitempty: not required, not nullable.
	want = strings.Replace(want, `"required":["count","words","opt","map","items"]`, `"required":["count","words","map","items"]`, 1)
	if got != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}
}

func TestSchemaErrors(t *testing.T) {
	type badKeyword struct {
		A string `json:"a" jsonschema:"minimun=3"`
	}
	type badEnum struct {
		A int `json:"a" jsonschema:"enum=1|two"`
	}
	type badNumber struct {
		A int `json:"a" jsonschema:"maximum=ten"`
	}
	type noValue struct {
		A int `json:"a" jsonschema:"minimum"`
	}
	type badType struct {
		C chan int `json:"c"`
	}
	type badKey struct {
		M map[[2]int]string `json:"m"`
	}
	for _, c := range []struct {
		t    reflect.Type
		want string
	}{
		{typeFor[badKeyword](), `unknown keyword "minimun"`},
		{typeFor[badEnum](), `"two" is not an integer`},
		{typeFor[badNumber](), `"ten" is not a number`},
		{typeFor[noValue](), `needs a value`},
		{typeFor[badType](), `chan int has no JSON representation`},
		{typeFor[badKey](), `cannot be a JSON object key`},
		{reflect.StructOf([]reflect.StructField{{Name: "A", Type: typeFor[string](), Tag: `json:"a" jsonschema:"description=x\, y"`}}), `jsonschema tag is not a valid quoted string`},
	} {
		_, err := schemaFor(c.t, false)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.t, err, c.want)
		}
	}
}

func TestSchemaFor(t *testing.T) {
	raw, err := SchemaFor[struct {
		Q string `json:"q"`
	}]()
	if err != nil || string(raw) != `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}` {
		t.Errorf("SchemaFor = %s, %v", raw, err)
	}
}

func TestInputAndOutputSchema(t *testing.T) {
	s, err := inputSchema(typeFor[struct{}]())
	if err != nil || mustJSON(t, s) != `{"type":"object","additionalProperties":false}` {
		t.Errorf("empty struct input schema = %s, %v", mustJSON(t, s), err)
	}
	s, err = inputSchema(typeFor[*weatherArgs]())
	if err != nil || s.property("city") == nil {
		t.Errorf("pointer input schema = %v, %v", s, err)
	}
	if _, err := inputSchema(typeFor[[]string]()); err == nil {
		t.Error("slice arguments accepted")
	}
	if _, err := inputSchema(typeFor[string]()); err == nil {
		t.Error("string arguments accepted")
	}
	s, err = inputSchema(typeFor[map[string]any]())
	if err != nil || mustJSON(t, s) != `{"type":"object","additionalProperties":{}}` {
		t.Errorf("map input schema = %s, %v", mustJSON(t, s), err)
	}

	for _, c := range []struct {
		t    reflect.Type
		want string
	}{
		{typeFor[string](), "null"},
		{typeFor[any](), "null"},
		{typeFor[*struct{}](), `{"type":"object"}`},
		{typeFor[[]int](), `{"type":"object","properties":{"result":{"type":["array","null"],"items":{"type":"integer"}}},"required":["result"]}`},
		{typeFor[float64](), `{"type":"object","properties":{"result":{"type":"number"}},"required":["result"]}`},
		{typeFor[map[string]bool](), `{"type":"object","additionalProperties":{"type":"boolean"}}`},
	} {
		s, err := outputSchema(c.t)
		if err != nil {
			t.Fatal(err)
		}
		got := "null"
		if s != nil {
			got = mustJSON(t, s)
		}
		if got != c.want {
			t.Errorf("outputSchema(%s) = %s, want %s", c.t, got, c.want)
		}
	}
}

type node struct {
	Value    int     `json:"value"`
	Children []*node `json:"children,omitempty"`
}

func TestSchemaRecursive(t *testing.T) {
	got := schemaJSON(t, typeFor[node](), false)
	want := `{"type":"object","properties":{"value":{"type":"integer"},"children":{"type":"array","items":{"type":"object"}}},"required":["value"]}`
	if got != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}
}
