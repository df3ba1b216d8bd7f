package host

import (
	"context"
	"encoding/json"

	"github.com/mcphost/mcphost/abi"
)

func handleListResources(_ context.Context, req *request, params *listParams) (any, error) {
	resources, next, err := listPage(req, params, "resources", req.srv.Catalog().resources,
		func(e *resourceEntry, v string) abi.Resource { return downgradeResource(e.resource, v) })
	if err != nil {
		return nil, err
	}
	return abi.ListResourcesResult{Resources: resources, NextCursor: next}, nil
}

func handleListResourceTemplates(_ context.Context, req *request, params *listParams) (any, error) {
	templates, next, err := listPage(req, params, "templates", req.srv.Catalog().templates,
		func(e *templateEntry, v string) abi.ResourceTemplate { return downgradeTemplate(e.template, v) })
	if err != nil {
		return nil, err
	}
	return abi.ListResourceTemplatesResult{ResourceTemplates: templates, NextCursor: next}, nil
}

// handleReadResource routes the URI to the plugin that lists it or whose
// template matches it; no owner is "resource not found".
func handleReadResource(ctx context.Context, req *request, params *readResourceParams) (any, error) {
	p := params.ReadResourceParams
	if p.URI == "" {
		return nil, rpcErrorf(CodeInvalidParams, "invalid params: uri is required")
	}
	type route struct {
		owner *Plugin
		meta  abi.Meta
	}
	r, _ := find(ctx, req.srv, func(c *Catalog) (route, bool) {
		o, m := c.resourceRoute(p.URI, req.view())
		return route{o, m}, o != nil
	})
	owner := r.owner
	if owner == nil {
		if o, _ := req.srv.Catalog().resourceRoute(p.URI, everything); o != nil {
			req.deniedHidden(o.Name, "resource", p.URI)
		}
		return nil, &RPCError{Code: CodeResourceNotFound, Message: "resource not found: " + p.URI, Data: mustJSON(map[string]string{"uri": p.URI})}
	}
	if !allows(owner.exposure.Resource, p.URI) { // a template matches a URI the allow-list leaves out
		return nil, rpcErrorf(CodeInternalError, "resource %q is not exposed: it is not in the resources allow-list of [plugins.%s]", p.URI, owner.Name)
	}
	p.Meta = nil // the _meta goes in the context
	if err := req.meetRequirement("resource", p.URI, r.meta); err != nil {
		return nil, err
	}
	req.cacheFrom(owner)
	var res abi.ReadResourceResult
	if err := owner.call(ctx, abi.ExportReadResource, owner.input(req, p, false), &res); err != nil {
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
