package mcphttp

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testrig/poll"
)

func TestLegacySSETransport(t *testing.T) {
	hh := newHTTPHarness(t, Options{})
	stream := hh.do(t, http.MethodGet, "/sse", "", "Accept", "text/event-stream")
	events := readEvents(t, stream)
	endpoint, _ := events.next(t)
	id, ok := strings.CutPrefix(endpoint.data, "/messages?sessionId=")
	if endpoint.name != "endpoint" || !ok || id == "" {
		t.Fatalf("first event %+v", endpoint)
	}
	post := func(path, body string) int {
		return hh.status(t, http.MethodPost, path, body, "Accept", "")
	}
	if got := post(endpoint.data, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05"}}`); got != http.StatusAccepted {
		t.Fatalf("POST initialize: %d", got)
	}
	if e, m := events.message(t); e.name != "message" || m["result"].(map[string]any)["protocolVersion"] != host.Version20241105 {
		t.Fatalf("initialize response %+v", e)
	}
	if got := post("/messages", `{"jsonrpc":"2.0","id":2,"method":"ping"}`); got != http.StatusBadRequest {
		t.Errorf("POST without sessionId: %d", got)
	}
	if got := post("/messages?sessionId=nope", `{"jsonrpc":"2.0","id":2,"method":"ping"}`); got != http.StatusNotFound {
		t.Errorf("POST to an unknown session: %d", got)
	}
	if got := hh.status(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":2,"method":"ping"}`, headerSessionID, id); got != http.StatusNotFound {
		t.Errorf("a legacy session id on /mcp: %d", got)
	}

	stream.Body.Close() // the session ends with its stream
	poll.Until(t, 5*time.Second, "the session ends with its stream", func() bool { return hh.session(id) == nil })
	if got := post(endpoint.data, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); got != http.StatusNotFound {
		t.Errorf("POST after the stream closed: %d", got)
	}
}
