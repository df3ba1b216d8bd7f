package host

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/poll"
)

// observed records what an Observer is told.
type observed struct {
	mu    sync.Mutex
	ops   []Operation
	ended []EndedSession
}

func (o *observed) SessionEnded(s EndedSession) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ended = append(o.ended, s)
}

func (o *observed) sessionsEnded() []EndedSession {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]EndedSession(nil), o.ended...)
}

func (o *observed) Served(op Operation) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ops = append(o.ops, op)
}

func (o *observed) all() []Operation {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]Operation(nil), o.ops...)
}

// The Observer is told of every request the server answers, once its
// response is out: its method, what it named, the version and transport
// it was served at, and how it ended (a JSON-RPC error code, a tool error)
// — requests refused before they ran too.
func TestObserverIsToldOfEveryRequestAnswered(t *testing.T) {
	p := NewPlugin("p", "", fakeRuntime{
		abi.ExportListTools: returns(abi.ListToolsResult{Tools: []abi.Tool{{Name: "ok", InputSchema: objectSchema}, {Name: "bad", InputSchema: objectSchema}}}),
		abi.ExportCallTool: func(_ context.Context, in []byte) ([]byte, error) {
			var input struct{ Request abi.CallToolParams }
			_ = json.Unmarshal(in, &input)
			return json.Marshal(abi.CallToolResult{Content: []abi.Content{{Type: abi.ContentText, Text: "x"}}, IsError: input.Request.Name == "bad"})
		},
		abi.ExportListPrompts: returns(abi.ListPromptsResult{Prompts: []abi.Prompt{{Name: "greet"}}}),
		abi.ExportGetPrompt: returns(abi.GetPromptResult{Messages: []abi.PromptMessage{
			{Role: "user", Content: abi.Content{Type: abi.ContentText, Text: "hi"}}}}),
	})
	rec := &observed{}
	srv := NewServer(Options{Observer: rec}, BuildCatalog(t.Context(), []*Plugin{p}, nil))
	out := newRecorder()
	h := &harness{srv: srv, sess: srv.OpenSession(out, SessionOptions{Transport: TransportStdio}), out: out}
	t.Cleanup(h.sess.Close)
	// One at a time: a request is observed after its response is sent.
	step := func(what string, n int) {
		poll.Until(t, 5*time.Second, what+" observed", func() bool { return len(rec.all()) == n })
	}
	h.init(t, Version20251125)
	step("initialize", 1)
	for i, c := range []struct {
		method string
		params map[string]any
	}{
		{"tools/call", map[string]any{"name": "ok", "arguments": map[string]any{"n": 1}}},
		{"tools/call", map[string]any{"name": "bad", "arguments": map[string]any{"n": 1}}},
		{"tools/call", map[string]any{"name": "nope"}},
		{"prompts/get", map[string]any{"name": "greet"}},
		{"no/such/method", map[string]any{}},
	} {
		h.call(t, i+1, c.method, c.params)
		step(c.method, i+2)
	}
	want := []Operation{
		{Method: "initialize"},
		{Method: "tools/call", Tool: "ok"},
		{Method: "tools/call", Tool: "bad", ToolError: true},
		{Method: "tools/call", Tool: "nope", ErrorCode: CodeInvalidParams},
		{Method: "prompts/get", Prompt: "greet"},
		{Method: "no/such/method", ErrorCode: CodeMethodNotFound},
	}
	got := rec.all()
	if len(got) != len(want) {
		t.Fatalf("observed %d requests, want %d: %+v", len(got), len(want), got)
	}
	for i, op := range got {
		if op.ProtocolVersion != Version20251125 || op.Transport != TransportStdio || op.Duration <= 0 {
			t.Errorf("request %d (%s): version %q, transport %q, duration %v; want %s, %s and a duration",
				i, op.Method, op.ProtocolVersion, op.Transport, op.Duration, Version20251125, TransportStdio)
		}
		op.ProtocolVersion, op.Transport, op.Duration = "", "", 0
		if op != want[i] {
			t.Errorf("request %d observed as %+v, want %+v", i, op, want[i])
		}
	}
}

// The Observer is told once of each session that ends, with the version it
// negotiated (none if it never initialized), its transport and how long
// it lasted, however often it is closed.
func TestObserverIsToldOfEachSessionThatEnds(t *testing.T) {
	rec := &observed{}
	srv := NewServer(Options{Observer: rec}, BuildCatalog(t.Context(), nil, nil))
	out := newRecorder()
	h := &harness{srv: srv, sess: srv.OpenSession(out, SessionOptions{Transport: TransportHTTP}), out: out}
	h.init(t, Version20250618)
	h.sess.Close()
	h.sess.Close()
	idle := srv.OpenSession(newRecorder(), SessionOptions{Transport: TransportStdio})
	idle.Close()
	got := rec.sessionsEnded()
	if len(got) != 2 {
		t.Fatalf("%d sessions ended, want 2: %+v", len(got), got)
	}
	if got[0].ProtocolVersion != Version20250618 || got[0].Transport != TransportHTTP || got[0].Duration <= 0 {
		t.Errorf("the initialized session ended as %+v, want %s over %s with a duration", got[0], Version20250618, TransportHTTP)
	}
	if got[1].ProtocolVersion != "" || got[1].Transport != TransportStdio {
		t.Errorf("the session that never initialized ended as %+v, want no version, over %s", got[1], TransportStdio)
	}
}
