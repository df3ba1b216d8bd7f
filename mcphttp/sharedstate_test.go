package mcphttp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/mcphost/mcphost/internal/testrig/redistest"
)

// replicaHarnesses starts n handlers, each of its own server, that share
// the Redis r for their sessions and one requestState key, as the
// replicas of one service behind a load balancer do.
func replicaHarnesses(t *testing.T, r *redistest.Server, n int, opts Options, roundTrip ...func(string)) []*httpHarness {
	t.Helper()
	var out []*httpHarness
	for range n {
		srv := host.NewServer(host.Options{Name: "test", Version: "1", SessionStore: r.Store("t:", roundTrip...), SessionTTL: time.Minute,
			RequestStateKeys: [][]byte{[]byte("0123456789abcdef0123456789abcdef")}},
			host.BuildCatalog(context.Background(), []*host.Plugin{toolsPlugin("p", abi.Tool{Name: "echo", InputSchema: mustJSON(map[string]any{"type": "object"})})}, nil))
		ts := httptest.NewUnstartedServer(nil)
		h := NewHandler(srv, ts.Listener.Addr().String(), opts)
		ts.Config.Handler = h
		ts.Start()
		t.Cleanup(func() { h.Close(); ts.Close() })
		out = append(out, &httpHarness{h: h, url: ts.URL})
	}
	return out
}

// TestEveryRequestOfASessionMayLandOnAnotherReplica initializes a
// Streamable HTTP session on one replica and sends its requests to the
// others, as a load balancer without stickiness would: each serves it; a
// replica that let it go idle (or shut down) resumes it; a DELETE on one
// ends it on all, each answering 404 within host.SessionRefresh; and a
// request while Redis is down fails, once the replica's SessionRefresh has
// passed, with 503 and an error naming Redis, then succeeds once it is
// back.
func TestEveryRequestOfASessionMayLandOnAnotherReplica(t *testing.T) {
	r := redistest.Start(t)
	reps := replicaHarnesses(t, r, 3, Options{})
	id := reps[0].initSession(t, host.Version20251125)
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	for i, rep := range reps {
		if code := rep.status(t, http.MethodPost, "/mcp", list, headerSessionID, id); code != http.StatusOK {
			t.Errorf("tools/list on replica %d: %d", i, code)
		}
	}
	reps[1].h.endHere(reps[1].session(id)) // as an idle timeout does
	if code := reps[1].status(t, http.MethodPost, "/mcp", list, headerSessionID, id); code != http.StatusOK {
		t.Errorf("tools/list on a replica that let the session go: %d", code)
	}

	r.Stop()
	var code int
	var body string
	if !poll.Within(2*host.SessionRefresh+time.Second, func() bool {
		resp := reps[2].do(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, headerSessionID, id)
		raw, _ := io.ReadAll(resp.Body)
		code, body = resp.StatusCode, string(raw)
		return code != http.StatusOK
	}) || code != http.StatusServiceUnavailable || !strings.Contains(body, "redis at "+r.Addr) {
		t.Errorf("tools/list with Redis down, past host.SessionRefresh: %d %s, want 503 and an error naming Redis", code, body)
	}
	r.Restart()
	if code := reps[2].status(t, http.MethodPost, "/mcp", list, headerSessionID, id); code != http.StatusOK {
		t.Errorf("tools/list once Redis is back: %d", code)
	}

	if code := reps[2].status(t, http.MethodDelete, "/mcp", "", headerSessionID, id); code != http.StatusNoContent {
		t.Fatalf("DELETE on the third replica: %d", code)
	}
	for i, rep := range reps {
		if !poll.Within(2*host.SessionRefresh, func() bool {
			return rep.status(t, http.MethodPost, "/mcp", list, headerSessionID, id) == http.StatusNotFound
		}) {
			t.Errorf("tools/list on replica %d within %v of the DELETE: not 404", i, 2*host.SessionRefresh)
		}
	}
}

// TestRedisRoundTripsOfEachKindOfRequest counts the round trips to Redis
// each kind of request of a 2025-11-25 session costs (a script is one),
// on the replica that holds the session and on one that resumes it, and
// holds each to its bound: what RATIONALE.md ("How many Redis round trips
// does a request cost?") reports.
func TestRedisRoundTripsOfEachKindOfRequest(t *testing.T) {
	r := redistest.Start(t)
	var trips atomic.Int64
	reps := replicaHarnesses(t, r, 2, Options{}, func(string) { trips.Add(1) })
	cost := func(rep *httpHarness, method, body string, headers ...string) (int, *http.Response) {
		before := trips.Load()
		resp := rep.do(t, method, "/mcp", body, headers...)
		io.Copy(io.Discard, resp.Body)
		return int(trips.Load() - before), resp
	}
	init, resp := cost(reps[0], http.MethodPost, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	id := resp.Header.Get(headerSessionID)
	initialized, _ := cost(reps[0], http.MethodPost, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, headerSessionID, id)
	held := map[string]int{}
	for method, body := range map[string]string{
		"tools/list": `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		"tools/call": `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}`,
		"ping":       `{"jsonrpc":"2.0","id":3,"method":"ping"}`,
	} {
		held[method], _ = cost(reps[0], http.MethodPost, body, headerSessionID, id)
	}
	resumed, _ := cost(reps[1], http.MethodPost, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, headerSessionID, id)
	deleted, _ := cost(reps[1], http.MethodDelete, "", headerSessionID, id)
	t.Logf("Redis round trips: initialize %d, notifications/initialized %d, on the replica holding the session %v, tools/list resumed on another %d, DELETE %d",
		init, initialized, held, resumed, deleted)
	for method, n := range held {
		if n > 1 {
			t.Errorf("%s on the replica holding the session took %d Redis round trips, want at most 1 (a touch a host.SessionRefresh)", method, n)
		}
	}
	if resumed > 3 {
		t.Errorf("tools/list resumed on another replica took %d Redis round trips, want at most 3", resumed)
	}
}

// TestSessionLimitsHoldAcrossReplicas opens sessions from one client on
// two replicas sharing Redis with max_sessions_per_client = 2 and
// max_sessions = 3: the third of the client's is refused on either,
// naming the setting, though each replica holds one; a DELETE frees its
// place; another client is refused beyond 3 sessions in all.
func TestSessionLimitsHoldAcrossReplicas(t *testing.T) {
	r := redistest.Start(t)
	reps := replicaHarnesses(t, r, 2, Options{MaxSessionsPerClient: 2, MaxSessions: 3, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	initialize := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	open := func(rep *httpHarness, client string) (string, int, string) {
		t.Helper()
		resp := rep.do(t, http.MethodPost, "/mcp", initialize, "X-Forwarded-For", client)
		body, _ := io.ReadAll(resp.Body)
		return resp.Header.Get(headerSessionID), resp.StatusCode, string(body)
	}
	first, code, _ := open(reps[0], "10.0.0.1")
	if _, code2, _ := open(reps[1], "10.0.0.1"); code != http.StatusOK || code2 != http.StatusOK {
		t.Fatalf("the client's first two sessions, one a replica: %d, %d", code, code2)
	}
	for i, rep := range reps {
		if _, code, body := open(rep, "10.0.0.1"); code != http.StatusServiceUnavailable || !strings.Contains(body, "max_sessions_per_client (2) are open across the service's replicas") {
			t.Errorf("the client's third session, on replica %d: %d %s, want 503 naming max_sessions_per_client", i, code, body)
		}
	}
	if code := reps[1].status(t, http.MethodDelete, "/mcp", "", headerSessionID, first, "X-Forwarded-For", "10.0.0.1"); code != http.StatusNoContent {
		t.Fatalf("DELETE of the client's first session on the other replica: %d", code)
	}
	if _, code, body := open(reps[1], "10.0.0.1"); code != http.StatusOK {
		t.Errorf("a session after the DELETE freed a place: %d %s", code, body)
	}
	if _, code, _ := open(reps[0], "10.0.0.2"); code != http.StatusOK {
		t.Errorf("another client's first session, the third in all: %d", code)
	}
	if _, code, body := open(reps[1], "10.0.0.3"); code != http.StatusServiceUnavailable || !strings.Contains(body, "max_sessions (3) are open across the service's replicas") {
		t.Errorf("a fourth session in all: %d %s, want 503 naming max_sessions", code, body)
	}
}

// closingAfterAdmit is a shared session store that closes the handler
// right after it admits a session, as a shutdown that comes while the
// place is being taken.
type closingAfterAdmit struct {
	host.SharedSessionStore
	h atomic.Pointer[Handler]
}

func (c *closingAfterAdmit) Admit(ctx context.Context, id, client string, ttl time.Duration, most, perClient int) (string, error) {
	refused, err := c.SharedSessionStore.Admit(ctx, id, client, ttl, most, perClient)
	c.h.Load().Close()
	return refused, err
}

// TestASessionRefusedAfterItsPlaceWasTakenFreesIt shuts a replica down
// while a new session's place in Redis is being taken: the session is
// refused, and its place is freed at once rather than held until its TTL.
func TestASessionRefusedAfterItsPlaceWasTakenFreesIt(t *testing.T) {
	r := redistest.Start(t)
	store := &closingAfterAdmit{SharedSessionStore: r.Store("t:")}
	srv := host.NewServer(host.Options{Name: "test", Version: "1", SessionStore: store, SessionTTL: time.Minute,
		RequestStateKeys: [][]byte{[]byte("0123456789abcdef0123456789abcdef")}}, host.BuildCatalog(context.Background(), nil, nil))
	ts := httptest.NewUnstartedServer(nil)
	h := NewHandler(srv, ts.Listener.Addr().String(), Options{})
	store.h.Store(h)
	ts.Config.Handler = h
	ts.Start()
	defer ts.Close()
	hh := &httpHarness{h: h, url: ts.URL}
	resp := hh.do(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "shutting down") {
		t.Fatalf("a session opened while the replica shuts down: %d %s", resp.StatusCode, body)
	}
	if n, err := r.Do("ZCARD", "t:sessions"); err != nil || n != "0" {
		t.Errorf("places held in Redis: %s, %v; want the refused session's freed", n, err)
	}
}
