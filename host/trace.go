package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/mcphost/mcphost/abi"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Spans, as OpenTelemetry's MCP semantic conventions describe them
// (docs/observability.md): a server span per request, named
// "{mcp.method.name} {target}", and under it an internal span per plugin
// call. A request's parent is the trace context of its params._meta
// (traceparent, tracestate); the context its transport found in the
// request (an HTTP traceparent header) is linked, not its parent.

// startSpan starts the span of a request of method with params p (nil
// when they did not decode) and id that arrived at start, when the server
// has a Tracer; else it returns ctx and nil.
func (c *conn) startSpan(ctx context.Context, start time.Time, method string, p params, id json.RawMessage) (context.Context, trace.Span) {
	tracer := c.srv.opts.Tracer
	if tracer == nil {
		return ctx, nil
	}
	parent := ctx
	if p != nil {
		parent = traceContext.Extract(ctx, metaCarrier(p.metadata()))
	}
	// Without a context in _meta, the transport's is only linked.
	root := parent == ctx || !trace.SpanContextFromContext(parent).IsRemote()
	name := method
	switch x := p.(type) {
	case *callToolParams:
		name += " " + x.Name
	case *getPromptParams:
		name += " " + x.Name
	}
	spanCtx, span := startWith(tracer, parent, name, trace.SpanKindServer, start, root, trace.SpanContextFromContext(ctx))
	if span.IsRecording() { // no sampler of mcphost's reads attributes: only a sampled span gets them
		setAttributes(span, func(attrs []attribute.KeyValue) []attribute.KeyValue {
			return requestAttributes(attrs, ctx, c, method, p, id)
		})
	}
	return spanCtx, span
}

// clientAddressKey keys the client's address in a request's context
// (WithClientAddress).
type clientAddressKey struct{}

// clientAddress is what WithClientAddress keeps.
type clientAddress struct {
	address string
	port    int
}

// Traced reports whether the server starts spans (Options.Tracer): when
// it does not, what a transport would put in a request's context for
// them (WithClientAddress) is not worth its cost.
func (s *Server) Traced() bool { return s.opts.Tracer != nil }

// WithClientAddress returns ctx carrying the network address of the
// client that sent the requests served with it, and its port (0 when
// unknown, as when a proxy named the client): the requests' spans carry
// them as client.address and client.port. Transports over a network set
// it; stdio has none.
func WithClientAddress(ctx context.Context, address string, port int) context.Context {
	return context.WithValue(ctx, clientAddressKey{}, clientAddress{address, port})
}

// spanStarter is a tracer that starts a span without OpenTelemetry's
// options, and what they cost: package tracing's.
type spanStarter interface {
	// StartSpan starts a span as Start does with the options
	// trace.WithSpanKind(kind), trace.WithTimestamp(start) unless start is
	// zero, trace.WithNewRoot() if root, and trace.WithLinks of link if it
	// is valid.
	StartSpan(ctx context.Context, name string, kind trace.SpanKind, start time.Time, root bool, link trace.SpanContext) (context.Context, trace.Span)
}

// startWith starts a span with tracer as spanStarter.StartSpan does.
func startWith(tracer trace.Tracer, ctx context.Context, name string, kind trace.SpanKind, start time.Time, root bool, link trace.SpanContext) (context.Context, trace.Span) {
	if s, ok := tracer.(spanStarter); ok {
		return s.StartSpan(ctx, name, kind, start, root, link)
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(kind)}
	if !start.IsZero() {
		opts = append(opts, trace.WithTimestamp(start))
	}
	if root {
		opts = append(opts, trace.WithNewRoot())
	}
	if link.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: link}))
	}
	return tracer.Start(ctx, name, opts...)
}

// spanAttributes are slices to give a span its attributes in, for reuse:
// a span keeps the attributes, not the slice (trace.Span.SetAttributes
// is variadic, so a slice of the caller's would escape to the heap).
var spanAttributes = sync.Pool{New: func() any {
	attrs := make([]attribute.KeyValue, 0, 12)
	return &attrs
}}

// setAttributes sets on span the attributes that add appends to a slice.
func setAttributes(span trace.Span, add func([]attribute.KeyValue) []attribute.KeyValue) {
	pooled := spanAttributes.Get().(*[]attribute.KeyValue)
	attrs := add((*pooled)[:0])
	span.SetAttributes(attrs...)
	clear(attrs) // the strings go with the request
	*pooled = attrs[:0]
	spanAttributes.Put(pooled)
}

// requestAttributes appends to attrs the attributes of the span of a
// request of method with params p and id on c, that arrived with ctx.
func requestAttributes(attrs []attribute.KeyValue, ctx context.Context, c *conn, method string, p params, id json.RawMessage) []attribute.KeyValue {
	attrs = append(attrs, attribute.String("mcp.method.name", method))
	if id != nil {
		attrs = append(attrs, attribute.String("jsonrpc.request.id", requestID(id)))
	}
	if c.sessionHash != "" {
		attrs = append(attrs, attribute.String("mcp.session.id", c.sessionHash))
	}
	transport, protocol := Network(c.transport)
	attrs = append(attrs, attribute.String("network.transport", transport))
	if protocol != "" {
		attrs = append(attrs, attribute.String("network.protocol.name", protocol))
	}
	if client, ok := ctx.Value(clientAddressKey{}).(clientAddress); ok {
		attrs = append(attrs, attribute.String("client.address", client.address))
		if client.port > 0 {
			attrs = append(attrs, attribute.Int("client.port", client.port))
		}
	}
	switch x := p.(type) {
	case *callToolParams:
		attrs = append(attrs, attribute.String("gen_ai.tool.name", x.Name), attribute.String("gen_ai.operation.name", "execute_tool"))
	case *getPromptParams:
		attrs = append(attrs, attribute.String("gen_ai.prompt.name", x.Name))
	case *readResourceParams:
		attrs = append(attrs, attribute.String("mcp.resource.uri", x.URI))
	}
	return attrs
}

// endSpan ends the span of the request op as the conventions say: a
// server error (ErrorType) sets error.type and the span's status.
func endSpan(span trace.Span, op Operation) {
	if !span.IsRecording() {
		span.End()
		return
	}
	errorType := op.ErrorType()
	setAttributes(span, func(attrs []attribute.KeyValue) []attribute.KeyValue {
		if op.ProtocolVersion != "" {
			attrs = append(attrs, attribute.String("mcp.protocol.version", op.ProtocolVersion))
		}
		if code := op.StatusCode(); code != "" {
			attrs = append(attrs, attribute.String("rpc.response.status_code", code))
		}
		if errorType != "" {
			attrs = append(attrs, attribute.String("error.type", errorType))
		}
		return attrs
	})
	if errorType != "" {
		span.SetStatus(codes.Error, op.ErrorMessage)
	}
	span.End()
}

// traceContext reads the W3C trace context of a request's _meta.
var traceContext propagation.TraceContext

// metaCarrier reads a request's _meta as a propagation carrier: its
// string values under their keys.
type metaCarrier abi.Meta

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

func (m metaCarrier) Set(string, string) {} // never written

func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// requestID is a JSON-RPC id as jsonrpc.request.id: a string's value, or
// a number's digits.
func requestID(id json.RawMessage) string {
	if len(id) > 0 && id[0] == '"' {
		if s, err := strconv.Unquote(string(id)); err == nil {
			return s
		}
	}
	return string(id)
}

// hashSession returns what spans and audit records carry of a session id:
// the first 16 hex digits of its SHA-256. The id itself, without auth, is
// as good as a password.
func hashSession(id string) string {
	if id == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:8])
}

// SessionOf returns what the log lines, spans and audit records of the
// request served with ctx carry of its session's id: the hash of
// hashSession; "" outside a request, or for a request of no session
// with an id.
func SessionOf(ctx context.Context) string {
	if req := requestFrom(ctx); req != nil {
		return req.conn.sessionHash
	}
	return ""
}

// startPluginSpan starts the span of a call of plugin's export under the
// request's span in ctx, when that one is recording; else it returns ctx
// and nil.
func startPluginSpan(ctx context.Context, tracer trace.Tracer, plugin, export string) (context.Context, trace.Span) {
	if tracer == nil || !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, nil
	}
	ctx, span := startWith(tracer, ctx, export+" "+plugin, trace.SpanKindInternal, time.Time{}, false, trace.SpanContext{})
	if span.IsRecording() { // as a request's span, its attributes once sampled
		setAttributes(span, func(attrs []attribute.KeyValue) []attribute.KeyValue {
			return append(attrs, attribute.String("mcphost.plugin.name", plugin), attribute.String("mcphost.plugin.export", export))
		})
	}
	return ctx, span
}

// endPluginSpan ends the span of a plugin call that ended with outcome
// (PluginCall.Outcome): one but ok and tool_error is an error.
func endPluginSpan(span trace.Span, outcome string, err error) {
	setAttributes(span, func(attrs []attribute.KeyValue) []attribute.KeyValue {
		return append(attrs, attribute.String("mcphost.plugin.outcome", outcome))
	})
	if outcome != OutcomeOK && outcome != OutcomeToolError {
		msg := outcome
		if err != nil {
			msg = err.Error()
		}
		span.SetStatus(codes.Error, msg)
	}
	span.End()
}
