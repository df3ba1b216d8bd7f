package mcphttp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectSDK connects the official SDK client over transport, asking for a
// protocol version, and checks that it was negotiated.
func connectSDK(t *testing.T, transport mcp.Transport, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	// The legacy SSE client keeps its stream in the context of Connect.
	ctx, cancel := context.WithCancel(context.Background())
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, opts).Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close(); cancel() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated %s, want %s", got, version)
	}
	return cs
}

func (hh *httpHarness) streamableClient(t *testing.T, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return connectSDK(t, &mcp.StreamableClientTransport{Endpoint: hh.url + "/mcp"}, version, opts)
}

// callTool calls a tool and returns the text of its result.
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any, meta ...any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	params := &mcp.CallToolParams{Name: name, Arguments: args}
	if len(meta) > 0 {
		params.SetProgressToken(meta[0])
	}
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(res.Content) != 1 || res.IsError {
		t.Fatalf("%s: %+v", name, res)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

func TestSDKClientsOverEveryTransport(t *testing.T) {
	for _, c := range []struct{ name, version, path string }{
		{"streamable 2025-11-25", host.Version20251125, "/mcp"},
		{"streamable 2025-03-26", host.Version20250326, "/mcp"},
		{"legacy HTTP+SSE", host.Version20241105, "/sse"},
	} {
		t.Run(c.name, func(t *testing.T) {
			progressed := make(chan struct{})
			hh := newHTTPHarness(t, Options{}, toolsPlugin("a", echoTool), gatedPlugin(t, progressed), callerPlugin(hostFn(t, abi.HostCreateMessage)))
			var once sync.Once
			var transport mcp.Transport = &mcp.StreamableClientTransport{Endpoint: hh.url + c.path}
			if c.path == "/sse" {
				transport = &mcp.SSEClientTransport{Endpoint: hh.url + c.path}
			}
			cs := connectSDK(t, transport, c.version, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					if req.Params.ProgressToken == "tok" {
						once.Do(func() { close(progressed) })
					}
				},
				CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "hello"}}, nil
				},
			})

			tools, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range tools.Tools {
				names = append(names, tool.Name)
			}
			if slices.Sort(names); strings.Join(names, ",") != "ask,echo,job,spam" {
				t.Fatalf("tools %v", names)
			}
			if got := callTool(t, cs, "echo", map[string]any{"n": 1}); got != `a:echo:{"n":1}` {
				t.Fatalf("echo: %q", got)
			}
			// job waits until its progress has reached the client.
			if got := callTool(t, cs, "job", map[string]any{}, "tok"); got != "done" {
				t.Fatalf("job: %q", got)
			}
			ask := map[string]any{"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "hi"}}}, "maxTokens": 10}
			if got := callTool(t, cs, "ask", ask); !strings.Contains(got, `"hello"`) {
				t.Fatalf("sampling: the plugin got %q", got)
			}
		})
	}
}

func TestStreamableStatusCodes(t *testing.T) {
	hh := newHTTPHarness(t, Options{}, toolsPlugin("a", echoTool))
	id := hh.initSession(t, host.Version20251125)
	sid := func(more ...string) []string { return append([]string{headerSessionID, id}, more...) }
	const (
		ping     = `{"jsonrpc":"2.0","id":1,"method":"ping"}`
		initBody = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`
		post     = http.MethodPost
		get      = http.MethodGet
	)
	sse := []string{"Accept", "text/event-stream"}
	for _, c := range []struct {
		name, method, body string
		headers            []string
		want               int
	}{
		{"POST accepting only JSON", post, ping, sid("Accept", "application/json"), http.StatusNotAcceptable},
		{"POST accepting only SSE", post, ping, sid("Accept", "text/event-stream"), http.StatusNotAcceptable},
		{"GET not accepting SSE", get, "", sid("Accept", "application/json"), http.StatusNotAcceptable},
		{"POST of text/plain", post, ping, sid("Content-Type", "text/plain"), http.StatusUnsupportedMediaType},
		{"request without a session id", post, ping, nil, http.StatusBadRequest},
		{"notification without a session id", post, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil, http.StatusBadRequest},
		{"GET without a session id", get, "", sse, http.StatusBadRequest},
		{"DELETE without a session id", http.MethodDelete, "", nil, http.StatusBadRequest},
		{"unknown session id", post, ping, []string{headerSessionID, "nope"}, http.StatusNotFound},
		{"unsupported protocol version", post, ping, sid(headerVersion, "1999-01-01"), http.StatusBadRequest},
		{"unsupported protocol version on initialize", post, initBody, []string{headerVersion, "1999-01-01"}, http.StatusBadRequest},
		{"supported version other than negotiated", post, ping, sid(headerVersion, host.Version20250326), http.StatusOK},
		{"negotiated version", post, ping, sid(headerVersion, host.Version20251125), http.StatusOK},
		{"no version header", post, ping, sid(), http.StatusOK},
		{"notification", post, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`, sid(), http.StatusAccepted},
		{"response", post, `{"jsonrpc":"2.0","id":"x","result":{}}`, sid(), http.StatusAccepted},
		{"invalid JSON", post, `{"jsonrpc":`, sid(), http.StatusBadRequest},
		{"invalid message", post, `{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}`, sid(), http.StatusBadRequest},
		{"batch outside 2025-03-26", post, "[" + ping + "]", sid(), http.StatusBadRequest},
		{"PUT", http.MethodPut, "", sid(), http.StatusMethodNotAllowed},
	} {
		if got := hh.status(t, c.method, "/mcp", c.body, c.headers...); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}

	resp := hh.do(t, post, "/mcp", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`, sid()...)
	if body, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusAccepted || len(body) != 0 {
		t.Errorf("a notification: %d %q", resp.StatusCode, body)
	}
	if ct := hh.do(t, post, "/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, sid()...).Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("tools/list answered as %s", ct)
	}
	if ct := hh.do(t, post, "/mcp", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"n":1}}}`, sid()...).Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("tools/call answered as %s", ct)
	}

	first := hh.do(t, get, "/mcp", "", sid(sse...)...)
	if first.StatusCode != http.StatusOK {
		t.Fatalf("GET: %d", first.StatusCode)
	}
	if got := hh.status(t, get, "/mcp", "", sid(sse...)...); got != http.StatusConflict {
		t.Errorf("second GET: %d", got)
	}

	if got := hh.status(t, http.MethodDelete, "/mcp", "", sid()...); got != http.StatusNoContent {
		t.Fatalf("DELETE: %d", got)
	}
	if rest, err := io.ReadAll(first.Body); err != nil || strings.Contains(string(rest), "jsonrpc") {
		t.Errorf("the GET stream of a deleted session: %q, %v", rest, err)
	}
	for _, c := range []struct {
		method  string
		headers []string
	}{{post, sid()}, {get, sid(sse...)}, {http.MethodDelete, sid()}} {
		if got := hh.status(t, c.method, "/mcp", ping, c.headers...); got != http.StatusNotFound {
			t.Errorf("%s after DELETE: %d", c.method, got)
		}
	}
}

func TestInitializeGivesAFreshRandomSessionIDOnlyOnSuccess(t *testing.T) {
	hh := newHTTPHarness(t, Options{})
	a, b := hh.initSession(t, host.Version20251125), hh.initSession(t, host.Version20250618)
	if a == b || len(a) != 43 || strings.ContainsFunc(a, func(r rune) bool { return r < 0x21 || r > 0x7e }) {
		t.Fatalf("session ids %q, %q", a, b)
	}
	resp := hh.do(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`)
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	if resp.Header.Get(headerSessionID) != "" || m["error"] == nil {
		t.Fatalf("failed initialize: session %q, body %v", resp.Header.Get(headerSessionID), m)
	}
	hh.h.mu.Lock()
	n := len(hh.h.sessions)
	hh.h.mu.Unlock()
	if n != 2 {
		t.Fatalf("%d sessions, want 2", n)
	}
}

func TestBatchesOnlyOn20250326OverHTTP(t *testing.T) {
	hh := newHTTPHarness(t, Options{}, toolsPlugin("a", echoTool))
	old := hh.initSession(t, host.Version20250326)
	resp := hh.do(t, http.MethodPost, "/mcp", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`, headerSessionID, old)
	var batch []map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&batch); err != nil || len(batch) != 2 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("batch on 2025-03-26: %d %v %v", resp.StatusCode, batch, err)
	}
	if got := hh.status(t, http.MethodPost, "/mcp", `[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}]`, headerSessionID, old); got != http.StatusAccepted {
		t.Fatalf("batch of notifications: %d", got)
	}
	events := readEvents(t, hh.do(t, http.MethodPost, "/mcp", `[{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"n":2}}}]`, headerSessionID, old))
	if e, _ := events.next(t); !strings.HasPrefix(e.data, "[") || !strings.Contains(e.data, `a:echo:{\"n\":2}`) {
		t.Fatalf("batched tools/call: %+v", e)
	}
	for _, v := range []string{host.Version20250618, host.Version20251125} {
		s := hh.initSession(t, v)
		if got := hh.status(t, http.MethodPost, "/mcp", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, headerSessionID, s); got != http.StatusBadRequest {
			t.Errorf("batch on %s: %d", v, got)
		}
	}
	if got := hh.status(t, http.MethodPost, "/mcp", `[{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}]`); got != http.StatusBadRequest {
		t.Errorf("batched initialize: %d", got)
	}
}

func TestPrimingEventAndRetryOnlyOn20251125(t *testing.T) {
	hh := newHTTPHarness(t, Options{ReconnectDelay: 250 * time.Millisecond}, toolsPlugin("a", echoTool))
	for _, v := range []string{host.Version20251125, host.Version20250618, host.Version20250326} {
		id := hh.initSession(t, v)
		events := readEvents(t, hh.do(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"n":1}}}`, headerSessionID, id, headerVersion, v))
		first, _ := events.next(t)
		primed := first == rawEvent{id: "1-0", retry: "250"}
		if primed != (v == host.Version20251125) || v != host.Version20251125 && first.retry != "" {
			t.Errorf("%s: first event %+v", v, first)
		}
		last := first
		if primed {
			last, _ = events.next(t)
		}
		if last.id != "1-1" || !strings.Contains(last.data, `"result"`) {
			t.Errorf("%s: response event %+v", v, last)
		}
		if e, more := events.next(t); more {
			t.Errorf("%s: the stream goes on after the response: %+v", v, e)
		}
	}
}

// waitDetached waits until a stream of a session has no connection.
func waitDetached(t *testing.T, hs *httpSession, stream int) {
	t.Helper()
	poll.Until(t, 5*time.Second, fmt.Sprintf("stream %d loses its connection", stream), func() bool {
		hs.mu.Lock()
		st := hs.streams[stream]
		hs.mu.Unlock()
		st.mu.Lock()
		defer st.mu.Unlock()
		return st.conn == nil
	})
}

func TestEventIDsAreUniqueAndResumptionReplaysOnlyThatStream(t *testing.T) {
	release := make(chan struct{})
	hh := newHTTPHarness(t, Options{ReconnectDelay: 25 * time.Millisecond}, gatedPlugin(t, release))
	id := hh.initSession(t, host.Version20251125)
	hs := hh.session(id)
	notify := func(n int) {
		if err := hs.standalone.Send(encodeNotification("notifications/message", map[string]any{"level": "info", "data": n})); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	expect := func(er *eventReader, wantID, wantData string) {
		t.Helper()
		e, ok := er.next(t)
		if !ok || e.id != wantID || !strings.Contains(e.data, wantData) {
			t.Fatalf("want event %s with %s, got %+v (more: %v)", wantID, wantData, e, ok)
		}
		if seen[e.id] {
			t.Fatalf("event id %s sent twice", e.id)
		}
		seen[e.id] = true
	}
	getSSE := func(lastEventID string) *eventReader {
		return readEvents(t, hh.do(t, http.MethodGet, "/mcp", "", headerSessionID, id, "Accept", "text/event-stream", headerLastEventID, lastEventID))
	}

	notify(1) // queued: no stream is open
	standalone := getSSE("")
	expect(standalone, "0-0", "") // priming
	expect(standalone, "0-1", `"data":1`)
	notify(2)
	expect(standalone, "0-2", `"data":2`)

	call := readEvents(t, hh.do(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"job","_meta":{"progressToken":"p"}}}`, headerSessionID, id))
	expect(call, "1-0", "")
	expect(call, "1-1", "notifications/progress")
	call.body.Close() // the connection drops before the response
	waitDetached(t, hs, 1)
	close(release)
	resumed := getSSE("1-1")
	if e, _ := resumed.next(t); e != (rawEvent{retry: "25"}) {
		t.Fatalf("resumed stream starts with %+v, want the retry alone", e)
	}
	expect(resumed, "1-2", `"id":7`)
	if e, more := resumed.next(t); more {
		t.Fatalf("the resumed stream goes on after the response: %+v", e)
	}

	standalone.body.Close()
	waitDetached(t, hs, 0)
	notify(3)
	notify(4)
	replay := getSSE("0-1")
	replay.next(t) // retry
	for n := 2; n <= 4; n++ {
		if e, _ := replay.next(t); e.id != fmt.Sprintf("0-%d", n) || !strings.Contains(e.data, fmt.Sprintf(`"data":%d`, n)) {
			t.Fatalf("replay from 0-1: want 0-%d, got %+v", n, e)
		}
	}

	for _, bad := range []string{"1-2", "9-1", "x"} {
		if got := hh.status(t, http.MethodGet, "/mcp", "", headerSessionID, id, "Accept", "text/event-stream", headerLastEventID, bad); got != http.StatusBadRequest {
			t.Errorf("Last-Event-ID %s: %d", bad, got)
		}
	}
}

func TestQueuedServerMessagesAreBounded(t *testing.T) {
	hh := newHTTPHarness(t, Options{MaxStreamBuffer: 1024})
	id := hh.initSession(t, host.Version20250618)
	pad := strings.Repeat("x", 600)
	for n := 1; n <= 3; n++ {
		_ = hh.session(id).standalone.Send(encodeNotification("notifications/message", map[string]any{"level": "info", "data": fmt.Sprint(n, pad)}))
	}
	events := readEvents(t, hh.do(t, http.MethodGet, "/mcp", "", headerSessionID, id, "Accept", "text/event-stream"))
	if e, _ := events.next(t); e.id != "0-3" {
		t.Fatalf("want only the newest message kept (0-3), got %+v", e)
	}
}
