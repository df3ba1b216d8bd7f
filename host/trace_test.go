package host

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/poll"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// The client's trace context, in _meta.
const (
	clientTraceID = "0af7651916cd43dd8448eb211c80319c"
	clientSpanID  = "00f067aa0ba902b7"
	traceparent   = "00-" + clientTraceID + "-" + clientSpanID + "-01"
)

// tracedHarness is a stdio session, with the id sessionID, of a server
// whose spans rec records; its plugin p has a tool ok, a tool bad that
// answers a tool error, and a tool boom that fails.
func tracedHarness(t *testing.T, sessionID string) (*harness, *tracetest.SpanRecorder) {
	t.Helper()
	p := NewPlugin("p", "", fakeRuntime{
		abi.ExportListTools: returns(abi.ListToolsResult{Tools: []abi.Tool{{Name: "ok", InputSchema: objectSchema}, {Name: "bad", InputSchema: objectSchema}, {Name: "boom", InputSchema: objectSchema}}}),
		abi.ExportCallTool: func(_ context.Context, in []byte) ([]byte, error) {
			var input struct{ Request abi.CallToolParams }
			_ = json.Unmarshal(in, &input)
			if input.Request.Name == "boom" {
				return nil, &CallError{Reason: "plugin trapped", Message: "boom", Outcome: "trap"}
			}
			return json.Marshal(abi.CallToolResult{Content: []abi.Content{{Type: abi.ContentText, Text: "x"}}, IsError: input.Request.Name == "bad"})
		},
	})
	rec := tracetest.NewSpanRecorder()
	provider := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	srv := NewServer(Options{Tracer: provider.Tracer("test")}, BuildCatalog(t.Context(), []*Plugin{p}, nil))
	out := newRecorder()
	h := &harness{srv: srv, sess: srv.OpenSession(out, SessionOptions{Transport: TransportStdio, ID: sessionID}), out: out}
	t.Cleanup(h.sess.Close)
	return h, rec
}

// ended waits for n spans to end and returns them, by name.
func ended(t *testing.T, rec *tracetest.SpanRecorder, n int) map[string]sdktrace.ReadOnlySpan {
	t.Helper()
	defer func() {
		if t.Failed() {
			for _, s := range rec.Ended() {
				t.Logf("ended: %s %v", s.Name(), attrs(s))
			}
		}
	}()
	poll.Until(t, 5*time.Second, "the spans ended", func() bool { return len(rec.Ended()) >= n })
	out := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		out[s.Name()] = s
	}
	if len(rec.Ended()) != n {
		t.Errorf("%d spans ended, want %d: %v", len(rec.Ended()), n, out)
	}
	return out
}

// attrs returns a span's attributes as strings.
func attrs(s sdktrace.ReadOnlySpan) map[string]string {
	out := map[string]string{}
	for _, kv := range s.Attributes() {
		out[string(kv.Key)] = kv.Value.Emit()
	}
	return out
}

// wantAttrs fails unless the span has each of want's attributes, and none
// of the keys of absent.
func wantAttrs(t *testing.T, s sdktrace.ReadOnlySpan, want map[string]string, absent ...string) {
	t.Helper()
	got := attrs(s)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("span %q: %s = %q, want %q (all: %v)", s.Name(), k, got[k], v, got)
		}
	}
	for _, k := range absent {
		if v, ok := got[k]; ok {
			t.Errorf("span %q has %s = %q, want none", s.Name(), k, v)
		}
	}
}

// A tools/call is a server span named "tools/call {tool}" with the
// conventions' attributes, whose parent is the trace context of its _meta;
// the session id is there only hashed; the plugin call is a child span
// with its plugin, export and outcome.
func TestARequestIsAServerSpanUnderItsMetaTraceContext(t *testing.T) {
	h, rec := tracedHarness(t, "secret-session-id")
	h.init(t, Version20251125)
	res := h.call(t, 1, "tools/call", map[string]any{"name": "ok", "arguments": map[string]any{"n": 1}, "_meta": map[string]any{"traceparent": traceparent}})
	if res["error"] != nil {
		t.Fatal(res)
	}
	spans := ended(t, rec, 3) // initialize, tools/call, the plugin call
	call, plugin := spans["tools/call ok"], spans["call_tool p"]
	if call == nil || plugin == nil {
		t.Fatalf("spans %v: want tools/call ok and call_tool p", spans)
	}
	if call.SpanKind() != trace.SpanKindServer || call.Parent().TraceID().String() != clientTraceID || call.Parent().SpanID().String() != clientSpanID || !call.Parent().IsRemote() {
		t.Errorf("tools/call: kind %v, parent %v; want a server span under the client's %s", call.SpanKind(), call.Parent(), traceparent)
	}
	wantAttrs(t, call, map[string]string{
		"mcp.method.name": "tools/call", "gen_ai.tool.name": "ok", "gen_ai.operation.name": "execute_tool",
		"jsonrpc.request.id": "1", "mcp.protocol.version": Version20251125, "network.transport": "pipe",
		"mcp.session.id": hashSession("secret-session-id"),
	}, "error.type", "rpc.response.status_code", "network.protocol.name", "client.address", "client.port")
	for _, s := range rec.Ended() {
		for _, kv := range s.Attributes() {
			if strings.Contains(kv.Value.Emit(), "secret-session-id") {
				t.Errorf("span %q carries the session id in %s", s.Name(), kv.Key)
			}
		}
	}
	if plugin.Parent().SpanID() != call.SpanContext().SpanID() || plugin.SpanKind() != trace.SpanKindInternal {
		t.Errorf("the plugin call's parent %v, kind %v: want an internal span under tools/call", plugin.Parent(), plugin.SpanKind())
	}
	wantAttrs(t, plugin, map[string]string{"mcphost.plugin.name": "p", "mcphost.plugin.export": "call_tool", "mcphost.plugin.outcome": "ok"})
	if init := spans["initialize"]; init == nil || init.Parent().IsValid() {
		t.Errorf("initialize: %v, want a root span", init)
	}
}

// A request's outcome is on its span as the conventions say: a tool error
// (also a failed plugin call's) is error.type with an error status; the client's
// mistakes (an unknown tool, an unknown method) only
// rpc.response.status_code; a failed plugin call's span says how it
// failed.
func TestSpanStatusFollowsTheConventions(t *testing.T) {
	h, rec := tracedHarness(t, "")
	h.init(t, Version20251125)
	h.call(t, 1, "tools/call", map[string]any{"name": "bad", "arguments": map[string]any{"n": 1}})
	h.call(t, 2, "tools/call", map[string]any{"name": "boom", "arguments": map[string]any{"n": 1}})
	h.call(t, 3, "tools/call", map[string]any{"name": "nope"})
	h.call(t, 4, "no/such/method", map[string]any{})
	spans := ended(t, rec, 7) // initialize, four requests, two plugin calls
	for name, want := range map[string]struct {
		errorType, status string
		code              codes.Code
	}{
		"tools/call bad":  {"tool_error", "", codes.Error},
		"tools/call boom": {"tool_error", "", codes.Error}, // a failed call is a tool result with isError
		"tools/call nope": {"", "-32602", codes.Unset},
		"_OTHER":          {"", "-32601", codes.Unset},
	} {
		s := spans[name]
		if s == nil {
			t.Errorf("no span %q among %v", name, spans)
			continue
		}
		got := attrs(s)
		if got["error.type"] != want.errorType || got["rpc.response.status_code"] != want.status || s.Status().Code != want.code {
			t.Errorf("%s: error.type %q, status code %q, span status %v; want %q, %q, %v", name, got["error.type"], got["rpc.response.status_code"], s.Status().Code, want.errorType, want.status, want.code)
		}
		if _, ok := got["mcp.session.id"]; ok {
			t.Errorf("%s: a session without an id has mcp.session.id %q", name, got["mcp.session.id"])
		}
	}
	if s := spans["call_tool p"]; s == nil {
		t.Error("no plugin call span")
	}
	var outcomes []string
	for _, s := range rec.Ended() {
		if s.Name() == "call_tool p" {
			outcomes = append(outcomes, attrs(s)["mcphost.plugin.outcome"]+"/"+s.Status().Code.String())
		}
	}
	if strings.Join(outcomes, " ") != "tool_error/Unset trap/Error" {
		t.Errorf("plugin call spans: %v, want tool_error/Unset then trap/Error", outcomes)
	}
}

// The trace context a transport found in the request (an HTTP traceparent
// header) is linked, not the parent: without _meta's context the request
// starts a trace of its own; with it, _meta's is the parent, in either
// era.
func TestTheTransportsTraceContextIsALink(t *testing.T) {
	header := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled, Remote: true})
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), header)
	h, rec := tracedHarness(t, "")
	h.ask(t, ctx, 1, "tools/list", nil, modernMeta(`{}`, ""))
	h.ask(t, ctx, 2, "tools/list", map[string]any{}, `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"traceparent":"`+traceparent+`"}`)
	poll.Until(t, 5*time.Second, "two spans", func() bool { return len(rec.Ended()) == 2 })
	for i, s := range rec.Ended() {
		links := s.Links()
		if len(links) != 1 || links[0].SpanContext.TraceID() != header.TraceID() {
			t.Errorf("request %d: links %v, want the header's context", i+1, links)
		}
		wantAttrs(t, s, map[string]string{"mcp.protocol.version": "2026-07-28"}, "mcp.session.id")
	}
	// Each span ends after its response is out: they may end in either
	// order.
	first, second := rec.Ended()[0], rec.Ended()[1]
	if attrs(first)["jsonrpc.request.id"] != "1" {
		first, second = second, first
	}
	if first.Parent().IsValid() || first.SpanContext().TraceID() == header.TraceID() {
		t.Errorf("without _meta's context: parent %v, trace %v; want a new root", first.Parent(), first.SpanContext().TraceID())
	}
	if second.Parent().TraceID().String() != clientTraceID {
		t.Errorf("with _meta's context: parent %v, want _meta's", second.Parent())
	}
}

// A request's span carries the client's address and port its transport
// put in its context (WithClientAddress): no port when the transport
// knows none (a proxy named the client), nothing over stdio (the other
// tests' requests).
func TestARequestsSpanNamesItsClientsAddress(t *testing.T) {
	h, rec := tracedHarness(t, "")
	h.ask(t, WithClientAddress(context.Background(), "192.0.2.7", 51234), 1, "tools/list", nil, modernMeta(`{}`, ""))
	h.ask(t, WithClientAddress(context.Background(), "2001:db8::1", 0), 2, "tools/list", nil, modernMeta(`{}`, ""))
	poll.Until(t, 5*time.Second, "two spans", func() bool { return len(rec.Ended()) == 2 })
	first, second := rec.Ended()[0], rec.Ended()[1] // in either order
	if attrs(first)["jsonrpc.request.id"] != "1" {
		first, second = second, first
	}
	wantAttrs(t, first, map[string]string{"client.address": "192.0.2.7", "client.port": "51234"})
	wantAttrs(t, second, map[string]string{"client.address": "2001:db8::1"}, "client.port")
}

// SessionOf names, within a request, the hash of its session's id that
// spans and audit records carry; nothing outside a request or for a
// session without an id.
func TestSessionOfNamesTheRequestsHashedSession(t *testing.T) {
	seen := make(chan string, 2)
	p := NewPlugin("p", "", fakeRuntime{
		abi.ExportListTools: returns(abi.ListToolsResult{Tools: []abi.Tool{{Name: "who", InputSchema: objectSchema}}}),
		abi.ExportCallTool: func(ctx context.Context, _ []byte) ([]byte, error) {
			seen <- SessionOf(ctx)
			return json.Marshal(abi.CallToolResult{Content: []abi.Content{{Type: abi.ContentText, Text: "x"}}})
		},
	})
	srv := NewServer(Options{}, BuildCatalog(t.Context(), []*Plugin{p}, nil))
	for _, id := range []string{"session-42", ""} {
		out := newRecorder()
		h := &harness{srv: srv, sess: srv.OpenSession(out, SessionOptions{Transport: TransportHTTP, ID: id}), out: out}
		h.init(t, Version20251125)
		res := h.call(t, 1, "tools/call", map[string]any{"name": "who", "arguments": map[string]any{"n": 1}})
		if res["error"] != nil {
			t.Fatalf("session %q: %v", id, res)
		}
		select {
		case got := <-seen:
			if want := hashSession(id); got != want || (id != "" && len(got) != 16) {
				t.Errorf("session %q: SessionOf %q, want %q", id, got, want)
			}
		default:
			t.Fatalf("session %q: the tool was not called: %v", id, res)
		}
		h.sess.Close()
	}
	if got := SessionOf(context.Background()); got != "" {
		t.Errorf("outside a request: %q", got)
	}
}

// An Operation, and a Denial during its request, carry the trace id of
// the request's span; without spans they carry none, even when the
// transport found a trace context (an HTTP traceparent header): their
// trace is the span's.
func TestAnOperationCarriesItsSpansTraceID(t *testing.T) {
	header := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{9}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled, Remote: true})
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), header)
	denying := NewPlugin("p", "", fakeRuntime{
		abi.ExportListTools: returns(abi.ListToolsResult{Tools: []abi.Tool{{Name: "fetch", InputSchema: objectSchema}}}),
		abi.ExportCallTool: func(ctx context.Context, _ []byte) ([]byte, error) {
			ReportDenied(ctx, "p", DeniedEgress, "example.com")
			return json.Marshal(abi.CallToolResult{Content: []abi.Content{{Type: abi.ContentText, Text: "x"}}})
		},
	})
	for _, traced := range []bool{true, false} {
		rec := tracetest.NewSpanRecorder()
		provider := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		o := &observed{}
		opts := Options{Observer: o}
		if traced {
			opts.Tracer = provider.Tracer("test")
		}
		srv := NewServer(opts, BuildCatalog(t.Context(), []*Plugin{denying}, nil))
		out := newRecorder()
		h := &harness{srv: srv, sess: srv.OpenSession(out, SessionOptions{Transport: TransportHTTP}), out: out}
		h.ask(t, ctx, 1, "tools/call", map[string]any{"name": "fetch", "arguments": map[string]any{"n": 1}}, modernMeta(`{}`, ""))
		poll.Until(t, 5*time.Second, "the request observed", func() bool { return len(o.all()) == 1 && len(o.allDenials()) == 1 })
		want := ""
		if traced {
			poll.Until(t, 5*time.Second, "its spans ended", func() bool { return len(rec.Ended()) == 2 })
			want = rec.Ended()[0].SpanContext().TraceID().String()
		}
		if got := o.all()[0].TraceID; got != want || (traced && got == header.TraceID().String()) {
			t.Errorf("traced %v: the operation's trace id %q, want %q", traced, got, want)
		}
		if got := o.allDenials()[0].TraceID; got != want {
			t.Errorf("traced %v: the denial's trace id %q, want %q", traced, got, want)
		}
		h.sess.Close()
		_ = provider.Shutdown(context.Background())
	}
}
