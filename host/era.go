package host

import (
	"context"
	"encoding/json"

	"github.com/mcphost/mcphost/abi"
)

// era is what differs between the protocol's revisions for one request:
// where its version and its client's capabilities come from, which log
// messages its client takes, how a plugin's question reaches the client,
// what a missing client capability does, how a tools/call runs and what
// the response carries. Each revision family has one implementation,
// chosen once, when the request arrives (Session.dispatch):
//   - era20251125, the revisions 2024-11-05 to 2025-11-25, whose session
//     negotiated everything at initialize (era20251125.go);
//   - *era20260728, the 2026-07-28 revision, whose every request says it
//     all in its _meta (era20260728.go).
type era interface {
	// version is the protocol version the request is served at.
	version() string
	// capabilities and rawCapabilities are what the client declared,
	// decoded and as it sent them.
	capabilities() clientCapabilities
	rawCapabilities() json.RawMessage
	// wantsLog reports whether the client takes log messages of lvl.
	wantsLog(lvl logLevel) bool
	// method returns the handler of a method, or the error of a method
	// the era does not have or does not take yet.
	method(name string) (method, *RPCError)
	// awaitStartup waits, before the request is served, for the plugins
	// loading at start-up, where no initialize waited for them.
	awaitStartup(ctx context.Context, r *request)
	// openRound opens the input round of a request that may be answered
	// input_required (mrtr.go), or returns nil where there is none.
	openRound(ctx context.Context, s *Server, method string, p params) (*inputRound, *RPCError)
	// ask puts a plugin's question (sampling, elicitation, roots) to the
	// client; key "" lets the host number it.
	ask(ctx context.Context, r *request, key, method string, params any) (json.RawMessage, error)
	// lacks is the error of a host function that needs a client
	// capability, at path, that the client did not declare.
	lacks(r *request, why string, path []string) error
	// unmet is the error of using an item (kind, name) whose requirement
	// lack the client does not meet (requires.go).
	unmet(r *request, kind, name string, lack map[string]any) error
	// callTool runs a tools/call whose params were checked.
	callTool(ctx context.Context, r *request, e *toolEntry, p abi.CallToolParams, task *taskParams) (any, error)
	// tasks is the wire form of the tasks the request creates and finds
	// (task.go).
	tasks() taskWire
	// encode writes the response to a request of method: its result, with
	// its caching hints (nil: none) where the era has them, or its error.
	encode(s *Server, method string, id json.RawMessage, res any, hints *cacheHints, rpcErr *RPCError) []byte
}
