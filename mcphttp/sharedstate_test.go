package mcphttp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testrig/redistest"
)

// replicaHarnesses starts n handlers, each of its own server, that share
// the Redis r for their sessions and one requestState key, as the
// replicas of one service behind a load balancer do.
func replicaHarnesses(t *testing.T, r *redistest.Server, n int) []*httpHarness {
	t.Helper()
	var out []*httpHarness
	for range n {
		srv := host.NewServer(host.Options{Name: "test", Version: "1", SessionStore: r.Store("t:"), SessionTTL: time.Minute,
			RequestStateKeys: [][]byte{[]byte("0123456789abcdef0123456789abcdef")}},
			host.BuildCatalog(context.Background(), []*host.Plugin{toolsPlugin("p", abi.Tool{Name: "echo", InputSchema: mustJSON(map[string]any{"type": "object"})})}, nil))
		ts := httptest.NewUnstartedServer(nil)
		h := NewHandler(srv, ts.Listener.Addr().String(), Options{})
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
// ends it on all, each then answering 404; and a request while Redis is
// down fails with 503 and an error naming Redis, then succeeds once it is
// back.
func TestEveryRequestOfASessionMayLandOnAnotherReplica(t *testing.T) {
	r := redistest.Start(t)
	reps := replicaHarnesses(t, r, 3)
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
	resp := reps[2].do(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, headerSessionID, id)
	raw, _ := io.ReadAll(resp.Body)
	body := string(raw)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "redis at "+r.Addr) {
		t.Errorf("tools/list with Redis down: %d %s, want 503 and an error naming Redis", resp.StatusCode, body)
	}
	r.Restart()
	if code := reps[2].status(t, http.MethodPost, "/mcp", list, headerSessionID, id); code != http.StatusOK {
		t.Errorf("tools/list once Redis is back: %d", code)
	}

	if code := reps[2].status(t, http.MethodDelete, "/mcp", "", headerSessionID, id); code != http.StatusNoContent {
		t.Fatalf("DELETE on the third replica: %d", code)
	}
	for i, rep := range reps {
		if code := rep.status(t, http.MethodPost, "/mcp", list, headerSessionID, id); code != http.StatusNotFound {
			t.Errorf("tools/list on replica %d after the DELETE: %d, want 404", i, code)
		}
	}
}
