package mcphttp

import (
	"context"
	"net/http"

	"github.com/mcphost/mcphost/host"
)

// Endpoint is an MCP endpoint of the HTTP transport that serves only some
// plugins.
type Endpoint struct {
	// Path is where it serves Streamable HTTP. It serves HTTP+SSE at
	// Path+"/sse" and takes its messages at Path+"/messages"; at "/mcp",
	// the default endpoint's path, at /sse and /messages.
	Path string
	// Plugins are the names of the plugins it serves.
	Plugins []string
}

// endpoint is an endpoint as the HTTP handler serves it.
type endpoint struct {
	path, sse, messages string
	// plugins are the plugins it serves; nil: every plugin.
	plugins *host.PluginSet
}

// endpoints returns the endpoints to serve: /mcp, serving every plugin
// unless configured, then those configured, in order.
func endpoints(srv *host.Server, configured []Endpoint) []*endpoint {
	out := []*endpoint{{path: "/mcp", sse: "/sse", messages: "/messages"}}
	for _, c := range configured {
		plugins := srv.PluginSet(c.Plugins)
		if c.Path == out[0].path {
			out[0].plugins = plugins
			continue
		}
		out = append(out, &endpoint{path: c.Path, sse: c.Path + "/sse", messages: c.Path + "/messages", plugins: plugins})
	}
	return out
}

type endpointKey struct{}

// serve returns fn serving requests at the endpoint.
func (ep *endpoint) serve(fn http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		fn(w, r.WithContext(context.WithValue(r.Context(), endpointKey{}, ep)))
	}
}

// endpointOf returns the endpoint an HTTP request came to.
func endpointOf(r *http.Request) *endpoint {
	ep, _ := r.Context().Value(endpointKey{}).(*endpoint)
	return ep
}
