//go:build !wasm

package pdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
)

// The fast JSON paths must give exactly what encoding/json gives; these
// tests compare them on tricky inputs.

type keyName string

type sub struct {
	A int    `json:"a"`
	B string `json:"b,omitempty"`
}

type kinds struct {
	B       bool
	S       string
	I       int
	I8      int8
	U16     uint16
	F32     float32
	F       float64
	P       *int
	PP      **string
	Slice   []int
	Array   [2]string
	Map     map[string]int
	KeyMap  map[keyName]*sub
	Any     any
	Bytes   []byte
	Raw     json.RawMessage
	PRaw    *json.RawMessage
	Num     json.Number
	Renamed string `json:"renamed"`
	Ignored string `json:"-"`
	Dash    string `json:"-,"`
	BadTag  string `json:"a\"b"`
	Fold    string `json:"fOLd"`
	Next    *kinds `json:"next,omitempty"`
	Subs    []sub
	private int
}

// Types the fast path leaves to encoding/json.
type (
	withTime  struct{ T time.Time }
	embedding struct {
		sub
		C int
	}
	withStringOpt struct {
		N int `json:"n,string"`
	}
	withDuplicate struct {
		X int
		Y int `json:"X"`
	}
	withIntKeys  struct{ M map[int]string }
	withStringer struct{ S fmt.Stringer }
)

var jsonInputs = []string{
	``, ` `, `null`, ` null `, `{}`, `[]`, `""`, `0`, `true`, `{`, `}`, `{"S":"x"} x`, `{"S":"x"}}`,
	`{"B":true,"S":"hi","I":-12,"I8":127,"U16":65535,"F32":1.5,"F":-2.5e-3}`,
	`{"I8":128}`, `{"I":1.0}`, `{"I":1e2}`, `{"U16":-1}`, `{"F32":1e39}`, `{"F":1e400}`, `{"I":"1"}`,
	`{"I":01}`, `{"I":-}`, `{"I":1.}`, `{"I":.5}`, `{"F":1E+2}`, `{"F":-0.0e-0}`, `{"I":+1}`,
	`{"S":null,"I":null,"B":null,"Array":null,"Slice":null,"Map":null,"P":null,"Any":null,"Raw":null,"PRaw":null}`,
	`{"P":3,"PP":"x","Slice":[1,2,3],"Array":["a","b","c"],"Map":{"a":1,"a":2},"KeyMap":{"k":{"a":1},"n":null}}`,
	`{"Slice":[],"Array":["only"],"Map":{},"Subs":[]}`, `{"Slice":[1,]}`, `{"Slice":[,1]}`, `{"Map":{"a":1,}}`,
	`{"Any":{"a":[1,"x",true,null,{"b":2.5}],"c":{}}}`, `{"Any":[]}`, `{"X":1}`, `{"Any":1e400}`, `{"Any":12345678901234567890}`,
	`{"Bytes":"aGVsbG8="}`, `{"Bytes":"not base64!"}`, `{"Bytes":[104,105]}`, `{"Bytes":null}`,
	`{"Raw":{"x": [1, 2]},"PRaw":[ true ]}`, `{"Raw":"s"}`, `{"Num":12.5e3}`, `{"Num":"12"}`, `{"Num":"x"}`,
	`{"renamed":"r","Renamed":"R"}`, `{"RENAMED":"r"}`, `{"Ignored":"i","-":"d"}`, `{"a\"b":"x","BadTag":"y"}`,
	`{"fold":"f"}`, `{"FOLD":"f","fOLd":"g"}`, `{"s":"lower"}`, `{"S":"a","s":"b"}`, `{"S":"a","S":"b"}`,
	`{"Next":{"Next":{"S":"deep"}},"Subs":[{"a":1,"b":"x"},{"A":2,"extra":[{}]}]}`,
	`{"private":1,"unknown":{"a":[1,{"b":null}]}}`, `{"unknown":[1,2}`, `{"unknown":tru}`, `{"unknown":nul}`,
	`{"S":"tab\tin string"}`, `{"S":"esc \" \\ \/ \b \f \n \r \t \u00e9 \u20AC \ud83d\ude00"}`,
	`{"S":"bad \x"}`, `{"S":"bad \u12"}`, `{"S":"bad \u12G4"}`, `{"S":"quote \'"}`, `{"S":"unterminated}`,
	`{"S":"lone \ud83d surrogate"}`, `{"S":"lone \ude00 low"}`, `{"S":"pair \ud83d\u0041"}`, `{"S":"\ud800\ud800\udc00"}`,
	"{\"S\":\"invalid \xff utf8 \xc3\x28 \xed\xa0\x80\"}", "{\"S\":\"ok é € 😀\"}", "{\"S\":\"\xe2\x80\xa8\"}",
	"{\"S\":\"ctrl \x01\"}", "{\"S\":\"del \x7f\"}", "\xef\xbb\xbf{}", "{\"S\":\"x\"}\x00",
	`{"S" : "spaced" , "I" : 1 }`, "\n{\r\n\t\"S\"\n:\n\"x\"\n}\n", `{"S":1}`, `{"B":"true"}`, `{"Slice":{}}`, `{"Map":[]}`,
	`{"S":"` + strings.Repeat("long text with \\n escapes and é ", 100) + `"}`,
	`{"S":"` + strings.Repeat("x", 1000) + `"}`,
	strings.Repeat(`{"Next":`, 1100) + `{}` + strings.Repeat(`}`, 1100),
	strings.Repeat(`[`, 1100) + strings.Repeat(`]`, 1100),
	`{"request":{"name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":1}},"context":{"id":7}}`,
	`{"Request":{"Name":"x"},"CONTEXT":{"ID":"a","_META":{"k":[1]}}}`, `{"request":null,"context":null}`,
	`{"request":{"name":7}}`, `{"request":{"name":"a","arguments":[1, 2 ]},"context":{"_meta":{}}}`,
	`{"ref":{"type":"prompt","name":"p"},"argument":{"name":"a","value":"v"},"context":{"arguments":{"x":"y"}}}`,
}

var jsonTypes = []reflect.Type{
	reflect.TypeFor[kinds](), reflect.TypeFor[*kinds](), reflect.TypeFor[any](), reflect.TypeFor[map[string]any](),
	reflect.TypeFor[[]any](), reflect.TypeFor[string](), reflect.TypeFor[map[string]sub](),
	reflect.TypeFor[abi.Input](), reflect.TypeFor[abi.ListInput](), reflect.TypeFor[abi.CallToolParams](),
	reflect.TypeFor[abi.GetPromptParams](), reflect.TypeFor[abi.CompleteParams](),
	reflect.TypeFor[withTime](), reflect.TypeFor[embedding](), reflect.TypeFor[withStringOpt](),
	reflect.TypeFor[withDuplicate](), reflect.TypeFor[withIntKeys](), reflect.TypeFor[withStringer](),
}

// checkUnmarshal compares unmarshal with json.Unmarshal for data into a
// new value of type t.
func checkUnmarshal(t *testing.T, typ reflect.Type, data []byte) {
	t.Helper()
	want, got := reflect.New(typ), reflect.New(typ)
	wantErr := json.Unmarshal(data, want.Interface())
	gotErr := unmarshal(data, got.Interface())
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
		t.Fatalf("%s from %q: error %v, want %v", typ, data, gotErr, wantErr)
	}
	if !reflect.DeepEqual(got.Interface(), want.Interface()) {
		t.Fatalf("%s from %q:\n got %#v\nwant %#v", typ, data, got.Elem(), want.Elem())
	}
}

func TestUnmarshalMatchesEncodingJSON(t *testing.T) {
	for _, typ := range jsonTypes {
		for _, in := range jsonInputs {
			checkUnmarshal(t, typ, []byte(in))
		}
	}
}

func TestDecodeJSONMatchesDecoder(t *testing.T) {
	for _, in := range jsonInputs {
		got, gotErr := decodeJSON([]byte(in))
		dec := json.NewDecoder(strings.NewReader(in))
		dec.UseNumber()
		var want any
		wantErr := dec.Decode(&want)
		if wantErr == nil && dec.More() {
			wantErr = errors.New("unexpected data after JSON value")
		}
		if wantErr != nil {
			want = nil
		}
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
			t.Errorf("decodeJSON(%q) = %#v, %v; want %#v, %v", in, got, gotErr, want, wantErr)
		}
	}
}

func FuzzUnmarshal(f *testing.F) {
	for _, in := range jsonInputs {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, typ := range jsonTypes[:4] {
			checkUnmarshal(t, typ, data)
		}
	})
}

// TestFastPathTaken checks that the types the PDK decodes in every call
// have a plan and that valid input does not fall back to encoding/json.
func TestFastPathTaken(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[abi.Input](), reflect.TypeFor[abi.ListInput](), reflect.TypeFor[abi.CallToolParams](),
		reflect.TypeFor[abi.GetPromptParams](), reflect.TypeFor[abi.ReadResourceParams](),
		reflect.TypeFor[abi.CompleteParams](), reflect.TypeFor[abi.HostFunctionError](), reflect.TypeFor[kinds](),
	} {
		if planFor(typ) == nil {
			t.Errorf("no plan for %s", typ)
		}
	}
	for _, typ := range jsonTypes[12:] {
		if planFor(typ) != nil {
			t.Errorf("%s has a plan", typ)
		}
	}
	in := `{"request":{"name":"echo","arguments":{"text":"` + strings.Repeat(`a\n\u00e9`, 10) + `"}},"context":{"id":1}}`
	var input abi.Input
	d := decoder{data: []byte(in)}
	if !d.value(planFor(reflect.TypeFor[abi.Input]()), reflect.ValueOf(&input).Elem()) || !d.end() {
		t.Fatal("the fast path gave up on a plain input")
	}
	var p abi.CallToolParams
	d = decoder{data: input.Request}
	if !d.value(planFor(reflect.TypeFor[abi.CallToolParams]()), reflect.ValueOf(&p).Elem()) || !d.end() {
		t.Fatal("the fast path gave up on a plain request")
	}
	if p.Name != "echo" || string(p.Arguments) != `{"text":"`+strings.Repeat(`a\n\u00e9`, 10)+`"}` {
		t.Errorf("request = %+v", p)
	}
}

func stringSamples() []string {
	samples := []string{"", "plain", "<a href='x'>&amp;</a>", "\u2028\u2029", "tab\t\"q\" back\\slash\x00\x1f\x7f",
		"invalid \xff \xc3\x28 \xed\xa0\x80 end", "é€😀", strings.Repeat("0123456789", 30)}
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	samples = append(samples, string(all))
	// A special byte at every position around the 8-byte words.
	for i := 0; i < 20; i++ {
		for _, c := range []string{`"`, `\`, "<", "&", "\n", "é", "\xff", "\u2028"} {
			samples = append(samples, strings.Repeat("a", i)+c+strings.Repeat("b", 17-i%5))
		}
	}
	return samples
}

func TestAppendString(t *testing.T) {
	for _, s := range stringSamples() {
		want, _ := json.Marshal(s)
		if got := appendString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("appendString(%q) = %s, want %s", s, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range stringSamples() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("appendString(%q) = %s, want %s", s, got, want)
		}
	})
}

// fill sets every field reachable from v to a non-zero value, so that a
// field added to the ABI types is noticed.
func fill(v reflect.Value, s string) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(42)
	case reflect.Float64:
		v.SetFloat(0.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), s)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		fill(v.Index(0), s)
		fill(v.Index(1), s+"2")
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		v.SetMapIndex(reflect.ValueOf("k<"+s), reflect.ValueOf(any([]any{s, 1.5, nil})))
	case reflect.Interface:
		v.Set(reflect.ValueOf(map[string]any{"x": s}))
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			fill(v.Field(i), fmt.Sprintf("%s%d", s, i))
		}
	default:
		panic("fill: " + v.Type().String())
	}
}

func TestMarshalMatchesEncodingJSON(t *testing.T) {
	var full abi.CallToolResult
	fill(reflect.ValueOf(&full).Elem(), "v<&>\u2028\n")
	var fullResource abi.ReadResourceResult
	fill(reflect.ValueOf(&fullResource).Elem(), "r")
	ptr := func(s string) *abi.ResourceContents { return &abi.ResourceContents{URI: "u", Text: s} }
	for _, v := range []any{
		&full, &fullResource, full, nil, (*abi.CallToolResult)(nil), (*abi.ReadResourceResult)(nil),
		&abi.CallToolResult{}, Result(), ErrorResult("bad"), Result(Text(""), Text("x"), Image([]byte{1}, "image/png")),
		Result(abi.Content{Type: "text", Annotations: &abi.Annotations{Audience: []string{"user"}}, Meta: abi.Meta{"a": 1}}),
		Result(abi.Content{Type: "resource", Resource: ptr("")}, abi.Content{Type: "resource", Resource: ptr("t")},
			abi.Content{Type: "resource", Resource: &abi.ResourceContents{URI: "u", Blob: "AA=="}}),
		Result(abi.Content{Type: "text", Meta: abi.Meta{"f": func() {}}}),
		StructuredResult(map[string]any{"html": "<b>", "n": 1}), StructuredResult([]int{1, 2}), StructuredResult("s"),
		&abi.CallToolResult{Content: []abi.Content{}, StructuredContent: json.RawMessage(`{ "spaced": true }`)},
		&abi.CallToolResult{Content: []abi.Content{}, StructuredContent: json.RawMessage(`{"html":"<&>"}`)},
		&abi.CallToolResult{Content: []abi.Content{}, StructuredContent: json.RawMessage("{\"ls\":\"\u2028\"}")},
		&abi.CallToolResult{Content: []abi.Content{}, StructuredContent: json.RawMessage(`{"invalid":}`)},
		&abi.CallToolResult{Content: []abi.Content{}, StructuredContent: json.RawMessage(nil)},
		&abi.CallToolResult{Content: []abi.Content{}, StructuredContent: json.RawMessage(`{"€":"’"}`)},
		&abi.ReadResourceResult{Contents: []abi.ResourceContents{{URI: "u"}, {URI: "v", MimeType: "text/plain", Text: "x"}}},
		TextResource("u", "text/plain", strings.Repeat("line <1>\n", 100)),
	} {
		want, wantErr := json.Marshal(v)
		got, gotErr := marshal(v)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !bytes.Equal(got, want) {
			t.Errorf("marshal(%#v)\n = %s, %v\nwant %s, %v", v, got, gotErr, want, wantErr)
		}
	}
}
