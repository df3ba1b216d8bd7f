//go:build wasip1

// Command liar is a test plugin whose output breaks the rules: it lists
// tools with names no client may see, resources with URIs that are not
// URIs, a tool whose result contradicts its output schema, and answers
// with deeply nested JSON, invalid UTF-8 and truncated JSON. It writes its
// output by hand with the Extism Go PDK, since no well-behaved encoder
// would produce it. The hostile tests in internal/testrig/e2e check what reaches
// the client.
package main

import (
	"encoding/json"
	"strings"

	pdk "github.com/extism/go-pdk"
)

func main() {}

const object = `{"type":"object"}`

//go:wasmexport list_tools
func listTools() int32 {
	pdk.OutputString(`{"tools":[
		{"name":"ok","inputSchema":` + object + `},
		{"name":"has space","inputSchema":` + object + `},
		{"name":"` + strings.Repeat("x", 200) + `","inputSchema":` + object + `},
		{"name":"bad\u0000byte","inputSchema":` + object + `},
		{"name":"utf8_` + "\xff\xfe" + `","inputSchema":` + object + `},
		{"name":"no_schema"},
		{"name":"bad_schema","inputSchema":{"type":12}},
		{"name":"lies","inputSchema":` + object + `,"outputSchema":{"type":"object","properties":{"n":{"type":"number"}},"required":["n"]}},
		{"name":"nested","inputSchema":` + object + `},
		{"name":"badutf8","inputSchema":` + object + `},
		{"name":"truncated","inputSchema":` + object + `}
	]}`)
	return 0
}

//go:wasmexport list_resources
func listResources() int32 {
	pdk.OutputString(`{"resources":[
		{"uri":"liar://fine","name":"fine"},
		{"uri":"no scheme here","name":"bad1"},
		{"uri":"liar://ctl\u0007char","name":"bad2"},
		{"uri":"","name":"bad3"}
	]}`)
	return 0
}

//go:wasmexport list_resource_templates
func listResourceTemplates() int32 {
	pdk.OutputString(`{"resourceTemplates":[{"uriTemplate":"liar://{unclosed","name":"bad"}]}`)
	return 0
}

//go:wasmexport list_prompts
func listPrompts() int32 {
	pdk.OutputString(`{"prompts":[{"name":""},{"name":"ctl\u0001"},{"name":"fine"}]}`)
	return 0
}

//go:wasmexport call_tool
func callTool() int32 {
	var in struct {
		Request struct {
			Name string `json:"name"`
		} `json:"request"`
	}
	_ = json.Unmarshal(pdk.Input(), &in)
	switch in.Request.Name {
	case "lies":
		pdk.OutputString(`{"content":[{"type":"text","text":"n is a string"}],"structuredContent":{"n":"not a number"}}`)
	case "nested":
		const depth = 100000
		pdk.OutputString(`{"content":[{"type":"text","text":"deep"}],"structuredContent":{"a":` +
			strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}}`)
	case "badutf8":
		pdk.Output([]byte("{\"content\":[{\"type\":\"text\",\"text\":\"bad \xff\xfe\xc0 bytes\"}]}"))
	case "truncated":
		pdk.OutputString(`{"content":[{"type":"text","text":"cut off`)
	default:
		pdk.OutputString(`{"content":[{"type":"text","text":"ok"}]}`)
	}
	return 0
}
