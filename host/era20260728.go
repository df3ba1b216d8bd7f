package host

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcphost/mcphost/abi"
)

// The 2026-07-28 era is stateless: a request carries its protocol version
// and its client's capabilities in _meta and is served on its own, with no
// initialize before it. Such requests and the requests of a legacy
// session, which initialize began, share one stream or endpoint; a
// request's _meta says which era it belongs to (isPerRequest).

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
// no longer has: they are method not found in a 2026-07-28 request.
var removedIn20260728 = []string{
	"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe",
	"tasks/result", "tasks/list",
}

// methods20260728 are the methods a 2026-07-28 request has that a legacy session
// does not, or serves otherwise.
var methods20260728 = map[string]method{
	methodDiscover: handle(handleDiscover),
	methodListen:   listenMethod(),
	"tasks/get":    handle(handleGetTask20260728),
	"tasks/update": handle(handleUpdateTask),
	"tasks/cancel": handle(handleCancelTask20260728),
}

// era20260728 serves a 2026-07-28 request, at what it declares in its
// _meta.
type era20260728 struct {
	ver     string
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

// isPerRequest reports whether a request belongs to the 2026-07-28 era: it is
// server/discover, which only that era has, or its _meta carries the
// protocol version or the client capabilities.
func isPerRequest(m *message) bool {
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

// readMeta20260728 reads and checks the per-request _meta of a 2026-07-28 request:
// a missing or malformed required field and an unknown log level are
// invalid params; a version not served per request is -32022.
func readMeta20260728(params json.RawMessage) (*era20260728, *RPCError) {
	var p requestMeta
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	var era era20260728
	raw, ok := p.Meta[metaProtocolVersion]
	if !ok {
		return nil, missingMeta(metaProtocolVersion)
	}
	if json.Unmarshal(raw, &era.ver) != nil || era.ver == "" {
		return nil, rpcErrorf(CodeInvalidParams, "invalid params: _meta[%q] must be a protocol version string", metaProtocolVersion)
	}
	if !slices.Contains(perRequestVersions, era.ver) {
		data, _ := json.Marshal(map[string]any{"supported": perRequestVersions, "requested": era.ver})
		e := rpcErrorf(CodeUnsupportedProtocolVersion, "unsupported protocol version %q: requests carrying their version in _meta are served at %s", era.ver, strings.Join(perRequestVersions, ", "))
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

// method20260728 returns the handler of a method in a 2026-07-28 request.
func method20260728(name string) (method, *RPCError) {
	if h, ok := methods20260728[name]; ok {
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

// response20260728 encodes the response to a 2026-07-28 request of a method: a
// result gains resultType "complete" (unless it says otherwise), the
// server's identity in _meta and, when cacheable, caching hints; "resource
// not found" is invalid params, as 2026-07-28 has it.
func (s *Server) response20260728(method string, id json.RawMessage, res any, hints *cacheHints, rpcErr *RPCError) []byte {
	if rpcErr != nil {
		if rpcErr.Code == CodeResourceNotFound {
			e := *rpcErr
			e.Code = CodeInvalidParams
			rpcErr = &e
		}
		return encodeResponse(id, nil, rpcErr)
	}
	if hints == nil {
		hints = &cacheHints{}
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

func (e *era20260728) version() string                  { return e.ver }
func (e *era20260728) capabilities() clientCapabilities { return e.caps }
func (e *era20260728) rawCapabilities() json.RawMessage { return e.capsRaw }

// wantsLog reports whether the request takes log messages of lvl: none
// unless its _meta names a level.
func (e *era20260728) wantsLog(lvl logLevel) bool { return e.logs && lvl >= e.logLevel }

func (e *era20260728) method(name string) (method, *RPCError) { return method20260728(name) }

// awaitStartup waits as initialize would for the plugins loading at
// start-up, as no initialize did. Discovery does not (handleDiscover).
func (e *era20260728) awaitStartup(ctx context.Context, r *request) {
	if r.method != methodDiscover {
		r.srv.awaitStartup(ctx)
	}
}

// openRound opens the input round of a method that may be answered
// input_required.
func (e *era20260728) openRound(ctx context.Context, s *Server, method string, p params) (*inputRound, *RPCError) {
	rp, ok := p.(retryable)
	if !ok || !isMRTRMethod(method) {
		return nil, nil
	}
	return s.openRound(ctx, method, rp)
}

// ask answers a plugin's question from the retry the client sent with its
// answers, or ends the request input_required (mrtr.go); a method that
// cannot be answered so cannot ask.
func (e *era20260728) ask(_ context.Context, r *request, key, method string, params any) (json.RawMessage, error) {
	if r.input == nil {
		return nil, errClientCannot{method + " during " + r.method + ": in protocol " + e.ver + " only " + fmt.Sprint(mrtrMethods) + " may ask the client (input_required)"}
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	if key == "" {
		key = r.input.autoKey(method)
	}
	return r.input.answer(key, method, raw)
}

// lacks refuses the host function and records the capability at path
// ("sampling", "tools"…): the request is then answered with
// MissingRequiredClientCapability (-32021) naming it.
func (e *era20260728) lacks(r *request, why string, path []string) error {
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
	return errClientCannot{why}
}

// unmet records what the request lacks, for its -32021 error.
func (e *era20260728) unmet(r *request, kind, name string, lack map[string]any) error {
	r.mu.Lock()
	r.lacking = mergeCaps(r.lacking, lack)
	r.mu.Unlock()
	return errClientCannot{kind + " " + name + " needs client capabilities the request did not declare"}
}

// callTool runs the call, which becomes a task of the tasks extension
// when it outlives TaskAfter (task20260728.go); task params are ignored.
func (e *era20260728) callTool(_ context.Context, r *request, t *toolEntry, p abi.CallToolParams, _ *taskParams) (any, error) {
	return callTool20260728(r, t, p)
}

// encode writes the response with the 2026-07-28 result fields.
func (e *era20260728) encode(s *Server, method string, id json.RawMessage, res any, hints *cacheHints, rpcErr *RPCError) []byte {
	return s.response20260728(method, id, res, hints, rpcErr)
}

// lacks returns the error a host function gives a plugin that needs a
// client capability the client did not declare, at the path (such as
// "sampling", "tools").
func (r *request) lacks(why string, path ...string) error { return r.era.lacks(r, why, path) }

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

// tasks is the form of the tasks extension (task20260728.go).
func (e *era20260728) tasks() taskWire { return tasks20260728{} }
