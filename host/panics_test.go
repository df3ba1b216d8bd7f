package host

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/syncbuf"
)

// A panic while a request is served, or a task runs, answers that request
// with an internal error (or fails that task), logged at error level with
// the panic's stack: the server, its sessions and their other requests
// carry on. Unrecovered, it ended the process.
func TestAPanicServingARequestFailsOnlyThatRequest(t *testing.T) {
	optional := &abi.ToolExecution{TaskSupport: "optional"}
	p := NewPlugin("p", "", fakeRuntime{
		abi.ExportListTools: returns(abi.ListToolsResult{Tools: []abi.Tool{
			{Name: "boom", InputSchema: openSchema, Execution: optional},
			{Name: "fine", InputSchema: openSchema, Execution: optional},
		}}),
		abi.ExportCallTool: func(_ context.Context, in []byte) ([]byte, error) {
			if strings.Contains(string(in), `"boom"`) {
				var none map[string]int
				none["x"] = 1 // a bug: a write to a nil map
			}
			return json.Marshal(abi.CallToolResult{Content: []abi.Content{{Type: "text", Text: "fine"}}})
		},
	})
	var logs syncbuf.Buffer
	srv := NewServer(Options{Name: "test", Version: "1", Logger: slog.New(slog.NewTextHandler(&logs, nil))}, BuildCatalog(context.Background(), []*Plugin{p}, nil))
	h := session(t, srv)
	h.init(t, Version20251125)
	want := "internal error: mcphost failed serving tools/call (a bug of the server, logged with its stack)"
	boom := h.call(t, 1, "tools/call", map[string]any{"name": "boom", "arguments": map[string]any{}})
	if code := errCode(t, boom); code != CodeInternalError || boom["error"].(map[string]any)["message"] != want {
		t.Fatalf("a call that panics: %v, want the error %q", boom, want)
	}
	if !strings.Contains(logs.String(), `level=ERROR msg="serving tools/call panicked`) || !strings.Contains(logs.String(), "assignment to entry in nil map") ||
		!strings.Contains(logs.String(), "panics_test.go") {
		t.Fatalf("the log does not have the panic with its stack:\n%s", logs.String())
	}
	if res := result(t, h.call(t, 2, "tools/call", map[string]any{"name": "fine", "arguments": map[string]any{}})); fmt.Sprint(res["content"]) != "[map[text:fine type:text]]" {
		t.Fatalf("a call after the panic: %v", res)
	}

	// A task whose run panics fails with the error.
	created := h.startTask(t, 3, "boom", map[string]any{})
	failed := h.taskStatus(t, created["taskId"].(string), "failed")
	if msg := fmt.Sprint(failed["statusMessage"]); !strings.Contains(msg, "mcphost failed serving a task's run") {
		t.Errorf("the task whose run panicked: %v", failed)
	}

	// A 2026-07-28 call of a client with the tasks extension runs on a
	// goroutine of its own, which may become a task's.
	modern := session(t, srv)
	modern.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"boom","arguments":{},"_meta":` + modernMeta(tasksCaps, "") + `}}`)
	if resp := modern.out.next(t); errCode(t, resp) != CodeInternalError || resp["error"].(map[string]any)["message"] != want {
		t.Errorf("a 2026-07-28 call that panics: %v, want the error %q", resp, want)
	}
}
