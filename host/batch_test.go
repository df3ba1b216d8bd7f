package host

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/syncbuf"
)

// TestStdioWritesBatchReplyBeforeReturning checks that when stdin ends
// right after a batch, ServeStdio returns only once the batch's reply is
// written. The reply goes out from its own goroutine, so the test runs it
// many times to catch that goroutine outliving ServeStdio.
func TestStdioWritesBatchReplyBeforeReturning(t *testing.T) {
	t.Parallel()
	in := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]
`
	srv := NewServer(Options{}, nil)
	for run := range 50 {
		// syncbuf.Buffer: a reply written after ServeStdio returns is a wrong
		// output, not a data race.
		var out syncbuf.Buffer
		if err := srv.ServeStdio(t.Context(), strings.NewReader(in), &out, time.Second); err != nil {
			t.Fatalf("run %d: ServeStdio: %v", run, err)
		}
		written := out.String()
		lines := strings.Split(strings.TrimSuffix(written, "\n"), "\n")
		if len(lines) != 2 {
			t.Fatalf("run %d: %d lines written, want the initialize response and the batch reply:\n%s", run, len(lines), written)
		}
		var reply []struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(lines[1]), &reply); err != nil {
			t.Fatalf("run %d: batch reply %q: %v", run, lines[1], err)
		}
		if len(reply) != 2 || reply[0].ID+reply[1].ID != 3 || reply[0].Result == nil || reply[1].Result == nil {
			t.Fatalf("run %d: batch reply %s, want the results of requests 1 and 2", run, lines[1])
		}
	}
}

// TestStdioBatchOfBlockedCallsEndsAtShutdown checks that counting a batch's
// reply does not hold up the end of a session: when stdin ends while the
// batch's calls block, the grace runs out, the calls are cancelled, their
// errors go out as the batch's reply and ServeStdio returns.
func TestStdioBatchOfBlockedCallsEndsAtShutdown(t *testing.T) {
	t.Parallel()
	block := func(ctx context.Context, _ []byte) ([]byte, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	plugin := NewPlugin("p", "", fakeRuntime{
		abi.ExportListTools: returns(abi.ListToolsResult{Tools: []abi.Tool{{Name: "block", InputSchema: json.RawMessage(`{"type":"object"}`)}}}),
		abi.ExportCallTool:  block,
	})
	srv := NewServer(Options{}, BuildCatalog(t.Context(), []*Plugin{plugin}, nil))
	in := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block"}},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block"}}]
`
	var out syncbuf.Buffer
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(t.Context(), strings.NewReader(in), &out, 50*time.Millisecond) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ServeStdio: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeStdio did not return after its grace")
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[1], "[") || strings.Count(lines[1], `"id":`) != 2 {
		t.Errorf("output %q, want the initialize response and a reply to both calls", out.String())
	}
}

// TestARequestToTheClientFromABatchGoesOutAtOnce: a call in a 2025-03-26
// batch that asks the client to sample gets its request out while the
// batch runs, not in the batch's reply (which waits for that call, and
// which holds only responses); once the client answers, the reply holds
// the call's result.
func TestARequestToTheClientFromABatchGoesOutAtOnce(t *testing.T) {
	h := newHarness(t, callerPlugin(hostFn(t, abi.HostCreateMessage)))
	initWithCaps(t, h, Version20250326, `{"sampling":{}}`)
	h.send(`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}}},{"jsonrpc":"2.0","id":2,"method":"ping"}]`)
	req := h.out.next(t)
	if req["method"] != "sampling/createMessage" {
		t.Fatalf("want the sampling request before the batch's reply, got %v", req)
	}
	id, _ := json.Marshal(req["id"])
	h.send(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"role":"assistant","content":{"type":"text","text":"hello"},"model":"m"}}`)
	next := h.out.next(t)
	reply, ok := next["batch"].([]map[string]any)
	if !ok || len(reply) != 2 {
		t.Fatalf("got %v, want the batch's reply with the two responses", next)
	}
	for _, m := range reply {
		if m["method"] != nil || m["result"] == nil {
			t.Errorf("batch reply holds %v, want responses with results only", m)
		}
	}
}
