package host

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/poll"
)

// observed records what an Observer is told.
type observed struct {
	mu      sync.Mutex
	ops     []Operation
	ended   []EndedSession
	calls   []PluginCall
	denials []Denial
}

func (o *observed) Denied(d Denial)      { record(&o.mu, &o.denials, d) }
func (o *observed) allDenials() []Denial { return recorded(&o.mu, &o.denials) }

func (o *observed) PluginCalled(c PluginCall)   { record(&o.mu, &o.calls, c) }
func (o *observed) pluginCalls() []PluginCall   { return recorded(&o.mu, &o.calls) }
func (o *observed) SessionEnded(s EndedSession) { record(&o.mu, &o.ended, s) }
func (o *observed) sessionsEnded() []EndedSession {
	return recorded(&o.mu, &o.ended)
}
func (o *observed) Served(op Operation) { record(&o.mu, &o.ops, op) }
func (o *observed) all() []Operation    { return recorded(&o.mu, &o.ops) }

// record appends v to list under mu.
func record[T any](mu *sync.Mutex, list *[]T, v T) {
	mu.Lock()
	defer mu.Unlock()
	*list = append(*list, v)
}

// recorded returns a copy of *list, read under mu.
func recorded[T any](mu *sync.Mutex, list *[]T) []T {
	mu.Lock()
	defer mu.Unlock()
	return append([]T(nil), *list...)
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
		{Method: "tools/call", Tool: "nope", ErrorCode: CodeInvalidParams, ErrorMessage: `unknown tool: "nope"`},
		{Method: "prompts/get", Prompt: "greet"},
		{Method: MethodOther, ErrorCode: CodeMethodNotFound, ErrorMessage: "method not found: no/such/method"},
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
		op.Client, op.Plugin, op.PluginOutcome, op.Wait, op.Run = "", "", "", 0, 0 // TestOperationsNameWhoAskedAndTheirPluginCall
		if !reflect.DeepEqual(op, want[i]) {
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

// The Observer is told of each plugin call made for a request, with how it
// ended: ok, a tool error, the outcome a failed call's CallError names (or
// "error" when it names none), malformed output; not of the listings the
// host makes on its own.
func TestObserverIsToldOfEachPluginCall(t *testing.T) {
	p := NewPlugin("p", "", fakeRuntime{
		abi.ExportListTools: returns(abi.ListToolsResult{Tools: []abi.Tool{
			{Name: "ok", InputSchema: objectSchema}, {Name: "bad", InputSchema: objectSchema}, {Name: "late", InputSchema: objectSchema},
			{Name: "odd", InputSchema: objectSchema}, {Name: "garbled", InputSchema: objectSchema}}}),
		abi.ExportCallTool: func(_ context.Context, in []byte) ([]byte, error) {
			var input struct{ Request abi.CallToolParams }
			_ = json.Unmarshal(in, &input)
			switch input.Request.Name {
			case "late":
				return nil, &CallError{Reason: "plugin call timed out", Message: "2s", Outcome: "timeout"}
			case "odd":
				return nil, errors.New("no outcome named")
			case "garbled":
				return []byte("{"), nil
			}
			return json.Marshal(abi.CallToolResult{Content: []abi.Content{{Type: abi.ContentText, Text: "x"}}, IsError: input.Request.Name == "bad"})
		},
	})
	rec := &observed{}
	srv := NewServer(Options{Observer: rec}, BuildCatalog(t.Context(), []*Plugin{p}, nil))
	h := session(t, srv)
	h.init(t, Version20251125)
	want := []PluginCall{}
	for i, c := range []struct{ tool, outcome, err string }{
		{"ok", OutcomeOK, ""}, {"bad", OutcomeToolError, ""}, {"late", "timeout", "plugin p: plugin call timed out: 2s"},
		{"odd", OutcomeError, "plugin p: call_tool: no outcome named"},
		{"garbled", OutcomeMalformedOutput, "plugin p returned malformed output from call_tool: unexpected end of JSON input"},
	} {
		h.call(t, i+1, "tools/call", map[string]any{"name": c.tool, "arguments": map[string]any{"n": 1}})
		want = append(want, PluginCall{Plugin: "p", Export: abi.ExportCallTool, Outcome: c.outcome, Error: c.err})
	}
	got := rec.pluginCalls()
	if len(got) != len(want) {
		t.Fatalf("%d plugin calls observed, want %d (the listing at load not among them): %+v", len(got), len(want), got)
	}
	for i, c := range got {
		if c.Duration <= 0 || c.Ended.IsZero() || time.Since(c.Ended) > time.Minute || (i > 0 && c.Ended.Before(got[i-1].Ended)) {
			t.Errorf("call %d: duration %v, ended %v: want both, in the calls' order", i, c.Duration, c.Ended)
		}
		c.Duration, c.Ended = 0, time.Time{}
		if c != want[i] {
			t.Errorf("call %d observed as %+v, want %+v", i, c, want[i])
		}
	}
}

// Stats counts the open sessions by transport and the version they
// negotiated, one not initialized yet under "", and forgets a closed one.
func TestStatsCountSessionsByTransportAndVersion(t *testing.T) {
	srv := NewServer(Options{}, BuildCatalog(t.Context(), nil, nil))
	open := func(transport, version string) *Session {
		out := newRecorder()
		h := &harness{srv: srv, sess: srv.OpenSession(out, SessionOptions{Transport: transport}), out: out}
		t.Cleanup(h.sess.Close)
		if version != "" {
			h.init(t, version)
		}
		return h.sess
	}
	open(TransportStdio, Version20251125)
	open(TransportHTTP, Version20251125)
	gone := open(TransportHTTP, Version20251125)
	open(TransportHTTP, "")
	gone.Close()
	want := map[SessionKind]int{
		{TransportStdio, Version20251125}: 1,
		{TransportHTTP, Version20251125}:  1,
		{TransportHTTP, ""}:               1,
	}
	if got := srv.Stats().Sessions; !maps.Equal(got, want) {
		t.Errorf("sessions %v, want %v", got, want)
	}
	// Every task status is counted, none held yet: a gauge of each exists.
	if got, want := srv.Stats().Tasks, (map[string]int{taskWorking: 0, taskInputRequired: 0, taskCompleted: 0, taskFailed: 0, taskCancelled: 0}); !maps.Equal(got, want) {
		t.Errorf("tasks %v, want %v", got, want)
	}
}

// An Operation names who asked (subject, client, hashed session) and the
// plugin call it made: the plugin, its outcome, and how long it waited and
// ran as its runtime reported (ReportCallTimes); a plugin that audits
// arguments has them there, redacted.
func TestOperationsNameWhoAskedAndTheirPluginCall(t *testing.T) {
	callTool := func(_ context.Context, in []byte) ([]byte, error) {
		return json.Marshal(abi.CallToolResult{Content: []abi.Content{{Type: abi.ContentText, Text: "x"}}})
	}
	timed := fakeRuntime{
		abi.ExportListTools: returns(abi.ListToolsResult{Tools: []abi.Tool{{Name: "timed", InputSchema: objectSchema}}}),
		abi.ExportCallTool: func(ctx context.Context, in []byte) ([]byte, error) {
			ReportCallTimes(ctx, 2*time.Millisecond, 3*time.Millisecond)
			return callTool(ctx, in)
		},
	}
	audited := fakeRuntime{
		abi.ExportListTools: returns(abi.ListToolsResult{Tools: []abi.Tool{{Name: "audited", InputSchema: objectSchema}}}),
		abi.ExportCallTool:  callTool,
	}
	redact := func(s string) string { return strings.ReplaceAll(s, "s3cret", "[REDACTED]") }
	rec := &observed{}
	srv := NewServer(Options{Observer: rec, Subject: func(context.Context) string { return "alice" }}, BuildCatalog(t.Context(), []*Plugin{
		NewPlugin("p", "", timed), NewPlugin("q", "", audited, WithAuditArguments(redact)),
	}, nil))
	out := newRecorder()
	h := &harness{srv: srv, sess: srv.OpenSession(out, SessionOptions{Transport: TransportHTTP, ID: "the-session"}), out: out}
	t.Cleanup(h.sess.Close)
	h.init(t, Version20251125)
	h.call(t, 1, "tools/call", map[string]any{"name": "timed", "arguments": map[string]any{"n": 1}})
	h.call(t, 2, "tools/call", map[string]any{"name": "audited", "arguments": map[string]any{"n": 1, "key": "s3cret"}})
	poll.Until(t, 5*time.Second, "three requests observed", func() bool { return len(rec.all()) == 3 })
	// Each is observed once its response is out: in either order.
	var timedOp, auditedOp Operation
	for _, op := range rec.all() {
		switch op.Tool {
		case "timed":
			timedOp = op
		case "audited":
			auditedOp = op
		}
	}
	if timedOp.Subject != "alice" || timedOp.Client != "t" || timedOp.Session != hashSession("the-session") ||
		timedOp.Plugin != "p" || timedOp.PluginOutcome != OutcomeOK || timedOp.Wait != 2*time.Millisecond || timedOp.Run != 3*time.Millisecond {
		t.Errorf("timed: %+v", timedOp)
	}
	if timedOp.Arguments != nil {
		t.Errorf("a plugin that does not audit arguments: %s", timedOp.Arguments)
	}
	if string(auditedOp.Arguments) != `{"key":"[REDACTED]","n":1}` {
		t.Errorf("audited arguments %s, want them with the secret redacted", auditedOp.Arguments)
	}
}

// The server tells the Observer what it denied a request: an item of a
// plugin the request does not see (answered as unknown), a call the
// plugin's rate limit refused, and what a runtime reports (ReportDenied),
// each with who asked.
func TestDenialsAreObserved(t *testing.T) {
	hidden := fakeRuntime{
		abi.ExportListTools: returns(abi.ListToolsResult{Tools: []abi.Tool{{Name: "secret", InputSchema: objectSchema}}}),
	}
	limited := fakeRuntime{
		abi.ExportListTools: returns(abi.ListToolsResult{Tools: []abi.Tool{{Name: "limited", InputSchema: objectSchema}, {Name: "fetch", InputSchema: objectSchema}}}),
		abi.ExportCallTool: func(ctx context.Context, in []byte) ([]byte, error) {
			var input struct{ Request abi.CallToolParams }
			_ = json.Unmarshal(in, &input)
			if input.Request.Name == "fetch" {
				ReportDenied(ctx, "r", DeniedEgress, "an HTTP request that no allowed_hosts entry of plugin r grants")
				return json.Marshal(abi.CallToolResult{Content: []abi.Content{{Type: abi.ContentText, Text: "refused"}}, IsError: true})
			}
			return nil, &CallError{Reason: "plugin rate limit exceeded", Message: "more than 1 calls per second", Outcome: "rate_limited"}
		},
	}
	rec := &observed{}
	srv := NewServer(Options{Observer: rec, Subject: func(context.Context) string { return "bob" }}, BuildCatalog(t.Context(), []*Plugin{
		NewPlugin("admin", "", hidden, WithRequiredScopes([]string{"admin"})), NewPlugin("r", "", limited),
	}, nil))
	out := newRecorder()
	h := &harness{srv: srv, sess: srv.OpenSession(out, SessionOptions{Transport: TransportStdio}), out: out}
	t.Cleanup(h.sess.Close)
	h.init(t, Version20251125)
	if res := h.call(t, 1, "tools/call", map[string]any{"name": "secret", "arguments": map[string]any{"n": 1}}); errCode(t, res) != CodeInvalidParams {
		t.Fatalf("a hidden tool: %v, want unknown tool", res)
	}
	h.call(t, 2, "tools/call", map[string]any{"name": "limited", "arguments": map[string]any{"n": 1}})
	h.call(t, 3, "tools/call", map[string]any{"name": "fetch", "arguments": map[string]any{"n": 1}})
	poll.Until(t, 5*time.Second, "three denials", func() bool { return len(rec.allDenials()) == 3 })
	got := rec.allDenials()
	for i, want := range []struct{ reason, plugin, item string }{
		{DeniedHidden, "admin", "secret"}, {DeniedRateLimit, "r", ""}, {DeniedEgress, "r", ""},
	} {
		d := got[i]
		if d.Reason != want.reason || d.Plugin != want.plugin || d.Item != want.item || d.Subject != "bob" || d.Method != "tools/call" ||
			d.ProtocolVersion != Version20251125 || d.Transport != TransportStdio || d.Detail == "" {
			t.Errorf("denial %d: %+v, want %s of %s (item %q) by bob", i, d, want.reason, want.plugin, want.item)
		}
	}
}
