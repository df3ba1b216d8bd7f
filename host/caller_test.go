package host

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

// TestCallerNamesTheSubjectAndSessionOfAPluginCall: a plugin call made for
// a client request knows whom it serves; one the host makes itself does
// not. Two sessions get two session ids.
func TestCallerNamesTheSubjectAndSessionOfAPluginCall(t *testing.T) {
	var listedBy []bool
	p := NewPlugin("p", "", fakeRuntime{
		abi.ExportListTools: func(ctx context.Context, _ []byte) ([]byte, error) {
			_, _, ok := Caller(ctx)
			listedBy = append(listedBy, ok)
			return json.Marshal(abi.ListToolsResult{Tools: []abi.Tool{{Name: "who", InputSchema: objectSchema}}})
		},
		abi.ExportCallTool: func(ctx context.Context, _ []byte) ([]byte, error) {
			subject, session, ok := Caller(ctx)
			if !ok {
				return nil, &CallError{Own: true, Message: "no caller"}
			}
			return json.Marshal(abi.CallToolResult{Content: []abi.Content{{Type: abi.ContentText, Text: subject + "|" + session}}})
		},
	})
	srv := NewServer(Options{Subject: func(context.Context) string { return "alice" }}, BuildCatalog(t.Context(), []*Plugin{p}, nil))
	if len(listedBy) != 1 || listedBy[0] {
		t.Fatalf("the host's own listing has a caller: %v", listedBy)
	}
	var sessions []string
	for range 2 {
		out := newRecorder()
		h := &harness{srv: srv, sess: srv.NewSession(out), out: out}
		t.Cleanup(h.sess.Close)
		h.init(t, Version20251125)
		text := result(t, h.call(t, 1, "tools/call", map[string]any{"name": "who", "arguments": map[string]any{"n": 1}}))["content"].([]any)[0].(map[string]any)["text"].(string)
		subject, session, _ := strings.Cut(text, "|")
		if subject != "alice" || session == "" {
			t.Fatalf("caller %q", text)
		}
		sessions = append(sessions, session)
	}
	if sessions[0] == sessions[1] {
		t.Errorf("two sessions share the id %q", sessions[0])
	}
}
