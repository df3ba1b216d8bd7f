package host

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// The 2026-07-28 era is stateless: a request carries its protocol version
// and its client's capabilities in _meta and is served on its own, with no
// initialize before it. Such requests and the requests of a legacy
// session, which initialize began, share one stream or endpoint; a
// request's _meta says which era it belongs to (isModern).

// The per-request _meta keys of 2026-07-28.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaLogLevel           = "io.modelcontextprotocol/logLevel"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
)

// methodDiscover is the 2026-07-28 method that names the versions,
// capabilities and identity of the server (discover.go).
const methodDiscover = "server/discover"

// removedIn20260728 are the methods of earlier versions that 2026-07-28
// no longer has: they are method not found in a modern request.
var removedIn20260728 = []string{
	"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe",
	"tasks/result", "tasks/list",
}

// modernMethods are the methods a modern request has that a legacy session
// does not, or serves otherwise.
var modernMethods = map[string]method{
	methodDiscover: handle(handleDiscover),
	methodListen:   listenMethod(),
	"tasks/get":    handle(handleGetModernTask),
	"tasks/update": handle(handleUpdateTask),
	"tasks/cancel": handle(handleCancelModernTask),
}

// modern is what a 2026-07-28 request declares in its _meta.
type modern struct {
	version string
	caps    clientCapabilities
	capsRaw json.RawMessage // caps as the request sent them
	// logLevel is the least severe level of the log messages the request
	// takes; logs is false when it asked for none.
	logLevel logLevel
	logs     bool
}

// requestMeta is the _meta of a request's params, by key.
type requestMeta struct {
	Meta map[string]json.RawMessage `json:"_meta"`
}

// isModern reports whether a request belongs to the 2026-07-28 era: it is
// server/discover, which only that era has, or its _meta carries the
// protocol version or the client capabilities.
func isModern(m *message) bool {
	if m.Method == methodDiscover {
		return true
	}
	if !bytes.Contains(m.Params, []byte(`"io.modelcontextprotocol/`)) {
		return false
	}
	var p requestMeta
	if json.Unmarshal(m.Params, &p) != nil {
		return false
	}
	_, hasVersion := p.Meta[metaProtocolVersion]
	_, hasCaps := p.Meta[metaClientCapabilities]
	return hasVersion || hasCaps
}

// readModern reads and checks the per-request _meta of a modern request:
// a missing or malformed required field and an unknown log level are
// invalid params; a version not served per request is -32022.
func readModern(params json.RawMessage) (*modern, *RPCError) {
	var p requestMeta
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	var era modern
	raw, ok := p.Meta[metaProtocolVersion]
	if !ok {
		return nil, missingMeta(metaProtocolVersion)
	}
	if json.Unmarshal(raw, &era.version) != nil || era.version == "" {
		return nil, rpcErrorf(CodeInvalidParams, "invalid params: _meta[%q] must be a protocol version string", metaProtocolVersion)
	}
	if !slices.Contains(modernVersions, era.version) {
		data, _ := json.Marshal(map[string]any{"supported": modernVersions, "requested": era.version})
		e := rpcErrorf(CodeUnsupportedProtocolVersion, "unsupported protocol version %q: requests carrying their version in _meta are served at %s", era.version, strings.Join(modernVersions, ", "))
		e.Data = data
		return nil, e
	}
	raw, ok = p.Meta[metaClientCapabilities]
	if !ok {
		return nil, missingMeta(metaClientCapabilities)
	}
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) || json.Unmarshal(raw, &era.caps) != nil {
		return nil, rpcErrorf(CodeInvalidParams, "invalid params: _meta[%q] must be a ClientCapabilities object", metaClientCapabilities)
	}
	era.capsRaw = raw
	if raw, ok = p.Meta[metaLogLevel]; ok {
		var name string
		_ = json.Unmarshal(raw, &name)
		if era.logLevel, era.logs = parseLogLevel(name); !era.logs {
			return nil, rpcErrorf(CodeInvalidParams, "invalid params: _meta[%q] is %s, not a level (want one of %v)", metaLogLevel, raw, logLevels)
		}
	}
	return &era, nil
}

func missingMeta(key string) *RPCError {
	return rpcErrorf(CodeInvalidParams, "invalid params: _meta[%q] is required", key)
}

// modernMethod returns the handler of a method in a modern request.
func modernMethod(name string) (method, *RPCError) {
	if h, ok := modernMethods[name]; ok {
		return h, nil
	}
	if slices.Contains(removedIn20260728, name) {
		return method{}, rpcErrorf(CodeMethodNotFound, "method not found: %s is not part of protocol version %s", name, Version20260728)
	}
	h, ok := methods[name]
	if !ok {
		return method{}, rpcErrorf(CodeMethodNotFound, "method not found: %s", name)
	}
	return h, nil
}

// cacheableMethods are the methods whose results carry caching hints
// (CacheableResult): those of the plugins behind the result (cache.go), or
// the ones that are never wrong, stale at once (ttlMs 0) and private.
var cacheableMethods = []string{methodDiscover, "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"}

// modernResponse encodes the response to a modern request of a method: a
// result gains resultType "complete" (unless it says otherwise), the
// server's identity in _meta and, when cacheable, caching hints; "resource
// not found" is invalid params, as 2026-07-28 has it.
func (s *Server) modernResponse(method string, id json.RawMessage, res any, rpcErr *RPCError) []byte {
	if rpcErr != nil {
		if rpcErr.Code == CodeResourceNotFound {
			e := *rpcErr
			e.Code = CodeInvalidParams
			rpcErr = &e
		}
		return encodeResponse(id, nil, rpcErr)
	}
	var hints cacheHints
	if h, ok := res.(hintedResult); ok {
		res, hints = h.result, h.hints
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return encodeResponse(id, nil, rpcErrorf(CodeInternalError, "internal error: encoding result: %v", err))
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return encodeResponse(id, nil, rpcErrorf(CodeInternalError, "internal error: a result must be an object, got %.40s", raw))
	}
	if _, ok := fields["resultType"]; !ok {
		fields["resultType"] = json.RawMessage(`"complete"`)
	}
	if slices.Contains(cacheableMethods, method) && string(fields["resultType"]) == `"complete"` {
		fields["ttlMs"], _ = json.Marshal(hints.ttl.Milliseconds())
		fields["cacheScope"], _ = json.Marshal(hints.scope())
	}
	meta := map[string]json.RawMessage{}
	if m, ok := fields["_meta"]; ok {
		_ = json.Unmarshal(m, &meta)
	}
	meta[metaServerInfo], _ = json.Marshal(s.info())
	fields["_meta"], _ = json.Marshal(meta)
	return encodeResponse(id, fields, nil)
}

// lacks returns the error a host function gives a plugin that needs a
// client capability the client did not declare, at the path (such as
// "sampling", "tools"). A 2026-07-28 request is then answered with
// MissingRequiredClientCapability (-32021) naming it.
func (r *request) lacks(why string, path ...string) error {
	if r.era != nil {
		r.mu.Lock()
		if r.lacking == nil {
			r.lacking = map[string]any{}
		}
		m := r.lacking
		for _, key := range path {
			next, ok := m[key].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[key] = next
			}
			m = next
		}
		r.mu.Unlock()
	}
	return errClientCannot{why}
}

// missingCapabilities is the -32021 error of a 2026-07-28 request whose
// plugin needed client capabilities it did not declare, or nil.
func (r *request) missingCapabilities() *RPCError {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.lacking) == 0 {
		return nil
	}
	e := rpcErrorf(CodeMissingClientCapability, "missing required client capability: the request needs client capabilities it did not declare in _meta[%q]", metaClientCapabilities)
	e.Data, _ = json.Marshal(map[string]any{"requiredCapabilities": r.lacking})
	return e
}
