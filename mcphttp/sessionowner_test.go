package mcphttp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcphost/mcphost/host"
)

type testUserKey struct{}

// testUser is the subject of a request that asTestUser authenticated.
func testUser(ctx context.Context) string {
	s, _ := ctx.Value(testUserKey{}).(string)
	return s
}

// asTestUser stands in for package auth: it authenticates each request as
// the user its X-User header names, none without one.
func asTestUser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), testUserKey{}, r.Header.Get("X-User"))))
	})
}

// TestAnHTTPSessionBelongsToItsSubject: a session is bound to the
// authenticated subject that opened it. Another subject presenting its id
// gets 404, as for an unknown session, on Streamable HTTP and on the legacy
// SSE transport alike; the owner carries on.
func TestAnHTTPSessionBelongsToItsSubject(t *testing.T) {
	ts := httptest.NewUnstartedServer(nil)
	srv := host.NewServer(host.Options{Name: "test", Version: "1", Subject: testUser}, nil)
	h := NewHandler(srv, ts.Listener.Addr().String(), Options{Middleware: asTestUser})
	ts.Config.Handler = h
	ts.Start()
	t.Cleanup(func() { h.Close(); ts.Close() })
	hh := &httpHarness{h: h, url: ts.URL}

	resp := hh.do(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, "X-User", "alice")
	id := resp.Header.Get(headerSessionID)
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("alice's initialize: %d", resp.StatusCode)
	}
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for _, intruder := range []string{"bob", ""} {
		if code := hh.do(t, http.MethodPost, "/mcp", ping, headerSessionID, id, "X-User", intruder).StatusCode; code != http.StatusNotFound {
			t.Errorf("%q with alice's session id: %d, want 404", intruder, code)
		}
		if code := hh.do(t, http.MethodGet, "/mcp", "", headerSessionID, id, "X-User", intruder, "Accept", "text/event-stream").StatusCode; code != http.StatusNotFound {
			t.Errorf("%q opening alice's stream: %d, want 404", intruder, code)
		}
		if code := hh.do(t, http.MethodDelete, "/mcp", "", headerSessionID, id, "X-User", intruder).StatusCode; code != http.StatusNotFound {
			t.Errorf("%q ending alice's session: %d, want 404", intruder, code)
		}
	}
	if code := hh.do(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, headerSessionID, id, "X-User", "alice").StatusCode; code != http.StatusAccepted {
		t.Fatalf("alice in her own session: %d", code)
	}

	events := readEvents(t, hh.do(t, http.MethodGet, "/sse", "", "X-User", "alice"))
	defer events.body.Close()
	e, _ := events.next(t)
	if e.name != "endpoint" {
		t.Fatalf("legacy SSE: %+v", e)
	}
	if code := hh.do(t, http.MethodPost, e.data, ping, "X-User", "bob").StatusCode; code != http.StatusNotFound {
		t.Errorf("bob posting to alice's SSE session: %d, want 404", code)
	}
	if code := hh.do(t, http.MethodPost, e.data, ping, "X-User", "alice").StatusCode; code != http.StatusAccepted {
		t.Errorf("alice posting to her SSE session: %d", code)
	}
}
