package host

import (
	"time"

	"github.com/mcphost/mcphost/abi"
)

// Observer is told of every request the server answers and of every
// session that ends, for metrics and traces (Options.Observer). Served
// runs on the request's goroutine once its response is sent, SessionEnded
// on the goroutine that closes the session: both must be quick and must
// not block.
type Observer interface {
	Served(op Operation)
	SessionEnded(s EndedSession)
	PluginCalled(c PluginCall)
}

// PluginCall is a call of a plugin's export made for a client's request.
type PluginCall struct {
	Plugin, Export string
	// Outcome is how it ended: OutcomeOK, OutcomeToolError, or the
	// CallError's Outcome.
	Outcome string
	// Duration runs from the call to its answer, the wait for an instance
	// included.
	Duration time.Duration
}

// The outcomes of PluginCall. CallError.Outcome names the others (the
// sandbox's limits, the plugin host's policy).
const (
	OutcomeOK              = "ok"               // the export answered
	OutcomeToolError       = "tool_error"       // a tool result with isError
	OutcomeMalformedOutput = "malformed_output" // output that does not decode
	OutcomeError           = "error"            // a failure that names no outcome
)

// EndedSession is a session that ended (its first Session.Close).
type EndedSession struct {
	// Transport is its SessionOptions.Transport.
	Transport string
	// ProtocolVersion is the version it negotiated; empty when it never
	// initialized.
	ProtocolVersion string
	// Duration runs from its opening to its end.
	Duration time.Duration
}

// Operation is a request the server answered, as OpenTelemetry's MCP
// semantic conventions describe one (docs/observability.md).
type Operation struct {
	// Method is the request's JSON-RPC method, e.g. "tools/call", or
	// MethodOther for one the server does not have: a client can send
	// names without end, and each would be a metric's series.
	Method string
	// Tool, Prompt and ResourceURI are what a tools/call, prompts/get or
	// resources/read (or subscribe) named, as the client named it; empty
	// for other methods.
	Tool, Prompt, ResourceURI string
	// ProtocolVersion is the MCP version the request was served at; empty
	// when it was refused before one was known.
	ProtocolVersion string
	// Transport is the session's SessionOptions.Transport.
	Transport string
	// Duration runs from the request's arrival to its response.
	Duration time.Duration
	// ErrorCode is the JSON-RPC error code of the response; 0 for a result.
	ErrorCode int
	// ToolError is true for a tools/call whose result has isError set.
	ToolError bool
}

// MethodOther is Operation.Method for a method the server does not have
// (OpenTelemetry's fallback value).
const MethodOther = "_OTHER"

// The transports of SessionOptions.Transport.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
)

// observe reports a request of method with params p (nil when they did
// not decode), served at version since start, to the server's Observer.
func (c *conn) observe(start time.Time, method, version string, p params, res any, rpcErr *RPCError) {
	o := c.srv.opts.Observer
	if o == nil {
		return
	}
	op := Operation{Method: method, ProtocolVersion: version, Transport: c.transport, Duration: time.Since(start)}
	switch x := p.(type) {
	case *callToolParams:
		op.Tool = x.Name
	case *getPromptParams:
		op.Prompt = x.Name
	case *readResourceParams:
		op.ResourceURI = x.URI
	}
	if rpcErr != nil {
		op.ErrorCode = rpcErr.Code
	} else if r, ok := res.(*abi.CallToolResult); ok && r.IsError {
		op.ToolError = true
	}
	o.Served(op)
}
