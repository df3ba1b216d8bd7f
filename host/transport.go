package host

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
)

// What a transport needs of the engine beyond sessions (session.go): the
// sets of plugins an endpoint serves, the 2026-07-28 requests served on
// their own, and the subject of a request. The HTTP transport (package
// mcphttp) is built on this and the exported API of sessions only.

// PluginSet is the set of plugins a session or a request is served, such
// as an HTTP endpoint's. A nil *PluginSet is every plugin.
type PluginSet struct {
	names map[string]bool
}

// PluginSet returns the set of the plugins named. Once a server has handed
// out one, it compares what each set sees when its catalog changes, to
// tell each session of the changes it can see.
func (s *Server) PluginSet(names []string) *PluginSet {
	s.partial.Store(true)
	set := &PluginSet{names: map[string]bool{}}
	for _, name := range names {
		set.names[name] = true
	}
	return set
}

// has reports whether the set includes plugin name.
func (ps *PluginSet) has(name string) bool { return ps == nil || ps.names[name] }

// Subject returns the authenticated subject of a request's context
// (Options.Subject), "" without one.
func (s *Server) Subject(ctx context.Context) string { return s.subject(ctx) }

// PerRequestVersions returns the protocol versions whose requests carry
// their version and client capabilities in _meta and are served on their
// own, with no session: 2026-07-28.
func PerRequestVersions() []string { return slices.Clone(perRequestVersions) }

// IsPerRequest reports whether a request of method with params is served
// on its own: server/discover, or a request whose _meta carries the
// protocol version or the client capabilities.
func IsPerRequest(method string, params json.RawMessage) bool {
	return isPerRequest(&message{Method: method, Params: params})
}

// CheckRequestMeta checks the _meta of a request that IsPerRequest: a
// missing or malformed protocol version or client capabilities, or an
// unknown log level, is invalid params; a version not served per request
// is CodeUnsupportedProtocolVersion.
func CheckRequestMeta(params json.RawMessage) *RPCError {
	_, rpcErr := readMeta20260728(params)
	return rpcErr
}

// ServeRequest serves body, one request that IsPerRequest, on its own,
// seeing plugins (nil: every plugin): its response, and the notifications
// before it, go to reply. It returns once the request is dispatched; the
// request runs until it is answered, or until ctx ends or end is called,
// which cancel it.
func (s *Server) ServeRequest(ctx context.Context, body []byte, reply Outbound, plugins *PluginSet) (end func()) {
	c := s.newConn(reply, plugins, TransportHTTP)
	m, rpcErr := decodeMessage(bytes.TrimSpace(body))
	if rpcErr == nil {
		var e *era20260728
		if e, rpcErr = readMeta20260728(m.Params); rpcErr == nil {
			if resp := c.serve(ctx, m, e, reply, nil); resp != nil {
				_ = reply.Send(resp)
			}
			return c.close
		}
	}
	var id json.RawMessage
	if m != nil {
		id = m.ID
	}
	_ = reply.Send(encodeResponse(id, nil, rpcErr))
	return c.close
}

// HeaderParam is a tool parameter whose value clients mirror in an HTTP
// header (x-mcp-header, 2026-07-28): the header is Mcp-Param-{Name}, and
// Path is the chain of properties keys that leads to the parameter in the
// arguments.
type HeaderParam struct {
	Name string
	Path []string
}

// ToolHeaderParams returns the parameters of tool name that clients mirror
// in headers, as a request in ctx seeing plugins finds the tool; ok is
// false when it finds no such tool.
func (s *Server) ToolHeaderParams(ctx context.Context, name string, plugins *PluginSet) (params []HeaderParam, ok bool) {
	e, ok := s.Catalog().tool(name, view{plugins: plugins, scopes: s.scopes(ctx)})
	if !ok {
		return nil, false
	}
	return e.headerParams, true
}

// EndSubscriptions ends every subscriptions/listen stream, and those that
// open later at once: the server is shutting down.
func (s *Server) EndSubscriptions() { s.listeners.endAll() }
