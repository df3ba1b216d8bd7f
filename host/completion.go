package host

import (
	"context"
	"strings"

	"github.com/mcphost/mcphost/abi"
)

// maxCompletionValues is the MCP limit on values in one completion result.
const maxCompletionValues = 100

// handleComplete routes a completion to the plugin owning the prompt or the
// resource template, and caps the answer at 100 values.
func handleComplete(ctx context.Context, req *request, p *completeParams) (any, error) {
	if p.Argument == nil || p.Argument.Name == "" {
		return nil, rpcErrorf(CodeInvalidParams, "invalid params: argument.name is required")
	}
	c := req.srv.Catalog()
	in := abi.CompleteParams{Argument: *p.Argument, Context: p.Context}
	var owner *Plugin
	switch p.Ref.Type {
	case "ref/prompt":
		e, ok := c.prompt(p.Ref.Name, req.view())
		if !ok {
			return nil, rpcErrorf(CodeInvalidParams, "unknown prompt: %q", p.Ref.Name)
		}
		owner, in.Ref = e.plugin, abi.CompleteRef{Type: abi.RefPrompt, Name: e.original}
	case "ref/resource":
		if owner = c.templateOwner(p.Ref.URI, req.view()); owner == nil {
			return nil, rpcErrorf(CodeInvalidParams, "unknown resource template: %q", p.Ref.URI)
		}
		in.Ref = abi.CompleteRef{Type: abi.RefResource, URI: p.Ref.URI}
	default:
		return nil, rpcErrorf(CodeInvalidParams, "invalid params: ref.type must be ref/prompt or ref/resource, not %q", p.Ref.Type)
	}
	res := abi.CompleteResult{Completion: abi.Completion{Values: []string{}}}
	if !owner.rt.HasExport(abi.ExportComplete) {
		return res, nil
	}
	if err := owner.call(ctx, abi.ExportComplete, owner.input(req, in, false), &res); err != nil {
		return nil, err
	}
	return capCompletion(res), nil
}

// capCompletion keeps at most 100 values, drops ones that are not single
// printable lines and says when there were more.
func capCompletion(res abi.CompleteResult) abi.CompleteResult {
	values := make([]string, 0, min(len(res.Completion.Values), maxCompletionValues))
	for _, v := range res.Completion.Values {
		if strings.ContainsFunc(v, isControl) {
			continue
		}
		values = append(values, v)
	}
	if len(values) > maxCompletionValues {
		total := len(values)
		if res.Completion.Total != nil && *res.Completion.Total > total {
			total = *res.Completion.Total
		}
		res.Completion.Total = &total
		res.Completion.HasMore = true
		values = values[:maxCompletionValues]
	}
	res.Completion.Values = values
	return res
}
