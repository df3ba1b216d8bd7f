package host

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcphost/mcphost/abi"
)

func handleListTools(_ context.Context, req *request, params *listParams) (any, error) {
	tools, next, err := listPage(req, params, "tools", req.srv.Catalog().tools,
		func(e *toolEntry, v string) abi.Tool { return downgradeTool(withTaskSupport(e), v) })
	if err != nil {
		return nil, err
	}
	return abi.ListToolsResult{Tools: tools, NextCursor: next}, nil
}

// handleCallTool validates the arguments against the tool's inputSchema,
// runs the tool and checks what it returns. An unknown tool is a protocol
// error; everything that goes wrong inside the tool is an isError result the
// model can read. A call with a task (2025-11-25) answers at once with the
// task it starts and runs in the background (task.go).
func handleCallTool(ctx context.Context, req *request, params *callToolParams) (any, error) {
	p := params.CallToolParams
	if p.Name == "" {
		return nil, rpcErrorf(CodeInvalidParams, "invalid params: name is required")
	}
	e, ok := find(ctx, req.srv, func(c *Catalog) (*toolEntry, bool) { return c.tool(p.Name, req.view()) })
	if !ok {
		if e, hidden := req.srv.Catalog().tool(p.Name, everything); hidden {
			req.deniedHidden(e.plugin.Name, "tool", p.Name)
		}
		return nil, rpcErrorf(CodeInvalidParams, "unknown tool: %q", p.Name)
	}
	if err := req.meetRequirement("tool", p.Name, e.tool.Meta); err != nil {
		return nil, err
	}
	if len(p.Arguments) > 0 && p.Arguments[0] != '{' && string(p.Arguments) != "null" {
		return nil, rpcErrorf(CodeInvalidParams, "invalid params: arguments must be an object")
	}
	if len(p.Arguments) == 0 || string(p.Arguments) == "null" {
		p.Arguments = json.RawMessage("{}")
	}
	return req.era.callTool(ctx, req, e, p, params.Task)
}

// runToolCall runs a tool call whose params have been checked.
func runToolCall(ctx context.Context, req *request, e *toolEntry, p abi.CallToolParams) (any, error) {
	if err := e.inputSchema.validate(p.Arguments); err != nil {
		return toolError(fmt.Sprintf("invalid arguments for tool %s: %v", p.Name, err)), nil
	}
	p.Name = e.original
	res, err := e.plugin.callTool(ctx, req, p)
	if err != nil {
		return toolFailure(err)
	}
	if err := checkToolResult(e, res); err != nil {
		return toolError(fmt.Sprintf("tool %s (plugin %s) returned an invalid result: %v", e.tool.Name, e.plugin.Name, err)), nil
	}
	return downgradeToolResult(res, req.version()), nil
}

// toolFailure reports a failed plugin call: protocol errors the plugin chose
// stay protocol errors, the rest become isError results.
func toolFailure(err error) (any, error) {
	if pe, ok := err.(*pluginError); ok {
		if pe.explicit || pe.canceled {
			return nil, pe
		}
		return toolError(pe.rpc.Message), nil
	}
	return nil, err
}

func toolError(msg string) *abi.CallToolResult {
	return &abi.CallToolResult{Content: []abi.Content{{Type: abi.ContentText, Text: msg}}, IsError: true}
}

// checkToolResult refuses results that break the protocol, and structured
// output that does not match the tool's outputSchema.
func checkToolResult(e *toolEntry, res *abi.CallToolResult) error {
	if res.Content == nil {
		res.Content = []abi.Content{}
	}
	for i, c := range res.Content {
		if err := checkContent(c); err != nil {
			return fmt.Errorf("content[%d]: %w", i, err)
		}
	}
	if e.outputSchema == nil || res.IsError {
		return nil
	}
	if res.StructuredContent == nil {
		return fmt.Errorf("the tool declares an outputSchema but returned no structuredContent")
	}
	raw, ok := res.StructuredContent.(*json.RawMessage) // as callTool decodes it
	if !ok {
		encoded, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return err
		}
		raw = (*json.RawMessage)(&encoded)
	}
	if err := e.outputSchema.validate(*raw); err != nil {
		return fmt.Errorf("structuredContent does not match outputSchema: %w", err)
	}
	return nil
}

// checkContent checks that a content block has the fields its type needs.
func checkContent(c abi.Content) error {
	switch c.Type {
	case abi.ContentText:
		return nil
	case abi.ContentImage, abi.ContentAudio:
		if c.Data == "" || c.MimeType == "" {
			return fmt.Errorf("%s content needs data and mimeType", c.Type)
		}
	case abi.ContentResourceLink:
		if !validURI(c.URI) || c.Name == "" {
			return fmt.Errorf("resource_link content needs an absolute uri and a name")
		}
	case abi.ContentResource:
		if c.Resource == nil || !validURI(c.Resource.URI) {
			return fmt.Errorf("resource content needs a resource with an absolute uri")
		}
	default:
		return fmt.Errorf("unknown content type %q", c.Type)
	}
	return nil
}
