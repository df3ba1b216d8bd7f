package mcphttp

import (
	"context"
	"net"
	"net/http"
	"strconv"

	"github.com/mcphost/mcphost/host"
	"go.opentelemetry.io/otel/propagation"
)

// requestContext returns ctx with what the engine's span of request r
// carries from its HTTP request: the client's address (clientIP: a
// trusted proxy's X-Forwarded-For is believed), and the trace context of
// its traceparent (and tracestate) header when it has a valid one, which
// the engine links the span to, taking its parent from the request's
// _meta, as OpenTelemetry's MCP conventions say. The address is found
// only for a server that starts spans (host.Server.Traced).
func (h *Handler) requestContext(ctx context.Context, r *http.Request) context.Context {
	if h.srv.Traced() {
		if ip, isPeer, ok := h.clientIP(r); ok {
			port := 0
			if isPeer {
				port = peerPort(r.RemoteAddr)
			}
			ctx = host.WithClientAddress(ctx, ip.String(), port)
		}
	}
	if r.Header.Get("traceparent") == "" {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(r.Header))
}

// peerPort is the port of a peer's host:port address, 0 when it has none.
func peerPort(addr string) int {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return 0
	}
	port, _ := strconv.Atoi(p)
	return port
}
