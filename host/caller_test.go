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

// A plugin's input context names the request's protocol version and the
// capabilities its client declared: at initialize for a legacy session, in
// the request's _meta for a 2026-07-28 request.
func TestPluginInputNamesTheVersionAndClientCapabilities(t *testing.T) {
	p := NewPlugin("p", "", fakeRuntime{
		abi.ExportListTools: returns(abi.ListToolsResult{Tools: []abi.Tool{{Name: "ctx", InputSchema: json.RawMessage(`{"type":"object"}`)}}}),
		abi.ExportCallTool: func(_ context.Context, in []byte) ([]byte, error) {
			var input struct {
				Context struct {
					ProtocolVersion    string          `json:"protocolVersion"`
					ClientCapabilities json.RawMessage `json:"clientCapabilities"`
				} `json:"context"`
			}
			_ = json.Unmarshal(in, &input)
			return json.Marshal(abi.CallToolResult{Content: []abi.Content{{Type: abi.ContentText, Text: input.Context.ProtocolVersion + " " + string(canonicalJSON(input.Context.ClientCapabilities))}}})
		},
	})
	h := newHarness(t, p)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ctx","_meta":` + modernMeta(`{"sampling":{}}`, "") + `}}`)
	if got := toolText(t, h.out.next(t)); got != `2026-07-28 {"sampling":{}}` {
		t.Errorf("modern request: the plugin saw %q", got)
	}
	initWithCaps(t, h, Version20250618, `{"roots":{"listChanged":true}}`)
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ctx"}}`)
	got := result(t, h.out.next(t))["content"].([]any)[0].(map[string]any)["text"]
	if got != `2025-06-18 {"roots":{"listChanged":true}}` {
		t.Errorf("legacy session: the plugin saw %q", got)
	}
}

// With authentication, a plugin's input context names the caller: the
// subject and scopes of its token.
func TestPluginInputNamesTheCaller(t *testing.T) {
	var got abi.Context
	p := NewPlugin("p", "", fakeRuntime{
		abi.ExportListTools: returns(abi.ListToolsResult{Tools: []abi.Tool{{Name: "who", InputSchema: objectSchema}}}),
		abi.ExportCallTool: func(_ context.Context, in []byte) ([]byte, error) {
			var input abi.Input
			_ = json.Unmarshal(in, &input)
			got = input.Context
			return json.Marshal(abi.CallToolResult{Content: []abi.Content{{Type: abi.ContentText, Text: "ok"}}})
		},
	})
	srv := NewServer(Options{
		Subject: func(context.Context) string { return "alice" },
		Scopes:  func(context.Context) []string { return []string{"mcp", "notes:write"} },
	}, BuildCatalog(t.Context(), []*Plugin{p}, nil))
	h := session(t, srv)
	toolText(t, modernRequest(t, h, context.Background(), 1, "tools/call", `{}`, `{"name":"who","arguments":{"n":1}}`))
	if got.Subject != "alice" || strings.Join(got.Scopes, " ") != "mcp notes:write" {
		t.Errorf("the plugin saw subject %q scopes %q, want alice [mcp notes:write]", got.Subject, got.Scopes)
	}
}

// A tool call's input context tells the plugin that the host validated its
// arguments against the tool's inputSchema, so that a PDK need not do it
// again in WebAssembly; no other export's context says so.
func TestToolCallInputSaysTheArgumentsWereValidated(t *testing.T) {
	rec := &inputs{}
	p := NewPlugin("p", "", recording(rec, fakeRuntime{
		abi.ExportListTools:   returns(abi.ListToolsResult{Tools: []abi.Tool{{Name: "add", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)}}}),
		abi.ExportCallTool:    returns(abi.CallToolResult{Content: []abi.Content{{Type: abi.ContentText, Text: "ok"}}}),
		abi.ExportListPrompts: returns(abi.ListPromptsResult{Prompts: []abi.Prompt{{Name: "greet"}}}),
		abi.ExportGetPrompt: returns(abi.GetPromptResult{Messages: []abi.PromptMessage{
			{Role: "user", Content: abi.Content{Type: abi.ContentText, Text: "hi"}}}}),
	}))
	h := newHarness(t, p)
	h.init(t, Version20251125)
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"n":1}}}`)
	if res := result(t, h.out.next(t)); res["isError"] == true {
		t.Fatalf("tools/call answered %v", res)
	}
	var input abi.Input
	if err := json.Unmarshal([]byte(rec.last(t, abi.ExportCallTool)), &input); err != nil {
		t.Fatal(err)
	}
	if !input.Context.ArgumentsValidated {
		t.Errorf("call_tool's context does not say the arguments were validated: %s", rec.last(t, abi.ExportCallTool))
	}
	// Arguments the schema refuses never reach the plugin.
	calls := rec.count(abi.ExportCallTool)
	h.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"n":"one"}}}`)
	if res := result(t, h.out.next(t)); res["isError"] != true {
		t.Errorf("arguments against the schema: %v, want an isError result", res)
	}
	if rec.count(abi.ExportCallTool) != calls {
		t.Errorf("the plugin was called with arguments against its schema")
	}
	h.send(`{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"greet"}}`)
	if res := h.out.next(t); res["error"] != nil {
		t.Fatal(res)
	}
	if got := rec.last(t, abi.ExportGetPrompt); strings.Contains(got, "argumentsValidated") {
		t.Errorf("get_prompt's context says arguments were validated: %s", got)
	}
}
