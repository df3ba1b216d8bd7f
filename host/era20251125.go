package host

import (
	"context"
	"encoding/json"

	"github.com/mcphost/mcphost/abi"
)

// era20251125 serves the requests of a session that initialize began, at
// the version it negotiated: 2024-11-05, 2025-03-26, 2025-06-18 or
// 2025-11-25. What the client declared, its log level and the requests
// the server sends it are the session's.
type era20251125 struct{ sess *Session }

func (e era20251125) version() string                  { return e.sess.Version() }
func (e era20251125) capabilities() clientCapabilities { return e.sess.capabilities() }
func (e era20251125) wantsLog(lvl logLevel) bool       { return e.sess.wantsLog(lvl) }

func (e era20251125) rawCapabilities() json.RawMessage {
	rec, _ := e.sess.record()
	return rec.ClientCaps
}

// method returns the handler of a method once the session is initialized:
// before, only ping is served.
func (e era20251125) method(name string) (method, *RPCError) {
	if rpcErr := e.sess.checkLifecycle(name); rpcErr != nil {
		return method{}, rpcErr
	}
	h, ok := methods[name]
	if !ok {
		return method{}, rpcErrorf(CodeMethodNotFound, "method not found: %s", name)
	}
	return h, nil
}

// awaitStartup does nothing: initialize waited for the plugins.
func (era20251125) awaitStartup(context.Context, *request) {}

// openRound opens none: a plugin asks the client with a request of its own.
func (era20251125) openRound(context.Context, *Server, string, params) (*inputRound, *RPCError) {
	return nil, nil
}

// ask sends the client a request on the stream of the request being
// served, and waits for its answer.
func (e era20251125) ask(ctx context.Context, r *request, _, method string, params any) (json.RawMessage, error) {
	return e.sess.callClient(ctx, r.reply, method, params)
}

// lacks refuses the host function; the request goes on.
func (era20251125) lacks(_ *request, why string, _ []string) error { return errClientCannot{why} }

// unmet refuses the request with invalid params.
func (era20251125) unmet(_ *request, kind, name string, lack map[string]any) error {
	return rpcErrorf(CodeInvalidParams, "%s %q needs client capabilities this client did not declare: %s", kind, name, mustJSON(lack))
}

// callTool runs the call, as a task when its params ask for one and the
// tool allows it (task.go).
func (era20251125) callTool(ctx context.Context, r *request, e *toolEntry, p abi.CallToolParams, task *taskParams) (any, error) {
	task, err := toolTask(r, e, task)
	if err != nil {
		return nil, err
	}
	if task != nil {
		return startTask(r, e.plugin, task, "tools/call "+p.Name, func(ctx context.Context, req *request) (any, error) { return runToolCall(ctx, req, e, p) })
	}
	return runToolCall(ctx, r, e, p)
}

// encode writes a plain JSON-RPC response: these revisions have no
// caching hints.
func (era20251125) encode(_ *Server, _ string, id json.RawMessage, res any, _ *cacheHints, rpcErr *RPCError) []byte {
	return encodeResponse(id, res, rpcErr)
}

// session returns the session of a request served at era20251125: the
// methods that only those revisions have (logging/setLevel,
// resources/subscribe, tasks/result…) call it, and only their method
// table holds them.
func (r *request) session() *Session { return r.era.(era20251125).sess }

// tasks is the form of 2025-11-25 tasks (task.go).
func (era20251125) tasks() taskWire { return tasks20251125{} }

// methods maps request methods to their handlers, for initialized
// sessions (era20251125.method); a 2026-07-28 request has them too, less
// those it removed and with its own (methods20260728).
var methods = map[string]method{
	"ping":                     handle(handlePing),
	"tools/list":               handle(handleListTools),
	"tools/call":               handle(handleCallTool),
	"prompts/list":             handle(handleListPrompts),
	"prompts/get":              handle(handleGetPrompt),
	"resources/list":           handle(handleListResources),
	"resources/templates/list": handle(handleListResourceTemplates),
	"resources/read":           handle(handleReadResource),
	"completion/complete":      handle(handleComplete),
	"logging/setLevel":         handle(handleSetLevel),
	"resources/subscribe":      handle(handleSubscribe),
	"resources/unsubscribe":    handle(handleUnsubscribe),
	"tasks/get":                handle(handleGetTask),
	"tasks/result":             handle(handleTaskResult),
	"tasks/list":               handle(handleListTasks),
	"tasks/cancel":             handle(handleCancelTask),
}

func handlePing(context.Context, *request, *pingParams) (any, error) {
	return struct{}{}, nil
}
