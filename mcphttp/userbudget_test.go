package mcphttp

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testrig/poll"
)

// The tests of whom the per-client caps on request bodies and sessions
// count: the user, when requests name one, else the address.

// peer is a client of the per-client caps: a loopback address and the
// user its requests are authenticated as (asTestUser), "" for none.
type peer struct{ from, user string }

func (p peer) String() string { return fmt.Sprintf("%q from %s", p.user, p.from) }

// userCapCase is two peers, the first of which fills its cap, and whether
// the second is still served: whether the two have a cap each.
type userCapCase struct {
	name             string
	subjectsAreUsers bool
	holder, other    peer
	separate         bool
}

var userCapCases = []userCapCase{
	{"two users behind one address", true, peer{"127.0.0.1", "alice"}, peer{"127.0.0.1", "bob"}, true},
	{"a user named like an address, and that address without a user", true, peer{"127.0.0.1", "127.0.0.1"}, peer{"127.0.0.1", ""}, true},
	{"two holders of a shared token behind one address", false, peer{"127.0.0.1", "alice"}, peer{"127.0.0.1", "bob"}, false},
	{"one address without auth", false, peer{"127.0.0.1", ""}, peer{"127.0.0.1", ""}, false},
	{"two addresses without auth", false, peer{"127.0.0.2", ""}, peer{"127.0.0.3", ""}, true},
}

// userHarness serves a server whose requests asTestUser authenticates.
func userHarness(t *testing.T, opts Options) *httpHarness {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	srv := host.NewServer(host.Options{Name: "test", Version: "1", Subject: testUser}, nil)
	opts.Middleware = asTestUser
	h := NewHandler(srv, ts.Listener.Addr().String(), opts)
	ts.Config.Handler = h
	ts.Start()
	t.Cleanup(func() { h.Close(); ts.Close() })
	return &httpHarness{h: h, url: ts.URL}
}

const initializeBody = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// post sends body to /mcp as p and returns the status and the body of the
// answer.
func (p peer) post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	client := clientFrom(p.from)
	defer client.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if p.user != "" {
		req.Header.Set("X-User", p.user)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(answer)
}

// holdBody starts a POST to /mcp as p that declares a body of n bytes and
// sends none of it: the server holds n bytes of the body budgets for it
// until the test ends.
func (p peer) holdBody(t *testing.T, url string, n int) {
	t.Helper()
	addr := strings.TrimPrefix(url, "http://")
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(p.from)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	user := ""
	if p.user != "" {
		user = "X-User: " + p.user + "\r\n"
	}
	if _, err := fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\n%sContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n", addr, user, n); err != nil {
		t.Fatal(err)
	}
}

// refusedUntil sends body as p until it is refused with 503 naming
// setting, and fails the test if that takes longer than 5 s.
func (p peer) refusedUntil(t *testing.T, url, body, setting string) {
	t.Helper()
	var status int
	var answer string
	if !poll.Within(5*time.Second, func() bool {
		status, answer = p.post(t, url, body)
		return status == http.StatusServiceUnavailable && strings.Contains(answer, setting)
	}) {
		t.Fatalf("%v is still not refused for %s: %d %s", p, setting, status, answer)
	}
}

// check checks the second peer's initialize after the first filled its
// cap: served when they have a cap each, else refused naming setting.
func (c userCapCase) check(t *testing.T, url, setting string) {
	t.Helper()
	status, answer := c.other.post(t, url, initializeBody)
	switch {
	case c.separate && status != http.StatusOK:
		t.Errorf("%v, once %v filled its %s: %d %s, want 200", c.other, c.holder, setting, status, answer)
	case !c.separate && (status != http.StatusServiceUnavailable || !strings.Contains(answer, setting)):
		t.Errorf("%v, once %v filled their shared %s: %d %s, want 503 naming it", c.other, c.holder, setting, status, answer)
	}
}

// TestBodyBudgetsPerClientAreKeyedOnTheUser: with SubjectsAreUsers, one
// user holding its whole share of bodies in flight does not refuse
// another user, nor a request without a user, from the same address; a
// user's key never meets an address's. Without it, the address is the
// client.
func TestBodyBudgetsPerClientAreKeyedOnTheUser(t *testing.T) {
	const setting = "[http] max_body_bytes_in_flight_per_client (1024 bytes)"
	for _, c := range userCapCases {
		t.Run(c.name, func(t *testing.T) {
			hh := userHarness(t, Options{SubjectsAreUsers: c.subjectsAreUsers, MaxBodyBytes: 1024, MaxBodyBytesInFlightPerClient: 1024})
			c.holder.holdBody(t, hh.url, 1024)
			c.holder.refusedUntil(t, hh.url, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, setting)
			c.check(t, hh.url, setting)
		})
	}
}

// TestSessionCapsPerClientAreKeyedOnTheUser: the same of
// max_sessions_per_client.
func TestSessionCapsPerClientAreKeyedOnTheUser(t *testing.T) {
	const setting = "[http] max_sessions_per_client (1)"
	for _, c := range userCapCases {
		t.Run(c.name, func(t *testing.T) {
			hh := userHarness(t, Options{SubjectsAreUsers: c.subjectsAreUsers, MaxSessionsPerClient: 1})
			if status, answer := c.holder.post(t, hh.url, initializeBody); status != http.StatusOK {
				t.Fatalf("%v's first session: %d %s", c.holder, status, answer)
			}
			c.holder.refusedUntil(t, hh.url, initializeBody, setting)
			c.check(t, hh.url, setting)
		})
	}
}
