package host

import (
	"context"
	"encoding/json"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// Denial is something the server refused a request, as Observer.Denied is
// told of it: for the audit trail and the metrics.
type Denial struct {
	// Reason is what was denied: DeniedHidden, DeniedRateLimit,
	// DeniedEgress, DeniedHostFunction, or another's (ReportDenied).
	Reason string
	// Detail says what, in words: the refusal's message.
	Detail string
	// Method and Item are the request and the tool, prompt or resource
	// it named; Plugin the plugin it concerns, when known.
	Method, Item, Plugin string
	// Subject, Session (hashed), ProtocolVersion and Transport are the
	// request's, and TraceID its trace's when it has a span.
	Subject, Session, ProtocolVersion, Transport, TraceID string
}

// The reasons of Denial the engine and the plugin host report.
const (
	// DeniedHidden: a request named an item of a plugin that its token's
	// scopes or its endpoint do not see; it was answered as unknown.
	DeniedHidden = "hidden"
	// DeniedRateLimit: a plugin's calls_per_second refused the call.
	DeniedRateLimit = "rate_limited"
	// DeniedEgress: a plugin's grants refused its HTTP request.
	DeniedEgress = "egress"
	// DeniedHostFunction: a plugin called a host function it is not
	// granted.
	DeniedHostFunction = "host_function"
)

// callRecord is what a request learned of the last plugin call it made,
// for Observer.Served.
type callRecord struct {
	plugin    *Plugin
	outcome   string
	wait, run time.Duration
}

// ReportCallTimes tells the request that ctx serves, if any, how long the
// plugin call it is making waited for an instance and ran on it: the
// plugin host learns it from its sandbox, and the Operation of the
// request carries it.
func ReportCallTimes(ctx context.Context, wait, run time.Duration) {
	if req := requestFrom(ctx); req != nil {
		req.mu.Lock()
		req.call.wait, req.call.run = wait, run
		req.mu.Unlock()
	}
}

// ReportDenied tells the server's Observer that plugin was denied reason
// (DeniedEgress, DeniedHostFunction, ...) while it served the request of
// ctx; outside a request, nothing.
func ReportDenied(ctx context.Context, plugin, reason, detail string) {
	if req := requestFrom(ctx); req != nil {
		req.denied(plugin, reason, detail, "")
	}
}

// denied reports a denial during the request: of plugin (empty when
// none), for reason, concerning item ("" for the request's own).
func (req *request) denied(plugin, reason, detail, item string) {
	o := req.srv.opts.Observer
	if o == nil {
		return
	}
	d := Denial{Reason: reason, Detail: detail, Method: req.method, Item: item, Plugin: plugin,
		Subject: req.subject, Session: req.conn.sessionHash, ProtocolVersion: req.version(),
		Transport: req.conn.transport}
	if req.srv.opts.Tracer != nil { // else the context's trace is the transport's, not a span's
		d.TraceID = traceID(req.ctx)
	}
	o.Denied(d)
}

// deniedHidden reports that the request named the item of kind (tool,
// prompt, resource) of plugin, which it does not see.
func (req *request) deniedHidden(plugin, kind, item string) {
	req.denied(plugin, DeniedHidden, kind+" "+item+" is not visible to the request (its token's scopes or its endpoint)", item)
}

// traceID returns the trace id of the span in ctx (the request's, under
// which the denial happened), "" for none.
func traceID(ctx context.Context) string {
	if sc := trace.SpanContextFromContext(ctx); sc.HasTraceID() {
		return sc.TraceID().String()
	}
	return ""
}

// auditArguments returns the arguments of a tools/call as an audit record
// may carry them: only when the plugin that served it audits arguments,
// its secret values redacted.
func auditArguments(p params, call callRecord) json.RawMessage {
	x, ok := p.(*callToolParams)
	if !ok || call.plugin == nil || call.plugin.redactArguments == nil || len(x.Arguments) == 0 {
		return nil
	}
	redacted := call.plugin.redactArguments(string(x.Arguments))
	if !json.Valid([]byte(redacted)) { // a secret stood where JSON had no string
		return json.RawMessage(`"[REDACTED]"`)
	}
	return json.RawMessage(redacted)
}
