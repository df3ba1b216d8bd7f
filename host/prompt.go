package host

import (
	"context"
	"fmt"

	"github.com/mcphost/mcphost/abi"
)

func handleListPrompts(_ context.Context, req *request, params *listParams) (any, error) {
	prompts, next, err := listPage(req, params, "prompts", req.srv.Catalog().prompts,
		func(e *promptEntry, v string) abi.Prompt { return downgradePrompt(e.prompt, v) })
	if err != nil {
		return nil, err
	}
	return abi.ListPromptsResult{Prompts: prompts, NextCursor: next}, nil
}

// handleGetPrompt checks required arguments, then asks the owning plugin.
func handleGetPrompt(ctx context.Context, req *request, params *getPromptParams) (any, error) {
	p := params.GetPromptParams
	e, ok := find(ctx, req.srv, func(c *Catalog) (*promptEntry, bool) { return c.prompt(p.Name, req.view()) })
	if !ok {
		if e, hidden := req.srv.Catalog().prompt(p.Name, everything); hidden {
			req.deniedHidden(e.plugin.Name, "prompt", p.Name)
		}
		return nil, rpcErrorf(CodeInvalidParams, "unknown prompt: %q", p.Name)
	}
	if err := req.meetRequirement("prompt", p.Name, e.prompt.Meta); err != nil {
		return nil, err
	}
	for _, a := range e.prompt.Arguments {
		if _, ok := p.Arguments[a.Name]; a.Required && !ok {
			return nil, rpcErrorf(CodeInvalidParams, "prompt %s: missing required argument %q", p.Name, a.Name)
		}
	}
	p.Name, p.Meta = e.original, nil // the _meta goes in the context
	var res abi.GetPromptResult
	if err := e.plugin.call(ctx, abi.ExportGetPrompt, e.plugin.input(req, p, false), &res); err != nil {
		return nil, err
	}
	if res.Messages == nil {
		res.Messages = []abi.PromptMessage{}
	}
	for i, m := range res.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return nil, rpcErrorf(CodeInternalError, "plugin %s returned an invalid prompt: messages[%d]: role must be user or assistant", e.plugin.Name, i)
		}
		if err := checkContent(m.Content); err != nil {
			return nil, rpcErrorf(CodeInternalError, "plugin %s returned an invalid prompt: %v", e.plugin.Name, fmt.Errorf("messages[%d]: %w", i, err))
		}
	}
	return downgradePromptResult(&res, req.version()), nil
}
