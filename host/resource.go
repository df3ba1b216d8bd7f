package host

import (
	"context"
	"encoding/json"

	"github.com/mcphost/mcphost/abi"
)

type listResourcesResult struct {
	Resources  []abi.Resource `json:"resources"`
	NextCursor string         `json:"nextCursor,omitempty"`
}

type listResourceTemplatesResult struct {
	ResourceTemplates []abi.ResourceTemplate `json:"resourceTemplates"`
	NextCursor        string                 `json:"nextCursor,omitempty"`
}

func handleListResources(_ context.Context, req *request, params json.RawMessage) (any, error) {
	var p listParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	c := req.sess.srv.Catalog()
	start, end, next, err := page("resources", p.Cursor, len(c.resources), req.sess.srv.opts.PageSize)
	if err != nil {
		return nil, err
	}
	version := req.sess.Version()
	res := listResourcesResult{Resources: make([]abi.Resource, 0, end-start), NextCursor: next}
	for _, e := range c.resources[start:end] {
		res.Resources = append(res.Resources, downgradeResource(e.resource, version))
	}
	return res, nil
}

func handleListResourceTemplates(_ context.Context, req *request, params json.RawMessage) (any, error) {
	var p listParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	c := req.sess.srv.Catalog()
	start, end, next, err := page("templates", p.Cursor, len(c.templates), req.sess.srv.opts.PageSize)
	if err != nil {
		return nil, err
	}
	version := req.sess.Version()
	res := listResourceTemplatesResult{ResourceTemplates: make([]abi.ResourceTemplate, 0, end-start), NextCursor: next}
	for _, e := range c.templates[start:end] {
		res.ResourceTemplates = append(res.ResourceTemplates, downgradeTemplate(e.template, version))
	}
	return res, nil
}

// handleReadResource routes the URI to the plugin that lists it or whose
// template matches it; no owner is "resource not found".
func handleReadResource(ctx context.Context, req *request, params json.RawMessage) (any, error) {
	var p abi.ReadResourceParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.URI == "" {
		return nil, rpcErrorf(CodeInvalidParams, "invalid params: uri is required")
	}
	owner := req.sess.srv.Catalog().resolveResource(p.URI)
	if owner == nil {
		return nil, &RPCError{Code: CodeResourceNotFound, Message: "resource not found: " + p.URI, Data: mustJSON(map[string]string{"uri": p.URI})}
	}
	var res abi.ReadResourceResult
	if err := owner.call(ctx, abi.ExportReadResource, requestInput(req, p), &res); err != nil {
		return nil, err
	}
	if res.Contents == nil {
		res.Contents = []abi.ResourceContents{}
	}
	for i, c := range res.Contents {
		if !validURI(c.URI) {
			return nil, rpcErrorf(CodeInternalError, "plugin %s returned invalid resource contents: contents[%d] needs an absolute uri", owner.Name, i)
		}
	}
	return &res, nil
}

func mustJSON(v any) json.RawMessage {
	raw, _ := json.Marshal(v)
	return raw
}
