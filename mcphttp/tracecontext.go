package mcphttp

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/propagation"
)

// withTraceHeader returns ctx with the trace context of r's traceparent
// (and tracestate) header, when it has a valid one: the engine links a
// request's span to it, and takes its parent from the request's _meta,
// as OpenTelemetry's MCP conventions say. A request without the header
// costs nothing.
func withTraceHeader(ctx context.Context, r *http.Request) context.Context {
	if r.Header.Get("traceparent") == "" {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(r.Header))
}
