package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/otlptest"
	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// headerTrace adds a traceparent header of its own trace to each request
// it sends: the trace context of the HTTP request, which the server links.
type headerTrace struct{ traceID string }

func (h headerTrace) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("traceparent", "00-"+h.traceID+"-1111111111111111-01")
	return http.DefaultTransport.RoundTrip(r)
}

// With [telemetry] traces = "otlp", a tools/call is exported to a
// collector (a loopback OTLP/HTTP receiver, decoded with the OTLP protobuf
// types) as a server span under the client's _meta.traceparent, linked to
// the HTTP request's traceparent header; the plugin call is its child,
// and the plugin's HTTP request a client span under that, named by the
// grant rule that allowed it, whose trace context reaches the server the
// plugin called in its traceparent header.
func TestTracesReachTheCollectorAndThePluginsRequests(t *testing.T) {
	collector := otlptest.HTTP(t)
	var mu sync.Mutex
	var seen []string // the traceparent headers the plugin's requests carried
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("traceparent"))
		mu.Unlock()
		fmt.Fprint(w, "pong")
	}))
	t.Cleanup(target.Close)
	rule := strings.TrimPrefix(target.URL, "http://")
	attacker, err := os.ReadFile(plugintest.Build(t, "internal/testrig/testplugins/attacker"))
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, fmt.Sprintf("[telemetry]\ntraces = \"otlp\"\notlp_endpoint = %q\n[plugins.attacker]\nallowed_hosts = [%q]\n", collector.URL, rule))
	writePlugin(t, f, "attacker.wasm", attacker)
	f.serveArgs = append(f.serveArgs, "--log-format", "json")
	srv := f.start(t, "OTEL_BSP_SCHEDULE_DELAY=50") // export each batch within 50 ms

	const clientTrace, clientSpan, headerTraceID = "0af7651916cd43dd8448eb211c80319c", "00f067aa0ba902b7", "22222222222222222222222222222222"
	client := mcp.NewClient(&mcp.Implementation{Name: "traces-test", Version: "1"}, nil)
	cs, err := client.Connect(ctxT(t), &mcp.StreamableClientTransport{Endpoint: srv.url, HTTPClient: &http.Client{Transport: headerTrace{headerTraceID}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "fetch", Arguments: map[string]any{"url": target.URL},
		Meta: mcp.Meta{"traceparent": "00-" + clientTrace + "-" + clientSpan + "-01"}})
	if err != nil || res.IsError || text(t, res.Content) != "200 pong" {
		t.Fatalf("fetch: %v %+v", err, res)
	}

	var spans []*tracepb.Span
	byName := map[string]*tracepb.Span{}
	deadline := time.Now().Add(20 * time.Second)
	for byName["http_request"] == nil || byName["tools/call fetch"] == nil || byName["call_tool attacker"] == nil {
		if time.Now().After(deadline) {
			t.Fatalf("spans received: %v; want tools/call fetch, call_tool attacker and http_request", byName)
		}
		for _, s := range otlptest.Spans([]*tracepb.ResourceSpans{collector.Next(t, 20*time.Second)}) {
			spans = append(spans, s)
			byName[s.GetName()] = s
		}
	}
	call, plugin, request := byName["tools/call fetch"], byName["call_tool attacker"], byName["http_request"]
	id := func(b []byte) string { return hex.EncodeToString(b) }
	if id(call.GetTraceId()) != clientTrace || id(call.GetParentSpanId()) != clientSpan || call.GetKind() != tracepb.Span_SPAN_KIND_SERVER {
		t.Errorf("tools/call fetch: trace %s, parent %s, kind %v; want a server span under the client's %s-%s", id(call.GetTraceId()), id(call.GetParentSpanId()), call.GetKind(), clientTrace, clientSpan)
	}
	if links := call.GetLinks(); len(links) != 1 || id(links[0].GetTraceId()) != headerTraceID {
		t.Errorf("tools/call fetch: links %v, want the HTTP traceparent header's trace %s", links, headerTraceID)
	}
	attrs := otlptest.Attrs(call)
	for k, v := range map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "fetch", "network.transport": "tcp", "network.protocol.name": "http",
		"client.address": "127.0.0.1"} {
		if attrs[k] != v {
			t.Errorf("tools/call fetch: %s = %q, want %q", k, attrs[k], v)
		}
	}
	if port, err := strconv.Atoi(attrs["client.port"]); err != nil || port <= 0 || port > 65535 {
		t.Errorf("tools/call fetch: client.port = %q, want the client's port", attrs["client.port"])
	}
	if !bytesEqual(plugin.GetParentSpanId(), call.GetSpanId()) || !bytesEqual(request.GetParentSpanId(), plugin.GetSpanId()) {
		t.Errorf("the plugin call's parent %s, the HTTP request's %s: want tools/call fetch (%s), then the plugin call (%s)",
			id(plugin.GetParentSpanId()), id(request.GetParentSpanId()), id(call.GetSpanId()), id(plugin.GetSpanId()))
	}
	if got := otlptest.Attrs(plugin)["mcphost.plugin.outcome"]; got != "ok" {
		t.Errorf("the plugin call's outcome %q, want ok", got)
	}
	if a := otlptest.Attrs(request); a["mcphost.grant.rule"] != rule || a["mcphost.grant.outcome"] != "allowed" || request.GetKind() != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("http_request: %v, kind %v; want a client span of the rule %q, allowed", a, request.GetKind(), rule)
	}
	// --log-format json: every line of the server's log is a JSON object,
	// and those logged for a call (here what the plugin writes to stderr)
	// carry its trace id and its session, hashed as in the span.
	if _, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "stderr_flood", Arguments: map[string]any{"n": 1},
		Meta: mcp.Meta{"traceparent": "00-" + clientTrace + "-" + clientSpan + "-01"}}); err != nil {
		t.Fatal(err)
	}
	// The same from a 2025-11-25 session, whose lines carry its hashed id.
	legacy := &httpPeer{url: srv.url}
	resp := legacy.post(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"legacy","version":"1"}}}`)
	resp.Body.Close()
	if legacy.session = resp.Header.Get("Mcp-Session-Id"); legacy.session == "" {
		t.Fatalf("initialize at 2025-11-25: %s, no session", resp.Status)
	}
	legacy.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	const legacyTrace = "33333333333333333333333333333333"
	legacy.request(t, 1, "tools/call", map[string]any{"name": "stderr_flood", "arguments": map[string]any{"n": 1},
		"_meta": map[string]any{"traceparent": "00-" + legacyTrace + "-" + clientSpan + "-01"}})
	poll.Until(t, 10*time.Second, "the plugin's stderr in the log, twice", func() bool { return strings.Count(srv.log.String(), "eeeeeeee\"") >= 2 })
	traced, sessioned := 0, 0
	for line := range strings.Lines(srv.log.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("a log line is not JSON: %q", line)
			continue
		}
		switch rec["trace_id"] {
		case clientTrace: // a 2026-07-28 request: no session
			traced++
			if rec["session"] != nil {
				t.Errorf("a log line of a request of no session carries the session %v", rec["session"])
			}
		case legacyTrace:
			sessioned++
			if rec["session"] != hashedSession(legacy.session) {
				t.Errorf("a log line of the 2025-11-25 session's call carries the session %v, want %s", rec["session"], hashedSession(legacy.session))
			}
		}
	}
	if sessioned == 0 {
		t.Errorf("no log line carries the 2025-11-25 call's trace_id %s", legacyTrace)
	}
	if traced == 0 {
		t.Errorf("no log line carries the call's trace_id %s:\n%s", clientTrace, srv.log.String())
	}
	mu.Lock()
	defer mu.Unlock()
	want := "00-" + clientTrace + "-" + id(request.GetSpanId()) + "-01"
	if len(seen) != 1 || seen[0] != want {
		t.Errorf("the plugin's request carried traceparent %q, want %q", seen, want)
	}
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

// hashedSession is what spans, audit records and log lines carry of the
// session id: the first 16 hex digits of its SHA-256.
func hashedSession(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:8])
}
