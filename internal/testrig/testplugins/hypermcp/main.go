//go:build wasip1

// Command hypermcp is a test plugin written the way hyper-mcp "v2" plugins
// are written: against the official Extism Go PDK (github.com/extism/go-pdk,
// not mcphost's own pdk/go), with no mcphost manifest, exporting the
// hyper-mcp interface (list_tools, call_tool, list_prompts, get_prompt,
// list_resources, read_resource, complete) and importing the hyper-mcp host
// function notify_logging_message. The compatibility tests in internal/testrig/e2e
// check that mcphost serves it unchanged.
//
// It is written from the documented interface only: every export reads a
// JSON envelope {"request": ..., "context": {"id": ..., "_meta": ...}},
// writes an MCP result as JSON and fails by setting the Extism error and
// returning a non-zero status.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	pdk "github.com/extism/go-pdk"
)

// main never runs: the host calls the exports of the c-shared module after
// _initialize.
func main() {}

// requestContext is the "context" member of every export's input.
type requestContext struct {
	ID   any            `json:"id,omitempty"`
	Meta map[string]any `json:"_meta,omitempty"`
}

type listRequest struct {
	Context requestContext `json:"context"`
}

type callToolRequest struct {
	Context requestContext `json:"context"`
	Request struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments,omitempty"`
	} `json:"request"`
}

type getPromptRequest struct {
	Context requestContext `json:"context"`
	Request struct {
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments,omitempty"`
	} `json:"request"`
}

type readResourceRequest struct {
	Context requestContext `json:"context"`
	Request struct {
		URI string `json:"uri"`
	} `json:"request"`
}

type completeRequest struct {
	Context requestContext `json:"context"`
	Request struct {
		Ref struct {
			Type string `json:"type"` // "prompt" or "resource", without MCP's "ref/"
			Name string `json:"name,omitempty"`
			URI  string `json:"uri,omitempty"`
		} `json:"ref"`
		Argument struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"argument"`
	} `json:"request"`
}

type content struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	MimeType string `json:"mimeType,omitempty"`
}

type callToolResult struct {
	Content []content `json:"content"`
	IsError bool      `json:"isError,omitempty"`
}

type loggingMessage struct {
	Level  string `json:"level"`
	Logger string `json:"logger,omitempty"`
	Data   any    `json:"data"`
}

//go:wasmimport extism:host/user notify_logging_message
func hostNotifyLoggingMessage(offset uint64)

// notifyLoggingMessage sends a log message to the client through the host.
func notifyLoggingMessage(msg loggingMessage) {
	mem, err := pdk.AllocateJSON(msg)
	if err != nil {
		return
	}
	hostNotifyLoggingMessage(mem.Offset())
	mem.Free()
}

// fail sets the Extism error and returns the status to return. hyper-mcp's
// own templates return -1; the mcphost ABI documents 1; both are non-zero.
func fail(status int32, err error) int32 {
	pdk.SetError(err)
	return status
}

// output writes v as the export's JSON output.
func output(v any) int32 {
	if err := pdk.OutputJSON(v); err != nil {
		return fail(1, err)
	}
	return 0
}

// Memo is the text of the one resource.
const Memo = "Hello from a plugin built with the official Extism Go PDK."

var languages = []string{"english", "esperanto", "french", "german", "spanish"}

//go:wasmexport list_tools
func listTools() int32 {
	var in listRequest
	if err := pdk.InputJSON(&in); err != nil {
		return fail(1, err)
	}
	pdk.Log(pdk.LogDebug, "hypermcp: list_tools")
	return output(map[string]any{"tools": []any{
		map[string]any{
			"name":        "reverse",
			"description": "Reverses a text, character by character. Fails on an empty text.",
			"inputSchema": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"text": map[string]any{"type": "string", "description": "The text to reverse"},
				},
				"required": []string{"text"},
			},
		},
		map[string]any{
			"name":        "request_context",
			"description": "Returns, as JSON, the request context the host passed to call_tool.",
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{}},
		},
	}})
}

//go:wasmexport call_tool
func callTool() int32 {
	var in callToolRequest
	if err := pdk.InputJSON(&in); err != nil {
		return fail(1, err)
	}
	pdk.Log(pdk.LogInfo, "hypermcp: call_tool "+in.Request.Name)
	// What a plugin prints goes to the host's log, never to the client.
	fmt.Println("hypermcp: calling", in.Request.Name)
	switch in.Request.Name {
	case "reverse":
		text, _ := in.Request.Arguments["text"].(string)
		if text == "" {
			return fail(-1, errors.New("reverse: the text is empty, nothing to reverse"))
		}
		r := []rune(text)
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		notifyLoggingMessage(loggingMessage{Level: "info", Data: map[string]any{
			"event": "reversed", "text": text, "runes": len(r),
		}})
		return output(callToolResult{Content: []content{{Type: "text", Text: string(r)}}})
	case "request_context":
		b, err := json.Marshal(in.Context)
		if err != nil {
			return fail(1, err)
		}
		return output(callToolResult{Content: []content{{Type: "text", Text: string(b)}}})
	default:
		return fail(1, fmt.Errorf("unknown tool %q", in.Request.Name))
	}
}

//go:wasmexport list_prompts
func listPrompts() int32 {
	var in listRequest
	if err := pdk.InputJSON(&in); err != nil {
		return fail(1, err)
	}
	return output(map[string]any{"prompts": []any{
		map[string]any{
			"name":        "greeting",
			"description": "Asks for a greeting to someone in a language.",
			"arguments": []any{
				map[string]any{"name": "name", "description": "Who to greet", "required": true},
				map[string]any{"name": "language", "description": "The language: " + strings.Join(languages, ", ")},
			},
		},
	}})
}

//go:wasmexport get_prompt
func getPrompt() int32 {
	var in getPromptRequest
	if err := pdk.InputJSON(&in); err != nil {
		return fail(1, err)
	}
	if in.Request.Name != "greeting" {
		return fail(1, fmt.Errorf("unknown prompt %q", in.Request.Name))
	}
	name := in.Request.Arguments["name"]
	if name == "" {
		return fail(1, errors.New("greeting: the name argument is required"))
	}
	language := in.Request.Arguments["language"]
	if language == "" {
		language = "english"
	}
	return output(map[string]any{
		"description": "A greeting in " + language,
		"messages": []any{map[string]any{
			"role":    "user",
			"content": content{Type: "text", Text: fmt.Sprintf("Write a short greeting to %s in %s.", name, language)},
		}},
	})
}

//go:wasmexport list_resources
func listResources() int32 {
	var in listRequest
	if err := pdk.InputJSON(&in); err != nil {
		return fail(1, err)
	}
	return output(map[string]any{"resources": []any{
		map[string]any{"uri": "memo://hello", "name": "hello", "description": "A memo", "mimeType": "text/plain"},
	}})
}

//go:wasmexport read_resource
func readResource() int32 {
	var in readResourceRequest
	if err := pdk.InputJSON(&in); err != nil {
		return fail(1, err)
	}
	if in.Request.URI != "memo://hello" {
		return fail(1, fmt.Errorf("unknown resource %q", in.Request.URI))
	}
	return output(map[string]any{"contents": []any{
		map[string]any{"uri": in.Request.URI, "mimeType": "text/plain", "text": Memo},
	}})
}

//go:wasmexport complete
func complete() int32 {
	var in completeRequest
	if err := pdk.InputJSON(&in); err != nil {
		return fail(1, err)
	}
	ref, arg := in.Request.Ref, in.Request.Argument
	if ref.Type != "prompt" || ref.Name != "greeting" {
		return fail(1, fmt.Errorf("complete: nothing to complete for ref %q %q", ref.Type, ref.Name+ref.URI))
	}
	values := []string{}
	if arg.Name == "language" {
		for _, l := range languages {
			if strings.HasPrefix(l, strings.ToLower(arg.Value)) {
				values = append(values, l)
			}
		}
	}
	return output(map[string]any{"completion": map[string]any{
		"values": values, "total": len(values), "hasMore": false,
	}})
}
