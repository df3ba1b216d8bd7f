package mcphttp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testrig/poll"
)

// The tests of the HTTP front door: what clients can make the server hold
// (request bodies, connections, sessions) stays bounded, and a flood from
// some clients does not keep a steady client from being served.

// floodBody is what each flooding request sends: a JSON-RPC ping padded
// with spaces to 4 MiB. It is shared by every request, so that the clients
// of a flood allocate nothing per request and the heap growth measured is
// the server's. The server trims the spaces, so that holding the body is
// all it costs: decoding 4 MiB of JSON, which the race detector slows a
// hundredfold, is not what the flood tests.
var floodBody = func() []byte {
	const size = 4 << 20
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	return []byte(ping + strings.Repeat(" ", size-len(ping)))
}()

// slowAnswer is how the server answered a slowly sent request.
type slowAnswer struct {
	status     int
	retryAfter string
	body       string
	err        error // no answer
}

var errStopped = errors.New("stopped")

// slowPost sends, from the loopback address from, a POST to /mcp whose
// body (Content-Length: len(body)) it writes chunk bytes at a time, every
// pause, and returns the server's answer, which may come before the whole
// body is sent. It gives up when stop is closed.
func slowPost(addr, from string, body []byte, chunk int, pause time.Duration, stop <-chan struct{}) slowAnswer {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return slowAnswer{err: err}
	}
	defer c.Close()
	answered := make(chan slowAnswer, 1)
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			answered <- slowAnswer{err: err}
			return
		}
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		answered <- slowAnswer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: string(msg)}
	}()
	if _, err := fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n", addr, len(body)); err != nil {
		return slowAnswer{err: err}
	}
	tick := time.NewTicker(pause)
	defer tick.Stop()
	for sent := 0; sent < len(body); {
		select {
		case a := <-answered:
			return a
		case <-stop:
			return slowAnswer{err: errStopped}
		case <-tick.C:
		}
		n, err := c.Write(body[sent:min(len(body), sent+chunk)])
		sent += n
		if err != nil {
			break
		}
	}
	select {
	case a := <-answered:
		return a
	case <-stop:
		return slowAnswer{err: errStopped}
	}
}

// heapWatch samples the bytes of heap objects (live and not yet collected)
// every 5 ms. When they pass limit, it closes over, so that a test can stop
// a flood before it exhausts the machine.
type heapWatch struct {
	base, limit uint64
	over        chan struct{}
	done        chan struct{}
	mu          sync.Mutex
	peak        uint64
	overAfter   time.Duration
}

func watchHeap(limit uint64) *heapWatch {
	runtime.GC()
	w := &heapWatch{limit: limit, over: make(chan struct{}), done: make(chan struct{})}
	w.base = heapObjects()
	start := time.Now()
	go func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-w.done:
				return
			case <-tick.C:
			}
			n := heapObjects()
			w.mu.Lock()
			w.peak = max(w.peak, n)
			if n > w.base+w.limit && w.overAfter == 0 {
				w.overAfter = time.Since(start)
				close(w.over)
			}
			w.mu.Unlock()
		}
	}()
	return w
}

// stop ends the sampling and returns the peak growth over the heap at the
// start, and how long the heap took to pass the limit (0: it did not).
func (w *heapWatch) stop() (growth uint64, overAfter time.Duration) {
	close(w.done)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.peak < w.base {
		return 0, w.overAfter
	}
	return w.peak - w.base, w.overAfter
}

func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// steadyClient is a well-behaved client on its own loopback address, with
// a session opened before a flood, that pings the server one request at a
// time while the flood runs.
type steadyClient struct {
	url, session string
	client       *http.Client

	calls    int
	worst    time.Duration // the longest call
	worstAt  time.Duration // when it started, into the pings
	failures []string
}

// newSteadyClient initializes a session from the loopback address from.
func newSteadyClient(t *testing.T, url, from string) *steadyClient {
	t.Helper()
	s := &steadyClient{url: url, client: clientFrom(from)}
	// A call that fails is one that gets no answer: the flood runs in this
	// process, on a shared machine, and under the race detector its burst
	// of connections can keep the server's goroutines waiting for seconds.
	s.client.Timeout = time.Minute
	t.Cleanup(s.client.CloseIdleConnections)
	resp, err := s.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"steady","version":"1"}}}`)
	if err != nil {
		t.Fatalf("the steady client's initialize: %v", err)
	}
	s.session = resp.Header.Get(headerSessionID)
	if _, err := s.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		t.Fatalf("the steady client's notifications/initialized: %v", err)
	}
	return s
}

// post sends a message in the session; a status other than 2xx is an error.
func (s *steadyClient) post(body string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, s.url+"/mcp", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s.session != "" {
		req.Header.Set(headerSessionID, s.session)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return resp, fmt.Errorf("status %d", resp.StatusCode)
	}
	return resp, nil
}

// pingUntil pings every 20 ms until stop is closed, recording the
// failures and the longest call.
func (s *steadyClient) pingUntil(stop <-chan struct{}) {
	began := time.Now()
	for id := 1; ; id++ {
		select {
		case <-stop:
			return
		case <-time.After(20 * time.Millisecond):
		}
		start := time.Now()
		_, err := s.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id))
		s.calls++
		if d := time.Since(start); d > s.worst {
			s.worst, s.worstAt = d, start.Sub(began).Round(time.Millisecond)
		}
		if err != nil {
			s.failures = append(s.failures, fmt.Sprintf("ping %d: %v", id, err))
		}
	}
}

// String sums up the pings.
func (s *steadyClient) String() string {
	return fmt.Sprintf("%d pings, the longest %v (%v in), %d failed", s.calls, s.worst, s.worstAt, len(s.failures))
}

// bodyFlood is the outcome of a flood of slowly sent bodies.
type bodyFlood struct {
	answers   map[string]int // by status, or error
	refusals  []slowAnswer   // the 503 answers
	growth    uint64         // peak heap growth
	overAfter time.Duration  // when the heap passed the test's limit; 0 if never
	steady    *steadyClient
}

// The heap may hold twice the bodies the budget admits: those being
// received, and as much of those already answered, garbage until the
// collector runs (GOGC=100 lets the heap reach twice what was live). And
// floodSlack: the buffers of the flood's connections, at both ends (this
// process is server and clients), and the rest of the test.
const floodSlack = 128 << 20

// floodBodies sends n slowly written 4 MiB bodies at once to addr, from
// the loopback addresses in from, in turn, while a steady client on
// 127.0.0.3 pings. Each body takes about 2 s to send. The flood is cut
// short when the heap grows by more than limit.
func floodBodies(t *testing.T, url string, n int, from []string, limit uint64) bodyFlood {
	t.Helper()
	addr := strings.TrimPrefix(url, "http://")
	watch := watchHeap(limit)
	steady := newSteadyClient(t, url, "127.0.0.3")
	stopSteady, steadyDone := make(chan struct{}), make(chan struct{})
	go func() { steady.pingUntil(stopSteady); close(steadyDone) }()

	f := bodyFlood{answers: map[string]int{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			a := slowPost(addr, from[i%len(from)], floodBody, 64<<10, 30*time.Millisecond, watch.over)
			key := fmt.Sprint(a.status)
			var ne net.Error
			switch {
			case errors.Is(a.err, errStopped):
				key = "stopped"
			case errors.As(a.err, &ne) && ne.Timeout():
				key = "timed out"
			case a.err != nil:
				key = "failed"
			}
			mu.Lock()
			defer mu.Unlock()
			f.answers[key]++
			if a.status == http.StatusServiceUnavailable {
				f.refusals = append(f.refusals, a)
			}
		})
	}
	wg.Wait()
	close(stopSteady)
	<-steadyDone
	f.steady = steady
	f.growth, f.overAfter = watch.stop()
	t.Logf("%d bodies from %d addresses: answers %v; heap peak +%d MiB; steady client: %v", n, len(from), f.answers, f.growth>>20, steady)
	return f
}

// checkBodyRefusals checks that the flood was refused in part, each
// refusal clear: 503 with Retry-After and a JSON-RPC error naming the
// setting. (That a refused body is not read shows in the heap.)
func checkBodyRefusals(t *testing.T, f bodyFlood, setting string) {
	t.Helper()
	if len(f.refusals) == 0 {
		t.Fatalf("no request body was refused (answers %v)", f.answers)
	}
	named := 0
	for _, a := range f.refusals {
		if a.retryAfter == "" || !strings.Contains(a.body, `"code":-32603`) {
			t.Fatalf("a refusal without Retry-After or JSON-RPC error: %+v", a)
		}
		if strings.Contains(a.body, setting) {
			named++
		}
	}
	if named == 0 {
		t.Errorf("no refusal names %s; first: %s", setting, f.refusals[0].body)
	}
}

// TestSlowBodyFloodFromOneAddressIsBounded: 1,500 concurrent, slowly sent
// 4 MiB bodies from one address (which took the server to 9.9 GiB and
// killed it) hold at most that client's share of the body budget, and a
// steady client on another address is served throughout.
func TestSlowBodyFloodFromOneAddressIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("1,500 slow 4 MiB bodies: skipped with -short")
	}
	hh := newHTTPHarness(t, Options{})
	const perClient = 64 << 20 // the default [http] max_body_bytes_in_flight_per_client
	limit := uint64(2*perClient + floodSlack)
	f := floodBodies(t, hh.url, 1500, []string{"127.0.0.2"}, limit)
	if f.overAfter > 0 {
		t.Fatalf("the heap grew by more than %d MiB after %v: the bodies in flight are not bounded", limit>>20, f.overAfter)
	}
	checkBodyRefusals(t, f, "[http] max_body_bytes_in_flight_per_client (")
	if len(f.steady.failures) > 0 {
		t.Errorf("the steady client failed %d of %d calls: %v", len(f.steady.failures), f.steady.calls, f.steady.failures)
	}
}

// TestSlowBodyFloodFromManyAddressesStaysWithinTheBudget: the same flood
// spread over 30 addresses, each within its own share, meets the
// server-wide budget: the heap stays within it, and what is refused is
// refused fast, naming the setting.
func TestSlowBodyFloodFromManyAddressesStaysWithinTheBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("1,500 slow 4 MiB bodies: skipped with -short")
	}
	hh := newHTTPHarness(t, Options{})
	const budget = 256 << 20 // the default [http] max_body_bytes_in_flight
	limit := uint64(2*budget + floodSlack)
	var from []string
	for i := range 30 {
		from = append(from, fmt.Sprintf("127.0.0.%d", 10+i))
	}
	f := floodBodies(t, hh.url, 1500, from, limit)
	if f.overAfter > 0 {
		t.Fatalf("the heap grew by more than %d MiB after %v: the bodies in flight are not bounded", limit>>20, f.overAfter)
	}
	checkBodyRefusals(t, f, "[http] max_body_bytes_in_flight (")
	// The steady client shares the spent budget with 30 others: it may be
	// refused too, but only as the flood is (503, retry later).
	for _, failure := range f.steady.failures {
		if !strings.Contains(failure, "status 503") {
			t.Errorf("the steady client: %s", failure)
		}
	}
}

// TestBodiesOfUnknownLengthReserveMaxBodyBytes: a chunked body, whose
// length the server learns only at its end, holds max_body_bytes of its
// client's budget while it is received: 16 of them take the default 64 MiB
// of one client, the next is refused, and once one ends the next is read.
func TestBodiesOfUnknownLengthReserveMaxBodyBytes(t *testing.T) {
	hh := newHTTPHarness(t, Options{})
	addr := strings.TrimPrefix(hh.url, "http://")
	start := func() (net.Conn, *bufio.Reader) {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.4")}}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
		if _, err := fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", addr, len(ping), ping); err != nil {
			t.Fatal(err)
		}
		return c, bufio.NewReader(c)
	}
	// answer reads the answer to a request, if one comes within wait.
	answer := func(c net.Conn, r *bufio.Reader, wait time.Duration) (*http.Response, error) {
		_ = c.SetReadDeadline(time.Now().Add(wait))
		resp, err := http.ReadResponse(r, nil)
		if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		return resp, nil
	}
	type conn struct {
		net.Conn
		r *bufio.Reader
	}
	var conns []conn
	for range 17 {
		c, r := start()
		conns = append(conns, conn{c, r})
	}
	answers := make([]*http.Response, len(conns))
	errs := make([]error, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Go(func() { answers[i], errs[i] = answer(c, c.r, 2*time.Second) })
	}
	wg.Wait()
	var held []net.Conn
	for i, resp := range answers {
		switch {
		case errs[i] != nil:
			t.Fatal(errs[i])
		case resp == nil:
			held = append(held, conns[i])
		case resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "":
			t.Fatalf("a body of unknown length was answered %d before its end", resp.StatusCode)
		}
	}
	if len(held) != 16 {
		t.Fatalf("%d of 17 bodies of unknown length from one client are being received, want 16", len(held))
	}
	// One of the 16 ends its body: its answer comes, and a new one is read.
	if _, err := io.WriteString(held[0], "0\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	if resp, err := answer(held[0], bufio.NewReader(held[0]), 5*time.Second); resp == nil || resp.StatusCode == http.StatusServiceUnavailable {
		t.Fatalf("the body that ended: %v, %v", resp, err)
	}
	c, r := start()
	if resp, err := answer(c, r, 500*time.Millisecond); resp != nil || err != nil {
		t.Fatalf("a body started once the budget has room again was answered before it ended: %v, %v", resp, err)
	}
}

// TestSlowlorisFromOneAddressDoesNotDelayOthers: 5,000 connections from
// one address that send their headers a line at a time (which raised a
// steady client's worst latency to 1.9 s) are held only up to the
// per-client cap; the others are refused at once, and a steady client on
// another address gets every answer in time.
func TestSlowlorisFromOneAddressDoesNotDelayOthers(t *testing.T) {
	if testing.Short() {
		t.Skip("5,000 slowloris connections: skipped with -short")
	}
	const perClient = 512 // the default [http] max_connections_per_client
	hh, _, _ := serveOnLoopback(t, Options{})
	addr := strings.TrimPrefix(hh.url, "http://")
	steady := newSteadyClient(t, hh.url, "127.0.0.3")
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { steady.pingUntil(stop); close(done) }()

	began := time.Now()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
	conns := make([]net.Conn, 5000)
	t.Cleanup(func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	})
	var wg sync.WaitGroup
	var dialErr error
	var dialOnce sync.Once
	for g := range 10 {
		wg.Go(func() {
			for i := g; i < len(conns); i += 10 {
				c, err := d.Dial("tcp", addr)
				if err != nil {
					dialOnce.Do(func() { dialErr = err })
					return
				}
				conns[i] = c
				_, _ = fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\n", addr)
			}
		})
	}
	wg.Wait()
	if dialErr != nil {
		t.Fatal(dialErr)
	}
	t.Logf("5,000 connections in %v", time.Since(began))
	// For 3 s, each connection sends one more header line a second.
	for i := range 3 {
		time.Sleep(time.Second) // kept: the slow client under test, one header line a second
		for _, c := range conns {
			_, _ = fmt.Fprintf(c, "X-Slow-%d: 1\r\n", i)
		}
	}
	close(stop)
	<-done

	// A held connection has nothing to read: 50 readers wait 20 ms on each.
	var mu sync.Mutex
	held, refusals := 0, map[string]int{}
	var refusal []byte
	for g := range 50 {
		wg.Go(func() {
			buf := make([]byte, 4096)
			for i := g; i < len(conns); i += 50 {
				_ = conns[i].SetReadDeadline(time.Now().Add(20 * time.Millisecond))
				n, err := conns[i].Read(buf)
				var ne net.Error
				mu.Lock()
				switch {
				case n > 0:
					refusals["answered"]++
					refusal = bytes.Clone(buf[:n])
				case errors.As(err, &ne) && ne.Timeout():
					held++
				case errors.Is(err, syscall.ECONNRESET):
					refusals["reset"]++
				default:
					refusals[err.Error()]++ // EOF
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	// A connection the server had not accepted yet, still in the listen
	// backlog, looks held too: those that are still silent after another
	// half second, all read at once, are held.
	for _, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	}
	held = 0
	for _, c := range conns {
		wg.Go(func() {
			var ne net.Error
			if _, err := c.Read(make([]byte, 1)); errors.As(err, &ne) && ne.Timeout() {
				mu.Lock()
				held++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	t.Logf("5,000 slowloris connections: %d held, refused %v; steady client: %v", held, refusals, steady)
	if held > perClient {
		t.Errorf("the server holds %d connections from one address, more than max_connections_per_client (%d)", held, perClient)
	}
	if refusal != nil && (!bytes.HasPrefix(refusal, []byte("HTTP/1.1 503 ")) || !bytes.Contains(refusal, []byte("max_connections_per_client"))) {
		t.Errorf("a refused connection was told %q, want 503 naming max_connections_per_client", refusal)
	}
	if len(steady.failures) > 0 {
		t.Errorf("the steady client failed: %v", steady.failures)
	}
	// Generous: the machine is shared, and this process is the flood too.
	if steady.worst > time.Second {
		t.Errorf("the steady client waited %v for an answer (%v into the flood)", steady.worst, steady.worstAt)
	}
}

// TestConnectionsAreBoundedInAll: beyond max_connections, a connection from
// any address is answered 503 naming the setting, and closed; once one
// closes, the next is served.
func TestConnectionsAreBoundedInAll(t *testing.T) {
	hh, _, _ := serveOnLoopback(t, Options{MaxConnections: 3})
	addr := strings.TrimPrefix(hh.url, "http://")
	dial := func(from string) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// answer sends a ping without a session and reads the status line and
	// body of the answer.
	answer := func(c net.Conn) string {
		t.Helper()
		ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
		_, _ = fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s", addr, len(ping), ping)
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.Status + " " + string(body)
	}
	var open []net.Conn
	for _, from := range []string{"127.0.0.5", "127.0.0.6", "127.0.0.7"} {
		c := dial(from)
		if got := answer(c); !strings.HasPrefix(got, "400 ") { // no session: served, and refused by the MCP endpoint
			t.Fatalf("connection from %s: %s", from, got)
		}
		open = append(open, c)
	}
	if got := answer(dial("127.0.0.8")); !strings.HasPrefix(got, "503 ") || !strings.Contains(got, "[http] max_connections (3)") {
		t.Fatalf("a fourth connection: %s, want 503 naming max_connections", got)
	}
	open[0].Close()
	var got string
	if !poll.Within(5*time.Second, func() bool { got = answer(dial("127.0.0.8")); return strings.HasPrefix(got, "400 ") }) {
		t.Fatalf("a connection after one of the three closed: %s", got)
	}
}

// TestIdleSessionsEndWithinMinutesByDefault: a session its client
// abandoned keeps its place under max_sessions and max_sessions_per_client
// until it idles out, which by default takes minutes, not half an hour.
func TestIdleSessionsEndWithinMinutesByDefault(t *testing.T) {
	if got := (Options{}).withDefaults().SessionIdleTimeout; got > 5*time.Minute {
		t.Errorf("default SessionIdleTimeout %v, want at most 5m", got)
	}
}

// TestSessionRefusalsNameTheirSetting: a new session refused at a session
// cap says which setting to raise.
func TestSessionRefusalsNameTheirSetting(t *testing.T) {
	for _, tc := range []struct {
		opts    Options
		setting string
	}{
		{Options{MaxSessions: 1}, "[http] max_sessions (1)"},
		{Options{MaxSessionsPerClient: 1}, "[http] max_sessions_per_client (1)"},
	} {
		hh := newHTTPHarness(t, tc.opts)
		hh.initSession(t, host.Version20251125)
		resp := hh.do(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), tc.setting) {
			t.Errorf("a session beyond %s: %d %s", tc.setting, resp.StatusCode, body)
		}
	}
}
