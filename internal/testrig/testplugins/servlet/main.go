//go:build wasip1

// Command servlet is a test plugin in the v1 / mcp.run "servlet" style,
// built with the official Extism Go PDK (github.com/extism/go-pdk): it
// exports only describe, which lists its tools, and call, which runs one
// ({"params": {"name": ..., "arguments": {...}}} in, an MCP CallToolResult
// out). The compatibility tests in internal/testrig/e2e check that mcphost serves it
// unchanged.
package main

import (
	"fmt"
	"strconv"
	"strings"

	pdk "github.com/extism/go-pdk"
)

// main never runs: the host calls the exports of the c-shared module after
// _initialize.
func main() {}

type callInput struct {
	Params struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	} `json:"params"`
}

type content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type callResult struct {
	Content []content `json:"content"`
	IsError bool      `json:"isError,omitempty"`
}

func textResult(text string, isError bool) callResult {
	return callResult{Content: []content{{Type: "text", Text: text}}, IsError: isError}
}

//go:wasmexport describe
func describe() int32 {
	err := pdk.OutputJSON(map[string]any{"tools": []any{
		map[string]any{
			"name":        "add",
			"description": "Adds two numbers.",
			"inputSchema": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"a": map[string]any{"type": "number"},
					"b": map[string]any{"type": "number"},
				},
				"required": []string{"a", "b"},
			},
		},
		map[string]any{
			"name":        "shout",
			"description": "Upper-cases a text; an empty text is an error result.",
			"inputSchema": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"text": map[string]any{"type": "string"},
				},
				"required": []string{"text"},
			},
		},
	}})
	if err != nil {
		pdk.SetError(err)
		return 1
	}
	return 0
}

//go:wasmexport call
func call() int32 {
	var in callInput
	if err := pdk.InputJSON(&in); err != nil {
		pdk.SetError(err)
		return 1
	}
	var res callResult
	switch args := in.Params.Arguments; in.Params.Name {
	case "add":
		a, _ := args["a"].(float64)
		b, _ := args["b"].(float64)
		res = textResult(strconv.FormatFloat(a+b, 'g', -1, 64), false)
	case "shout":
		text, _ := args["text"].(string)
		if text == "" {
			res = textResult("shout: nothing to shout", true)
		} else {
			res = textResult(strings.ToUpper(text)+"!", false)
		}
	default:
		pdk.SetError(fmt.Errorf("unknown tool %q", in.Params.Name))
		return 1
	}
	if err := pdk.OutputJSON(res); err != nil {
		pdk.SetError(err)
		return 1
	}
	return 0
}
