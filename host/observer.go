package host

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/mcphost/mcphost/abi"
	"go.opentelemetry.io/otel/trace"
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
	// Denied is told of each thing the server refused a request
	// (audit.go): a hidden item, a rate limit, a plugin's denied egress or
	// host function.
	Denied(d Denial)
}

// PluginCall is a call of a plugin's export made for a client's request.
type PluginCall struct {
	Plugin, Export string
	// Outcome is how it ended: OutcomeOK, OutcomeToolError, or the
	// CallError's Outcome.
	Outcome string
	// Duration runs from the call to its answer, the wait for an instance
	// included; Ended is when the answer came.
	Duration time.Duration
	Ended    time.Time
	// Error is what the call's failure said, as the client reads it; ""
	// when it did not fail.
	Error string
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
	// ErrorMessage is the JSON-RPC error's message, for a span's status.
	ErrorMessage string
	// ToolError is true for a tools/call whose result has isError set.
	ToolError bool

	// Who asked, for the audit trail: the authenticated subject ("" for
	// none), the client's name (its clientInfo), the session's id hashed
	// ("" for none), and the request's trace id when it has a span.
	Subject, Client, Session, TraceID string
	// Plugin is the plugin the request's last plugin call went to, with
	// its outcome (PluginCall.Outcome) and how long it waited for an
	// instance and ran (zero when unknown); empty when it called none.
	Plugin, PluginOutcome string
	Wait, Run             time.Duration
	// Arguments are a tools/call's arguments when its plugin audits them
	// (WithAuditArguments), redacted; nil otherwise.
	Arguments json.RawMessage
}

// clientMistakes are the JSON-RPC error codes that the conventions do not
// count as a server's errors: parse error, invalid request, method not
// found, invalid params, resource not found.
var clientMistakes = map[int]bool{
	CodeParseError:       true,
	CodeInvalidRequest:   true,
	CodeMethodNotFound:   true,
	CodeInvalidParams:    true,
	CodeResourceNotFound: true,
}

// ErrorType is the conventions' error.type of the request: its JSON-RPC
// error code, unless the client's mistake; "tool_error" for a tool result
// with isError; "" when it did not fail on the server's side.
func (op Operation) ErrorType() string {
	switch {
	case op.ErrorCode != 0 && !clientMistakes[op.ErrorCode]:
		return strconv.Itoa(op.ErrorCode)
	case op.ErrorCode == 0 && op.ToolError:
		return "tool_error"
	}
	return ""
}

// StatusCode is the conventions' rpc.response.status_code: the JSON-RPC
// error code of the response, "" for a result.
func (op Operation) StatusCode() string {
	if op.ErrorCode == 0 {
		return ""
	}
	return strconv.Itoa(op.ErrorCode)
}

// Network returns the conventions' network.transport and
// network.protocol.name of a transport (SessionOptions.Transport): pipe
// for stdio; tcp and http for HTTP.
func Network(transport string) (network, protocol string) {
	switch transport {
	case TransportStdio:
		return "pipe", ""
	case TransportHTTP:
		return "tcp", "http"
	}
	return "", ""
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
// not decode), served at version since start, to the server's Observer,
// and ends its span (nil when it has none).
//
// req is the request, nil when it was refused before it started; ctx is
// its context, or the one it arrived with.
func (c *conn) observe(ctx context.Context, req *request, start time.Time, span trace.Span, method, version string, p params, res any, rpcErr *RPCError) {
	o := c.srv.opts.Observer
	if o == nil && span == nil {
		return
	}
	op := Operation{Method: method, ProtocolVersion: version, Transport: c.transport, Duration: time.Since(start),
		Session: c.sessionHash}
	if span != nil { // no span, no trace: the context's lookup is spared
		if sc := span.SpanContext(); sc.HasTraceID() {
			op.TraceID = sc.TraceID().String()
		}
	}
	if o != nil {
		op.Client = c.clientName(p)
		if req != nil {
			op.Subject = req.subject
		} else {
			op.Subject = c.srv.subject(ctx)
		}
	}
	if req != nil {
		req.mu.Lock()
		call := req.call
		req.mu.Unlock()
		if call.plugin != nil {
			op.Plugin, op.PluginOutcome, op.Wait, op.Run = call.plugin.Name, call.outcome, call.wait, call.run
			op.Arguments = auditArguments(p, call)
		}
	}
	switch x := p.(type) {
	case *callToolParams:
		op.Tool = x.Name
	case *getPromptParams:
		op.Prompt = x.Name
	case *readResourceParams:
		op.ResourceURI = x.URI
	}
	if rpcErr != nil {
		op.ErrorCode, op.ErrorMessage = rpcErr.Code, rpcErr.Message
	} else if r, ok := res.(*abi.CallToolResult); ok && r.IsError {
		op.ToolError = true
	}
	if o != nil {
		o.Served(op)
	}
	if span != nil {
		endSpan(span, op)
	}
}
