//go:build wasip1

// Command extism is the benchmark's third-party plugin: the greet tool of
// the `mcphost new` templates, written as hyper-mcp (v2) plugins are,
// against the official Extism Go PDK (github.com/extism/go-pdk), with no
// mcphost manifest and no mcphost code. It exports list_tools and
// call_tool, reads hyper-mcp's envelope {"request": ..., "context": ...}
// and writes MCP results as JSON; mcphost serves it as it serves any
// hyper-mcp plugin. The benchmark builds it with the standard Go
// toolchain (-buildmode=c-shared), as the go template is built.
package main

import (
	"fmt"
	"strings"

	pdk "github.com/extism/go-pdk"
)

// main never runs: the host calls the exports of the c-shared module after
// _initialize.
func main() {}

type callToolRequest struct {
	Request struct {
		Name      string    `json:"name"`
		Arguments greetArgs `json:"arguments"`
	} `json:"request"`
}

// greetArgs are the greet tool's arguments, as the templates' tool has them.
type greetArgs struct {
	Name  string `json:"name"`
	Shout bool   `json:"shout,omitempty"`
}

type content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type callToolResult struct {
	Content []content `json:"content"`
}

// tools is list_tools' answer: greet, with the templates' schema and
// annotations.
var tools = map[string]any{"tools": []any{map[string]any{
	"name":        "greet",
	"description": "Greets someone by name.",
	"inputSchema": map[string]any{
		"type": "object",
		"properties": map[string]any{
			"name":  map[string]any{"type": "string", "description": "Who to greet", "minLength": 1},
			"shout": map[string]any{"type": "boolean", "description": "Greet in capitals"},
		},
		"required": []string{"name"},
	},
	"annotations": map[string]any{"readOnlyHint": true, "idempotentHint": true, "openWorldHint": false},
}}}

// fail sets the Extism error and returns the non-zero status hyper-mcp's
// templates return.
func fail(err error) int32 {
	pdk.SetError(err)
	return -1
}

//go:wasmexport list_tools
func listTools() int32 {
	if err := pdk.OutputJSON(tools); err != nil {
		return fail(err)
	}
	return 0
}

//go:wasmexport call_tool
func callTool() int32 {
	var in callToolRequest
	if err := pdk.InputJSON(&in); err != nil {
		return fail(err)
	}
	if in.Request.Name != "greet" {
		return fail(fmt.Errorf("unknown tool %q", in.Request.Name))
	}
	s := fmt.Sprintf("Hello, %s!", in.Request.Arguments.Name)
	if in.Request.Arguments.Shout {
		s = strings.ToUpper(s)
	}
	if err := pdk.OutputJSON(callToolResult{Content: []content{{Type: "text", Text: s}}}); err != nil {
		return fail(err)
	}
	return 0
}
