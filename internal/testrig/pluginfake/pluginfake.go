// Package pluginfake makes plugin runtimes of Go functions, for the tests
// of the engine (host) and of its transports: they satisfy host.Runtime
// without a sandbox. It imports nothing of the engine, so that the
// engine's own tests can use it too.
package pluginfake

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcphost/mcphost/abi"
)

// Runtime is a plugin runtime whose exports are Go functions, by name.
type Runtime map[string]func(ctx context.Context, in []byte) ([]byte, error)

// Call calls export with in; an export the runtime lacks is an error.
func (f Runtime) Call(ctx context.Context, export string, in []byte) ([]byte, error) {
	fn, ok := f[export]
	if !ok {
		return nil, fmt.Errorf("no such export: %s", export)
	}
	return fn(ctx, in)
}

// HasExport reports whether the runtime has export name.
func (f Runtime) HasExport(name string) bool { _, ok := f[name]; return ok }

// Close does nothing.
func (f Runtime) Close(context.Context) error { return nil }

// Returns makes an export that always answers v as JSON.
func Returns(v any) func(context.Context, []byte) ([]byte, error) {
	return func(context.Context, []byte) ([]byte, error) { return json.Marshal(v) }
}

// AnyObject is the inputSchema of a tool that takes any object.
var AnyObject = json.RawMessage(`{"type":"object"}`)

// NSchema is the inputSchema of a tool that takes an object with an
// integer n.
var NSchema = json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)

// Tools is a runtime that lists tools and answers a call with the text
// "name:tool:arguments".
func Tools(name string, tools ...abi.Tool) Runtime {
	return Runtime{
		abi.ExportListTools: Returns(abi.ListToolsResult{Tools: tools}),
		abi.ExportCallTool: func(_ context.Context, in []byte) ([]byte, error) {
			req := callRequest(in)
			return textResult(name + ":" + req.Name + ":" + string(req.Arguments))
		},
	}
}

// Caller is a runtime with one tool, ask, that calls fn (a host function)
// with the tool's arguments and answers what it returned, or "error: "
// and its error, as text.
func Caller(fn func(context.Context, []byte) ([]byte, error)) Runtime {
	return Runtime{
		abi.ExportListTools: Returns(abi.ListToolsResult{Tools: []abi.Tool{{Name: "ask", InputSchema: AnyObject}}}),
		abi.ExportCallTool: func(ctx context.Context, in []byte) ([]byte, error) {
			out, err := fn(ctx, callRequest(in).Arguments)
			text := string(out)
			if err != nil {
				text = "error: " + err.Error()
			}
			return textResult(text)
		},
	}
}

// callRequest reads the tools/call params of a call_tool input.
func callRequest(in []byte) abi.CallToolParams {
	var input struct {
		Request abi.CallToolParams `json:"request"`
	}
	_ = json.Unmarshal(in, &input)
	return input.Request
}

func textResult(text string) ([]byte, error) {
	return json.Marshal(abi.CallToolResult{Content: []abi.Content{{Type: "text", Text: text}}})
}

// Meta20260728 is the _meta of a 2026-07-28 request declaring caps (a JSON
// ClientCapabilities object) and, unless level is "", a log level.
func Meta20260728(caps, level string) string {
	m := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps
	if level != "" {
		m += `,"io.modelcontextprotocol/logLevel":"` + level + `"`
	}
	return m + "}"
}

// Everything is a runtime that offers one of each kind: a tool NAME_tool,
// a prompt NAME_prompt, a resource NAME://doc and a template
// NAME://pages/{page}, all answering with the name, and completes with it.
func Everything(name string) Runtime {
	return Runtime{
		abi.ExportListTools:             Returns(abi.ListToolsResult{Tools: []abi.Tool{{Name: name + "_tool", InputSchema: AnyObject}}}),
		abi.ExportCallTool:              func(context.Context, []byte) ([]byte, error) { return textResult("called " + name) },
		abi.ExportListPrompts:           Returns(abi.ListPromptsResult{Prompts: []abi.Prompt{{Name: name + "_prompt"}}}),
		abi.ExportGetPrompt:             Returns(abi.GetPromptResult{Messages: []abi.PromptMessage{{Role: "user", Content: abi.Content{Type: "text", Text: name}}}}),
		abi.ExportListResources:         Returns(abi.ListResourcesResult{Resources: []abi.Resource{{URI: name + "://doc", Name: "doc"}}}),
		abi.ExportListResourceTemplates: Returns(abi.ListResourceTemplatesResult{ResourceTemplates: []abi.ResourceTemplate{{URITemplate: name + "://pages/{page}", Name: "page"}}}),
		abi.ExportReadResource: func(_ context.Context, in []byte) ([]byte, error) {
			var input struct {
				Request abi.ReadResourceParams `json:"request"`
			}
			_ = json.Unmarshal(in, &input)
			return json.Marshal(abi.ReadResourceResult{Contents: []abi.ResourceContents{{URI: input.Request.URI, Text: name}}})
		},
		abi.ExportComplete: Returns(abi.CompleteResult{Completion: abi.Completion{Values: []string{name}}}),
	}
}
