package mcphttp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/jsonrpc"
	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/mcphost/mcphost/internal/testrig/syncbuf"
)

// httpHarness is an httptest server of an Handler.
type httpHarness struct {
	h   *Handler
	url string
}

func newHTTPHarness(t *testing.T, opts Options, plugins ...*host.Plugin) *httpHarness {
	t.Helper()
	return serveHarness(t, httptest.NewUnstartedServer(nil), opts, plugins...)
}

// serveHarness starts ts with the handler of a server of plugins.
func serveHarness(t *testing.T, ts *httptest.Server, opts Options, plugins ...*host.Plugin) *httpHarness {
	t.Helper()
	srv := host.NewServer(host.Options{Name: "test", Version: "1"}, host.BuildCatalog(context.Background(), plugins, nil))
	h := NewHandler(srv, ts.Listener.Addr().String(), opts)
	ts.Config.Handler = h
	ts.Start()
	t.Cleanup(func() { h.Close(); ts.Close() })
	return &httpHarness{h: h, url: ts.URL}
}

// do sends a request. POSTs to /mcp carry the Accept and Content-Type the
// spec asks for; headers are name, value pairs that add or (with an empty
// value) remove headers.
func (hh *httpHarness) do(t *testing.T, method, path, body string, headers ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, hh.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" {
			req.Host = headers[i+1]
		} else if headers[i+1] == "" {
			req.Header.Del(headers[i])
		} else {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// status sends a request and returns its status, checking that an error
// status other than 404 and 405 comes with a JSON-RPC error body without an id.
func (hh *httpHarness) status(t *testing.T, method, path, body string, headers ...string) int {
	t.Helper()
	resp := hh.do(t, method, path, body, headers...)
	defer resp.Body.Close()
	if resp.StatusCode >= 400 && resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMethodNotAllowed {
		var m struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   *jsonrpc.Error  `json:"error"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || m.JSONRPC != "2.0" || string(m.ID) != "null" || m.Error == nil || m.Error.Code >= 0 {
			t.Errorf("%s %s answered %d without a JSON-RPC error body (%v, %+v)", method, path, resp.StatusCode, err, m)
		}
	}
	return resp.StatusCode
}

// initSession initializes a Streamable HTTP session at a protocol version
// and returns its id.
func (hh *httpHarness) initSession(t *testing.T, version string) string {
	t.Helper()
	resp := hh.do(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{"sampling":{}},"clientInfo":{"name":"t","version":"1"}}}`)
	id := resp.Header.Get(headerSessionID)
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d, session id %q", resp.StatusCode, id)
	}
	if code := hh.status(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, headerSessionID, id); code != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d", code)
	}
	return id
}

// session returns the live session with the given id, or nil.
func (hh *httpHarness) session(id string) *httpSession {
	hh.h.mu.Lock()
	defer hh.h.mu.Unlock()
	return hh.h.sessions[id]
}

// rawEvent is one block of an SSE stream.
type rawEvent struct{ id, name, data, retry string }

// eventReader reads the events of an SSE response as they come.
type eventReader struct {
	ch   chan rawEvent
	body io.Closer
}

func readEvents(t *testing.T, resp *http.Response) *eventReader {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		t.Fatalf("want an SSE stream, got %d %s", resp.StatusCode, ct)
	}
	er := &eventReader{ch: make(chan rawEvent, 1000), body: resp.Body}
	go func() {
		defer close(er.ch)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		var e rawEvent
		var data []string
		for sc.Scan() {
			name, value, _ := strings.Cut(sc.Text(), ":")
			value = strings.TrimPrefix(value, " ")
			switch name {
			case "":
				e.data = strings.Join(data, "\n")
				er.ch <- e
				e, data = rawEvent{}, nil
			case "id":
				e.id = value
			case "event":
				e.name = value
			case "data":
				data = append(data, value)
			case "retry":
				e.retry = value
			}
		}
	}()
	return er
}

// next returns the next event; ok is false at the end of the stream.
func (er *eventReader) next(t *testing.T) (e rawEvent, ok bool) {
	t.Helper()
	select {
	case e, ok = <-er.ch:
		return e, ok
	case <-time.After(5 * time.Second):
		t.Fatal("no SSE event within 5s")
		return e, false
	}
}

// message returns the next event that carries a message, and the message.
func (er *eventReader) message(t *testing.T) (rawEvent, map[string]any) {
	t.Helper()
	for {
		e, ok := er.next(t)
		if !ok {
			t.Fatal("the stream ended")
		}
		if e.data == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(e.data), &m); err != nil {
			t.Fatalf("event data %q: %v", e.data, err)
		}
		return e, m
	}
}

// gatedPlugin has a tool "job" that reports progress 1 on the request's
// token, waits for release, and answers "done"; and a tool "spam" that sends
// n log messages of size bytes and tells how long that took.
func gatedPlugin(t *testing.T, release <-chan struct{}) *host.Plugin {
	progress := hostFn(t, abi.HostNotifyProgress)
	logMsg := hostFn(t, abi.HostNotifyLoggingMessage)
	anyObject := json.RawMessage(`{"type":"object"}`)
	return host.NewPlugin("gated", "", fakeRuntime{
		abi.ExportListTools: returns(abi.ListToolsResult{Tools: []abi.Tool{{Name: "job", InputSchema: anyObject}, {Name: "spam", InputSchema: anyObject}}}),
		abi.ExportCallTool: func(ctx context.Context, in []byte) ([]byte, error) {
			var input abi.Input
			var req abi.CallToolParams
			_ = json.Unmarshal(in, &input)
			_ = json.Unmarshal(input.Request, &req)
			text := "done"
			switch req.Name {
			case "job":
				if _, err := progress(ctx, mustJSON(abi.ProgressParams{ProgressToken: input.Context.Meta["progressToken"], Progress: 1})); err != nil {
					return nil, err
				}
				select {
				case <-release:
				case <-ctx.Done():
					return nil, &host.CallError{Reason: "plugin call canceled", Message: "canceled", Canceled: true}
				case <-time.After(5 * time.Second):
					return nil, errors.New("not released within 5s")
				}
			case "spam":
				var args struct{ N, Size int }
				_ = json.Unmarshal(req.Arguments, &args)
				start := time.Now()
				for range args.N {
					if _, err := logMsg(ctx, mustJSON(abi.LoggingMessageParams{Level: "info", Data: strings.Repeat("x", args.Size)})); err != nil {
						return nil, err
					}
				}
				text = time.Since(start).String()
			}
			return json.Marshal(abi.CallToolResult{Content: []abi.Content{{Type: "text", Text: text}}})
		},
	})
}

func TestHostAndOriginAreChecked(t *testing.T) {
	hh := newHTTPHarness(t, Options{})
	port := hh.url[strings.LastIndex(hh.url, ":")+1:]
	initBody := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`
	for _, c := range []struct {
		headers []string
		want    int
	}{
		{[]string{"Host", "evil.example:" + port}, http.StatusForbidden},
		{[]string{"Host", "localhost:1"}, http.StatusForbidden},
		{[]string{"Origin", "http://evil.example"}, http.StatusForbidden},
		{[]string{"Origin", "null"}, http.StatusForbidden},
		{[]string{"Host", "localhost:" + port, "Origin", "http://localhost:" + port}, http.StatusOK},
		{[]string{"Host", "[::1]:" + port, "Origin", "https://127.0.0.1:" + port}, http.StatusOK},
	} {
		if got := hh.status(t, http.MethodPost, "/mcp", initBody, c.headers...); got != c.want {
			t.Errorf("%v: %d, want %d", c.headers, got, c.want)
		}
	}
	if got := hh.status(t, http.MethodGet, "/sse", "", "Origin", "http://evil.example"); got != http.StatusForbidden {
		t.Errorf("legacy /sse with a foreign Origin: %d", got)
	}

	custom := newHTTPHarness(t, Options{AllowedHosts: []string{"mcp.example"}, AllowedOrigins: []string{"https://app.example"}})
	for _, c := range []struct {
		headers []string
		want    int
	}{
		{[]string{"Host", "mcp.example:8443", "Origin", "https://app.example"}, http.StatusOK},
		{[]string{"Host", "mcp.example"}, http.StatusOK},
		{[]string{"Host", "127.0.0.1:" + port}, http.StatusForbidden},
		{[]string{"Host", "mcp.example", "Origin", "https://mcp.example"}, http.StatusForbidden},
	} {
		if got := custom.status(t, http.MethodPost, "/mcp", initBody, c.headers...); got != c.want {
			t.Errorf("custom lists, %v: %d, want %d", c.headers, got, c.want)
		}
	}
	if got := hh.status(t, http.MethodGet, "/nope", ""); got != http.StatusNotFound {
		t.Errorf("unknown path: %d", got)
	}
}

func TestBodiesOverTheLimitGet413(t *testing.T) {
	hh := newHTTPHarness(t, Options{MaxBodyBytes: 1024})
	id := hh.initSession(t, host.Version20251125)
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 2048) + `"}}`
	if got := hh.status(t, http.MethodPost, "/mcp", big, headerSessionID, id); got != http.StatusRequestEntityTooLarge {
		t.Errorf("/mcp: %d", got)
	}
	if got := hh.status(t, http.MethodPost, "/messages?sessionId=x", big); got != http.StatusRequestEntityTooLarge {
		t.Errorf("/messages: %d", got)
	}
}

func TestSessionCountIsBounded(t *testing.T) {
	hh := newHTTPHarness(t, Options{MaxSessions: 2})
	first := hh.initSession(t, host.Version20251125)
	hh.initSession(t, host.Version20250326)
	initBody := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`
	if got := hh.status(t, http.MethodPost, "/mcp", initBody); got != http.StatusServiceUnavailable {
		t.Fatalf("third session: %d", got)
	}
	if got := hh.status(t, http.MethodGet, "/sse", ""); got != http.StatusServiceUnavailable {
		t.Fatalf("legacy session beyond the limit: %d", got)
	}
	if got := hh.status(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, headerSessionID, first); got != http.StatusOK {
		t.Fatalf("a session open before the limit was reached: %d", got)
	}
	if got := hh.status(t, http.MethodDelete, "/mcp", "", headerSessionID, first); got != http.StatusNoContent {
		t.Fatalf("DELETE: %d", got)
	}
	hh.initSession(t, host.Version20251125)
}

func TestIdleSessionsExpireButNotWithAnOpenStream(t *testing.T) {
	hh := newHTTPHarness(t, Options{SessionIdleTimeout: 200 * time.Millisecond})
	idle := hh.initSession(t, host.Version20251125)
	listening := hh.initSession(t, host.Version20251125)
	stream := readEvents(t, hh.do(t, http.MethodGet, "/mcp", "", headerSessionID, listening, "Accept", "text/event-stream"))
	defer stream.body.Close()
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	poll.Until(t, 5*time.Second, "the idle session expires", func() bool { return hh.session(idle) == nil })
	if got := hh.status(t, http.MethodPost, "/mcp", ping, headerSessionID, idle); got != http.StatusNotFound {
		t.Fatalf("expired session: %d", got)
	}
	if got := hh.status(t, http.MethodPost, "/mcp", ping, headerSessionID, listening); got != http.StatusOK {
		t.Fatalf("session with an open stream: %d", got)
	}
}

// smallBuffers makes the server's socket buffers small, so that a client
// that does not read blocks the server's writes soon.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4 << 10)
	}
	return c, err
}

func TestSlowClientDoesNotBlockThePluginOrOtherSessions(t *testing.T) {
	ts := httptest.NewUnstartedServer(nil)
	ts.Listener = smallBuffers{ts.Listener}
	hh := serveHarness(t, ts, Options{MaxStreamBuffer: 256 << 10}, gatedPlugin(t, nil), toolsPlugin("a", abi.Tool{Name: "echo", InputSchema: objectSchema}))

	slow := hh.initSession(t, host.Version20251125)
	resp := hh.do(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"spam","arguments":{"n":64,"size":65536}}}`, headerSessionID, slow)
	// The client reads nothing while the plugin sends 4 MiB of log messages.
	hs := hh.session(slow)
	// 20 s: liveness, on a loaded machine under -race.
	poll.Until(t, 20*time.Second, "the plugin call ends and the slow connection is dropped", func() bool {
		hs.mu.Lock()
		st := hs.streams[1]
		hs.mu.Unlock()
		if st == nil {
			return false
		}
		st.mu.Lock()
		defer st.mu.Unlock()
		return st.final && st.conn == nil
	})

	other := hh.streamableClient(t, host.Version20251125, nil)
	res := callTool(t, other, "echo", map[string]any{"n": 1})
	if res != `a:echo:{"n":1}` {
		t.Fatalf("another session: %q", res)
	}

	// The slow client gets what was written before the drop, then resumes
	// the stream and finds the response, whose event was kept.
	events := readEvents(t, resp)
	last := ""
	for e, ok := events.next(t); ok; e, ok = events.next(t) {
		if e.id != "" {
			last = e.id
		}
		if strings.Contains(e.data, `"result"`) {
			t.Fatal("the response reached a dropped connection")
		}
	}
	resumed := readEvents(t, hh.do(t, http.MethodGet, "/mcp", "", headerSessionID, slow, "Accept", "text/event-stream", headerLastEventID, last))
	for {
		_, m := resumed.message(t)
		if m["id"] == nil {
			continue
		}
		// Had a send waited for the stuck connection, the plugin would have
		// waited at least one SSE write timeout.
		took, err := time.ParseDuration(m["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(string))
		if err != nil || took >= sseWriteTimeout {
			t.Fatalf("sending to a client that does not read took the plugin %v (%v): it waited for the connection", took, err)
		}
		return
	}
}

// serveOnLoopback runs Server.ServeHTTP on a loopback listener until
// cancel; wait then waits for it to return nil.
func serveOnLoopback(t *testing.T, opts Options, plugins ...*host.Plugin) (hh *httpHarness, cancel func(), wait func()) {
	t.Helper()
	srv := host.NewServer(host.Options{Name: "test"}, host.BuildCatalog(context.Background(), plugins, nil))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, srv, ln, opts) }()
	wait = func() {
		t.Helper()
		select {
		case err := <-served:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("ServeHTTP did not return")
		}
	}
	return &httpHarness{url: "http://" + ln.Addr().String()}, cancel, wait
}

// startJob starts the gated plugin's job in a new session and waits for its
// progress.
func startJob(t *testing.T, hh *httpHarness) *eventReader {
	t.Helper()
	id := hh.initSession(t, host.Version20251125)
	events := readEvents(t, hh.do(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"job","_meta":{"progressToken":"p"}}}`, headerSessionID, id))
	if _, m := events.message(t); m["method"] != "notifications/progress" {
		t.Fatalf("want progress first, got %v", m)
	}
	return events
}

func TestServeHTTPShutsDownGracefully(t *testing.T) {
	release := make(chan struct{})
	hh, cancel, wait := serveOnLoopback(t, Options{ShutdownGrace: 5 * time.Second}, gatedPlugin(t, release))
	events := startJob(t, hh)
	cancel()
	addr := strings.TrimPrefix(hh.url, "http://")
	poll.Until(t, 5*time.Second, "the listener refuses connections during the shutdown", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	close(release)
	if _, m := events.message(t); m["result"] == nil {
		t.Fatalf("the request in flight did not finish: %v", m)
	}
	wait()
}

func TestServeHTTPCutsOffSlowHeadersAndCancelsRequestsAfterTheGrace(t *testing.T) {
	hh, cancel, wait := serveOnLoopback(t, Options{ShutdownGrace: 100 * time.Millisecond, ReadHeaderTimeout: 100 * time.Millisecond}, gatedPlugin(t, nil))
	stalled, err := net.Dial("tcp", strings.TrimPrefix(hh.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	_, _ = stalled.Write([]byte("GET /mcp HTTP/1.1\r\n"))
	_ = stalled.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadAll(stalled); err != nil {
		t.Fatalf("a client that does not finish its headers was not cut off: %v", err)
	}

	startJob(t, hh) // runs until cancelled
	start := time.Now()
	cancel()
	wait()
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("shutdown took %v", took)
	}
}

func TestMiddlewareWrapsTheEndpoints(t *testing.T) {
	auth := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer ok" {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	hh := newHTTPHarness(t, Options{Middleware: auth})
	for _, c := range [][2]string{{http.MethodPost, "/mcp"}, {http.MethodGet, "/sse"}, {http.MethodPost, "/messages"}} {
		if resp := hh.do(t, c[0], c[1], "{}"); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s %s without credentials: %d", c[0], c[1], resp.StatusCode)
		}
	}
	if got := hh.status(t, http.MethodPost, "/mcp", "{}", "Authorization", "Bearer ok", "Host", "evil.example"); got != http.StatusForbidden {
		t.Errorf("the Host check must come first: %d", got)
	}
	events := readEvents(t, hh.do(t, http.MethodGet, "/sse", "", "Authorization", "Bearer ok"))
	defer events.body.Close()
	if e, _ := events.next(t); e.name != "endpoint" {
		t.Fatalf("SSE through the middleware: %+v", e)
	}
}

func TestPublicPathsSkipTheMiddleware(t *testing.T) {
	deny := func(http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusUnauthorized) })
	}
	doc := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("public")) })
	srv := host.NewServer(host.Options{}, nil)
	h := NewHandler(srv, "127.0.0.1:8080", Options{Middleware: deny, Public: map[string]http.Handler{"/.well-known/doc": doc}})
	defer h.Close()
	for path, want := range map[string]int{"/.well-known/doc": http.StatusOK, "/mcp": http.StatusUnauthorized} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader("{}"))
		req.Host = "127.0.0.1:8080"
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("%s: status %d, want %d", path, rec.Code, want)
		}
	}
}

// TestARefusedHostOrOriginNamesTheSettingThatAllowsIt: a request from a
// name the server does not answer to is told which setting would allow
// it, and the log says which client sent it.
func TestARefusedHostOrOriginNamesTheSettingThatAllowsIt(t *testing.T) {
	var log syncbuf.Buffer
	ts := httptest.NewServer(nil)
	defer ts.Close()
	srv := host.NewServer(host.Options{Name: "test", Version: "1", Logger: slog.New(slog.NewTextHandler(&log, nil))}, nil)
	h := NewHandler(srv, ts.Listener.Addr().String(), Options{})
	defer h.Close()
	ts.Config.Handler = h
	hh := &httpHarness{h: h, url: ts.URL}
	for _, c := range []struct {
		headers []string
		setting string
	}{
		{[]string{"Host", "192.168.1.5:8080"}, `forbidden: Host "192.168.1.5:8080" is not allowed: add "192.168.1.5:8080" to [http] allowed_hosts`},
		{[]string{"Origin", "https://app.example"}, `forbidden: Origin "https://app.example" is not allowed: add "https://app.example" to [http] allowed_origins`},
	} {
		resp := hh.do(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":0,"method":"ping"}`, c.headers...)
		var m struct {
			Error *jsonrpc.Error `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || m.Error == nil || !strings.HasPrefix(m.Error.Message, c.setting) {
			t.Errorf("%v: %d %+v, want 403 %q", c.headers, resp.StatusCode, m.Error, c.setting)
		}
		if !strings.Contains(log.String(), c.headers[1]) || !strings.Contains(log.String(), "client=addr:127.0.0.1") {
			t.Errorf("%v: the log does not name the value and the client:\n%s", c.headers, log.String())
		}
	}
}

// TestProbesAnswerWhateverTheHost asks a health probe with a Host the
// server does not answer to, as a load balancer's check (haproxy sends
// none over HTTP/1.0) or a kubelet (the pod's address) does: it is served,
// while the MCP endpoint and a POST to the probe's path stay refused.
func TestProbesAnswerWhateverTheHost(t *testing.T) {
	ts := httptest.NewServer(nil)
	defer ts.Close()
	srv := host.NewServer(host.Options{Name: "test", Version: "1"}, nil)
	probe := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	h := NewHandler(srv, ts.Listener.Addr().String(), Options{Probes: map[string]http.Handler{"/readyz": probe}})
	defer h.Close()
	ts.Config.Handler = h
	hh := &httpHarness{h: h, url: ts.URL}
	for _, c := range []struct {
		method, path string
		want         int
	}{
		{http.MethodGet, "/readyz", http.StatusOK},
		{http.MethodPost, "/readyz", http.StatusForbidden},
		{http.MethodPost, "/mcp", http.StatusForbidden},
	} {
		resp := hh.do(t, c.method, c.path, `{"jsonrpc":"2.0","id":0,"method":"ping"}`, "Host", "10.1.2.3:8080")
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s %s with Host 10.1.2.3:8080: %d, want %d", c.method, c.path, resp.StatusCode, c.want)
		}
	}
}
