package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// These tests drive the examples that talk back to the client (summarize:
// sampling; notes: elicitation, roots, logging, resource updates; jobs:
// progress, logging) through a real `mcphost serve`, over stdio and over
// Streamable HTTP, with the official Go SDK as the client. They check each
// host function end to end, and what a plugin gets when the client lacks
// the capability: an error, at once, never a hang.

var talkbackExamples = []string{"plugins/examples/summarize", "plugins/examples/notes", "plugins/examples/jobs"}

// callTimeout bounds every call: a host function waiting for an answer that
// cannot come would show up as a failure, not as a hung test.
const callTimeout = 30 * time.Second

// talkbackGrants grants the talk-back examples what they need; the notes
// store is %s. summarize runs one instance at a time, so that a call left
// running after a cancel would block the next one.
const talkbackGrants = `
[plugins.summarize]
host_functions = ["create_message"]
timeout = "60s"
max_instances = 1

[plugins.notes]
host_functions = ["create_elicitation", "list_roots", "notify_logging_message", "notify_resource_updated", "notify_resource_list_changed"]
timeout = "60s"
[[plugins.notes.mounts]]
host = %q
guest = "/notes"
mode = "rw"

[plugins.jobs]
host_functions = ["notify_progress", "notify_logging_message"]
`

// newTalkbackFixture returns a server fixture with the talk-back examples
// and the host directory of their note store.
func newTalkbackFixture(t *testing.T) (fixture, string) {
	t.Helper()
	notes := filepath.Join(t.TempDir(), "notes")
	if err := os.Mkdir(notes, 0o755); err != nil {
		t.Fatal(err)
	}
	return newFixture(t, fmt.Sprintf(talkbackGrants, notes), talkbackExamples...), notes
}

// talkTransport connects clients to one fixture, over stdio (a server process
// per session) or Streamable HTTP (one server for every session).
type talkTransport struct {
	name string
	// shared says whether sessions share one server (and so see each
	// other's subscriptions).
	shared  bool
	connect func(t *testing.T, c *mcp.Client, version string) *mcp.ClientSession
}

func talkbackTransports(t *testing.T, f fixture) []talkTransport {
	url := f.serveHTTP(t)
	connect := func(t *testing.T, c *mcp.Client, version string, tr mcp.Transport) *mcp.ClientSession {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("connect at %s: %v", version, err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		if got := cs.InitializeResult().ProtocolVersion; got != version {
			t.Fatalf("negotiated %s, want %s", got, version)
		}
		return cs
	}
	return []talkTransport{
		{name: "stdio", connect: func(t *testing.T, c *mcp.Client, version string) *mcp.ClientSession {
			return connect(t, c, version, &mcp.CommandTransport{Command: f.command()})
		}},
		{name: "http", shared: true, connect: func(t *testing.T, c *mcp.Client, version string) *mcp.ClientSession {
			return connect(t, c, version, &mcp.StreamableClientTransport{Endpoint: url})
		}},
	}
}

func talkClient(opts *mcp.ClientOptions) *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "e2e-talkback", Version: "1"}, opts)
}

// call calls a tool, bounded by callTimeout; a protocol error fails the test.
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, meta mcp.Meta) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args, Meta: meta})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// structured decodes a successful result's structuredContent into v.
func structuredAs(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %s", text(t, res.Content))
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err == nil {
		err = json.Unmarshal(raw, v)
	}
	if err != nil {
		t.Fatalf("structuredContent %s: %v", raw, err)
	}
}

// wantToolError checks that res is a tool error whose text contains every
// one of wants.
func wantToolError(t *testing.T, what string, res *mcp.CallToolResult, wants ...string) {
	t.Helper()
	msg := text(t, res.Content)
	if !res.IsError {
		t.Fatalf("%s: want a tool error, got %q", what, msg)
	}
	t.Logf("%s: %s", what, msg)
	for _, w := range wants {
		if !strings.Contains(msg, w) {
			t.Errorf("%s: error %q does not mention %q", what, msg, w)
		}
	}
}

// notifyRecorder collects what notification handlers receive. The SDK runs them
// asynchronously and not necessarily in order.
type notifyRecorder[T any] struct {
	mu    sync.Mutex
	items []T
}

func (r *notifyRecorder[T]) add(v T) {
	r.mu.Lock()
	r.items = append(r.items, v)
	r.mu.Unlock()
}

func (r *notifyRecorder[T]) snapshot() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.items)
}

func (r *notifyRecorder[T]) reset() {
	r.mu.Lock()
	r.items = nil
	r.mu.Unlock()
}

// waitFor waits up to 10 s for ok to hold on what arrived.
func (r *notifyRecorder[T]) waitFor(t *testing.T, what string, ok func([]T) bool) []T {
	t.Helper()
	var got []T
	if !poll.Within(10*time.Second, func() bool { got = r.snapshot(); return ok(got) }) {
		t.Fatalf("waiting for %s; got %+v", what, got)
	}
	return got
}

// settle gives notifications the server sent before a response time to
// reach the (asynchronous) handlers, for checks that nothing arrived.
func settleNotifications() { time.Sleep(300 * time.Millisecond) } // kept: a window in which nothing may arrive

// noteExists reports whether the store holds the note's file.
func noteExists(t *testing.T, store, name string) bool {
	t.Helper()
	_, err := os.Stat(filepath.Join(store, name+".md"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

func addNoteE2E(t *testing.T, cs *mcp.ClientSession, name, title string, replace bool) {
	t.Helper()
	res := callTool(t, cs, "add_note", map[string]any{"name": name, "title": title, "text": "body of " + title, "replace": replace}, nil)
	if res.IsError {
		t.Fatalf("add_note %s: %s", name, text(t, res.Content))
	}
}

type noteDeletion struct {
	Name, Title, Outcome string
	Deleted              bool
}

// TestTalkBack runs every talk-back scenario over stdio and over
// Streamable HTTP.
func TestTalkBack(t *testing.T) {
	f, store := newTalkbackFixture(t)
	for _, tr := range talkbackTransports(t, f) {
		t.Run(tr.name, func(t *testing.T) {
			// Note names are per transport: both use the same store.
			note := func(s string) string { return tr.name + "-" + s }
			t.Run("sampling round trip", func(t *testing.T) { testSampling(t, tr) })
			t.Run("sampling refused by the client", func(t *testing.T) { testSamplingRefused(t, tr) })
			t.Run("client without sampling", func(t *testing.T) { testNoSampling(t, tr) })
			t.Run("cancel while waiting for sampling", func(t *testing.T) { testCancelDuringSampling(t, tr) })
			t.Run("elicitation decides noteDeletion", func(t *testing.T) { testElicitation(t, tr, store, note) })
			t.Run("client without elicitation", func(t *testing.T) { testNoElicitation(t, tr, store, note) })
			t.Run("elicitation at 2025-03-26", func(t *testing.T) { testElicitationOldVersion(t, tr, store, note) })
			t.Run("list roots", func(t *testing.T) { testRoots(t, tr) })
			t.Run("logging and setLevel", func(t *testing.T) { testLogging(t, tr) })
			t.Run("progress", func(t *testing.T) { testProgress(t, tr) })
			t.Run("resource updated", func(t *testing.T) { testResourceUpdated(t, tr, note) })
		})
	}
}

// The sampling request reaches the client with the plugin's system prompt,
// model preferences and text; the client's answer becomes the tool result.
func testSampling(t *testing.T, tr talkTransport) {
	var got notifyRecorder[*mcp.CreateMessageParams]
	cs := tr.connect(t, talkClient(&mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			got.add(req.Params)
			return &mcp.CreateMessageResult{Role: "assistant", Model: "e2e-model", StopReason: "endTurn",
				Content: &mcp.TextContent{Text: "MCP lets plugins ask the client's model."}}, nil
		},
	}), "2025-11-25")
	const input = "The Model Context Protocol lets servers request completions from the client's model, which keeps API keys with the user."
	var s struct {
		Summary, Style, Model string
		Words                 int
		Truncated             bool
	}
	structuredAs(t, callTool(t, cs, "summarize", map[string]any{"text": input, "style": "headline", "max_words": 12}, nil), &s)
	if s.Summary != "MCP lets plugins ask the client's model." || s.Model != "e2e-model" || s.Style != "headline" || s.Words != 7 || s.Truncated {
		t.Errorf("summary = %+v", s)
	}
	reqs := got.snapshot()
	if len(reqs) != 1 {
		t.Fatalf("%d sampling requests reached the client", len(reqs))
	}
	p := reqs[0]
	if !strings.Contains(p.SystemPrompt, "summar") || p.MaxTokens != 2*12+64 || p.Temperature != 0.2 {
		t.Errorf("systemPrompt %q, maxTokens %d, temperature %v", p.SystemPrompt, p.MaxTokens, p.Temperature)
	}
	if mp := p.ModelPreferences; mp == nil || len(mp.Hints) == 0 || mp.Hints[0].Name != "haiku" || mp.SpeedPriority != 0.8 || mp.CostPriority != 0.7 {
		t.Errorf("modelPreferences = %+v", p.ModelPreferences)
	}
	if len(p.Messages) != 1 || p.Messages[0].Role != "user" {
		t.Fatalf("messages = %+v", p.Messages)
	}
	if tc, ok := p.Messages[0].Content.(*mcp.TextContent); !ok || !strings.Contains(tc.Text, input) || !strings.Contains(tc.Text, "headline") {
		t.Errorf("message content = %+v", p.Messages[0].Content)
	}
}

// A client that answers the sampling request with an error: the plugin
// reports it as a tool error.
func testSamplingRefused(t *testing.T, tr talkTransport) {
	cs := tr.connect(t, talkClient(&mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return nil, errors.New("the user rejected the sampling request")
		},
	}), "2025-11-25")
	wantToolError(t, "summarize refused", callTool(t, cs, "summarize", map[string]any{"text": "some text"}, nil),
		"sampling", "the user rejected the sampling request")
}

// A client without a CreateMessageHandler declares no sampling capability:
// summarize fails at once with an error naming sampling.
func testNoSampling(t *testing.T, tr talkTransport) {
	cs := tr.connect(t, talkClient(nil), "2025-11-25")
	start := time.Now()
	wantToolError(t, "summarize without sampling", callTool(t, cs, "summarize", map[string]any{"text": "some text"}, nil),
		"sampling", "did not declare the sampling capability")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the refusal took %v", d)
	}
}

// Cancelling a call while the plugin waits for the client's sampling answer
// ends the call and frees the plugin's only instance: the next call is
// answered at once. The client is also told that the sampling request is
// cancelled (its handler's context ends): over Streamable HTTP the call's
// own stream is closed by then, so this must arrive on the session's stream.
func testCancelDuringSampling(t *testing.T, tr talkTransport) {
	var block atomic.Bool
	block.Store(true)
	started := make(chan struct{}, 1)
	released := make(chan error, 1)
	stop := make(chan struct{})
	defer close(stop)
	cs := tr.connect(t, talkClient(&mcp.ClientOptions{
		CreateMessageHandler: func(ctx context.Context, _ *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			if block.Load() {
				started <- struct{}{}
				select {
				case <-ctx.Done():
					released <- ctx.Err()
					return nil, ctx.Err()
				case <-stop:
					return nil, errors.New("never cancelled")
				}
			}
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "quick"}}, nil
		},
	}), "2025-11-25")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "summarize", Arguments: map[string]any{"text": "a long text"}})
		errc <- err
	}()
	select {
	case <-started:
	case <-time.After(callTimeout):
		t.Fatal("the sampling request never reached the client")
	}
	block.Store(false)
	cancel()
	cancelled := time.Now()
	select {
	case err := <-errc:
		if err == nil {
			t.Error("the cancelled call returned no error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled call did not return")
	}
	// summarize has one instance: this call is answered only if the
	// cancelled one stopped.
	res := callTool(t, cs, "summarize", map[string]any{"text": "again"}, nil)
	var s struct{ Summary string }
	structuredAs(t, res, &s)
	if s.Summary != "quick" {
		t.Errorf("after the cancel: %+v", s)
	}
	if d := time.Since(cancelled); d > 10*time.Second {
		t.Errorf("the server answered the next call %v after the cancel", d)
	}
	t.Logf("next call answered %v after the cancel", time.Since(cancelled).Round(time.Millisecond))

	select {
	case err := <-released:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the sampling handler ended with %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: the client was not told that the sampling request was cancelled", tr.name)
	}
}

// delete_note asks the user; only accept + confirm deletes. The message
// names the note's title.
func testElicitation(t *testing.T, tr talkTransport, store string, note func(string) string) {
	var answer atomic.Value // *mcp.ElicitResult
	var asked notifyRecorder[*mcp.ElicitParams]
	cs := tr.connect(t, talkClient(&mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.add(req.Params)
			return answer.Load().(*mcp.ElicitResult), nil
		},
	}), "2025-11-25")
	name := note("shopping")
	addNoteE2E(t, cs, name, "Shopping list", false)

	del := func() noteDeletion {
		var d noteDeletion
		structuredAs(t, callTool(t, cs, "delete_note", map[string]any{"name": name}, nil), &d)
		return d
	}
	for _, a := range []struct {
		result  *mcp.ElicitResult
		outcome string
	}{
		{&mcp.ElicitResult{Action: "decline"}, "declined"},
		{&mcp.ElicitResult{Action: "cancel"}, "cancelled"},
		{&mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": false}}, "not confirmed"},
	} {
		answer.Store(a.result)
		if d := del(); d.Deleted || d.Outcome != a.outcome {
			t.Errorf("answer %+v: %+v", a.result, d)
		}
		if !noteExists(t, store, name) {
			t.Fatalf("answer %+v deleted the note", a.result)
		}
	}
	answer.Store(&mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}})
	if d := del(); !d.Deleted || d.Outcome != "deleted" || d.Title != "Shopping list" {
		t.Errorf("accepted and confirmed: %+v", d)
	}
	if noteExists(t, store, name) {
		t.Fatal("accepted and confirmed, but the note is still there")
	}
	if _, err := cs.ReadResource(ctxT(t), &mcp.ReadResourceParams{URI: "note:///" + name}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("reading the deleted note: %v", err)
	}
	q := asked.snapshot()
	if len(q) != 4 {
		t.Fatalf("%d elicitations, want 4", len(q))
	}
	raw, _ := json.Marshal(q[0].RequestedSchema)
	var schema struct {
		Type       string
		Properties map[string]struct{ Type string }
		Required   []string
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(q[0].Message, `"Shopping list"`) || schema.Type != "object" || len(schema.Properties) != 1 ||
		schema.Properties["confirm"].Type != "boolean" || !slices.Equal(schema.Required, []string{"confirm"}) {
		t.Errorf("elicitation message %q, schema %s", q[0].Message, raw)
	}
}

// A client without an ElicitationHandler declares no elicitation: the
// noteDeletion is refused with a clear message and nothing is deleted.
func testNoElicitation(t *testing.T, tr talkTransport, store string, note func(string) string) {
	cs := tr.connect(t, talkClient(nil), "2025-11-25")
	name := note("precious")
	addNoteE2E(t, cs, name, "Precious", false)
	wantToolError(t, "delete without elicitation", callTool(t, cs, "delete_note", map[string]any{"name": name}, nil),
		"NOT deleted", "elicitation", "did not declare the elicitation capability")
	if !noteExists(t, store, name) {
		t.Fatal("the note was deleted without confirmation")
	}
}

// Elicitation arrived in 2025-06-18: a client that negotiated 2025-03-26
// is never asked, even with a handler, and the note stays.
func testElicitationOldVersion(t *testing.T, tr talkTransport, store string, note func(string) string) {
	var asked atomic.Int32
	cs := tr.connect(t, talkClient(&mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
		},
	}), "2025-03-26")
	name := note("old-client")
	addNoteE2E(t, cs, name, "Old client", false)
	wantToolError(t, "delete at 2025-03-26", callTool(t, cs, "delete_note", map[string]any{"name": name}, nil),
		"NOT deleted", "2025-06-18")
	if asked.Load() != 0 || !noteExists(t, store, name) {
		t.Fatalf("asked %d times; note exists: %v", asked.Load(), noteExists(t, store, name))
	}
}

// list_roots returns the client's roots; a client without the roots
// capability gets an error.
func testRoots(t *testing.T, tr talkTransport) {
	c := talkClient(nil) // the SDK declares roots by default
	c.AddRoots(&mcp.Root{URI: "file:///home/e2e/project", Name: "project"}, &mcp.Root{URI: "file:///srv/shared"})
	cs := tr.connect(t, c, "2025-11-25")
	var r struct{ Roots []struct{ URI, Name string } }
	structuredAs(t, callTool(t, cs, "roots", nil, nil), &r)
	got := fmt.Sprint(r.Roots)
	if got != "[{file:///home/e2e/project project} {file:///srv/shared }]" {
		t.Errorf("roots = %s", got)
	}

	bare := tr.connect(t, talkClient(&mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}), "2025-11-25")
	wantToolError(t, "roots without the capability", callTool(t, bare, "roots", nil, nil),
		"roots", "did not declare the roots capability")
}

// Log messages reach the client with the plugin as logger, filtered by the
// level the client set (default info).
func testLogging(t *testing.T, tr talkTransport) {
	var logs notifyRecorder[*mcp.LoggingMessageParams]
	cs := tr.connect(t, talkClient(&mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) { logs.add(req.Params) },
	}), "2025-11-25")
	crunch := func() {
		t.Helper()
		if res := callTool(t, cs, "crunch", map[string]any{"steps": 3, "rounds": 10}, nil); res.IsError {
			t.Fatalf("crunch: %s", text(t, res.Content))
		}
	}
	levels := func(got []*mcp.LoggingMessageParams) (out []string) {
		for _, m := range got {
			out = append(out, string(m.Level))
		}
		slices.Sort(out)
		return out
	}
	has := func(level string, n int) func([]*mcp.LoggingMessageParams) bool {
		return func(got []*mcp.LoggingMessageParams) bool {
			c := 0
			for _, m := range got {
				if string(m.Level) == level {
					c++
				}
			}
			return c >= n
		}
	}

	// Default level info: start (info) and end (notice), no step (debug).
	crunch()
	logs.waitFor(t, "the notice at the end", has("notice", 1))
	settleNotifications()
	got := logs.snapshot()
	if l := levels(got); !slices.Equal(l, []string{"info", "notice"}) {
		t.Errorf("at the default level: %v", l)
	}
	for _, m := range got {
		data, _ := m.Data.(map[string]any)
		if m.Logger != "jobs" || data == nil || !strings.HasPrefix(fmt.Sprint(data["message"]), "crunch ") {
			t.Errorf("log message %+v", m)
		}
	}

	// Debug: every step too.
	logs.reset()
	if err := cs.SetLoggingLevel(ctxT(t), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	crunch()
	logs.waitFor(t, "3 debug messages and the notice", func(got []*mcp.LoggingMessageParams) bool {
		return has("debug", 3)(got) && has("notice", 1)(got)
	})
	settleNotifications()
	if l := levels(logs.snapshot()); !slices.Equal(l, []string{"debug", "debug", "debug", "info", "notice"}) {
		t.Errorf("at debug: %v", l)
	}

	// Error: nothing this plugin sends passes.
	logs.reset()
	if err := cs.SetLoggingLevel(ctxT(t), &mcp.SetLoggingLevelParams{Level: "error"}); err != nil {
		t.Fatal(err)
	}
	crunch()
	settleNotifications()
	if got := logs.snapshot(); len(got) != 0 {
		t.Errorf("at error: %d messages arrived, first %+v", len(got), got[0])
	}
}

// Progress arrives for every step when the client sent a token, and not at
// all when it did not.
func testProgress(t *testing.T, tr talkTransport) {
	var progress notifyRecorder[*mcp.ProgressNotificationParams]
	cs := tr.connect(t, talkClient(&mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			progress.add(req.Params)
		},
	}), "2025-11-25")
	token := "crunch-" + tr.name
	var r struct{ Digest string }
	structuredAs(t, callTool(t, cs, "crunch", map[string]any{"steps": 4, "rounds": 1000, "seed": "e2e"}, mcp.Meta{"progressToken": token}), &r)
	if want := crunchDigest("e2e", 4*1000); r.Digest != want {
		t.Errorf("digest %s, want %s", r.Digest, want)
	}
	got := progress.waitFor(t, "4 progress notifications", func(got []*mcp.ProgressNotificationParams) bool { return len(got) >= 4 })
	var values []float64
	for _, p := range got {
		values = append(values, p.Progress)
		if p.ProgressToken != token || p.Total != 4 || !strings.HasPrefix(p.Message, "step ") {
			t.Errorf("progress %+v", p)
		}
	}
	slices.Sort(values)
	if !slices.Equal(values, []float64{1, 2, 3, 4}) {
		t.Errorf("progress values %v", values)
	}

	progress.reset()
	callTool(t, cs, "crunch", map[string]any{"steps": 2, "rounds": 10}, nil)
	settleNotifications()
	if got := progress.snapshot(); len(got) != 0 {
		t.Errorf("progress without a token: %+v", got)
	}
}

// crunchDigest is what crunch computes: SHA-256 of the seed, hashed again
// n times.
func crunchDigest(seed string, n int) string {
	h := sha256.Sum256([]byte(seed))
	for range n {
		h = sha256.Sum256(h[:])
	}
	return hex.EncodeToString(h[:])
}

// notifications/resources/updated reaches the sessions subscribed to a
// note when it is created, replaced and deleted, and no others. Over HTTP
// the change is made by another session; over stdio (one session per
// server) by the subscribed session itself.
func testResourceUpdated(t *testing.T, tr talkTransport, note func(string) string) {
	var updates notifyRecorder[string]
	watcher := tr.connect(t, talkClient(&mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { updates.add(req.Params.URI) },
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
		},
	}), "2025-11-25")
	writer := watcher
	var writerUpdates notifyRecorder[string]
	if tr.shared {
		writer = tr.connect(t, talkClient(&mcp.ClientOptions{
			ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
				writerUpdates.add(req.Params.URI)
			},
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
			},
		}), "2025-11-25")
	}
	if caps := watcher.InitializeResult().Capabilities; caps.Resources == nil || !caps.Resources.Subscribe {
		t.Fatalf("resources capability %+v: no subscribe", caps.Resources)
	}
	watched, other := note("watched"), note("unwatched")
	uri := "note:///" + watched
	// A note that does not exist yet can be watched: the template serves it.
	if err := watcher.Subscribe(ctxT(t), &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	count := func(n int) func([]string) bool {
		return func(got []string) bool { return len(got) >= n }
	}
	addNoteE2E(t, writer, watched, "Watched", false)
	updates.waitFor(t, "the update for the created note", count(1))
	addNoteE2E(t, writer, watched, "Watched, again", true)
	updates.waitFor(t, "the update for the replaced note", count(2))
	addNoteE2E(t, writer, other, "Not watched", false)
	var d noteDeletion
	structuredAs(t, callTool(t, writer, "delete_note", map[string]any{"name": watched}, nil), &d)
	if !d.Deleted {
		t.Fatalf("delete: %+v", d)
	}
	updates.waitFor(t, "the update for the deleted note", count(3))
	settleNotifications()
	if got := updates.snapshot(); !slices.Equal(got, []string{uri, uri, uri}) {
		t.Errorf("updates = %v, want 3 × %s", got, uri)
	}
	if got := writerUpdates.snapshot(); len(got) != 0 {
		t.Errorf("a session that did not subscribe got %v", got)
	}

	// After unsubscribing, nothing arrives.
	if err := watcher.Unsubscribe(ctxT(t), &mcp.UnsubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	updates.reset()
	addNoteE2E(t, writer, watched, "Watched once more", false)
	settleNotifications()
	if got := updates.snapshot(); len(got) != 0 {
		t.Errorf("after unsubscribe: %v", got)
	}
}

// TestTaskSupportDeclared: crunch declares execution.taskSupport
// "optional" to 2025-11-25 clients; older clients do not see the field.
func TestTaskSupportDeclared(t *testing.T) {
	f, _ := newTalkbackFixture(t)
	for version, want := range map[string]any{"2025-11-25": map[string]any{"taskSupport": "optional"}, "2025-06-18": nil} {
		s := startRaw(t, f)
		s.roundTrip(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
		if _, err := io.WriteString(s.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
			t.Fatal(err)
		}
		found := false
		cursor := ""
		for page := 2; page < 20 && !found; page++ {
			var list struct {
				Result struct {
					Tools      []map[string]any `json:"tools"`
					NextCursor string           `json:"nextCursor"`
				} `json:"result"`
			}
			params, _ := json.Marshal(map[string]any{"cursor": cursor})
			if cursor == "" {
				params = []byte(`{}`)
			}
			raw, _ := json.Marshal(s.roundTrip(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":%s}`, page, params)))
			if err := json.Unmarshal(raw, &list); err != nil {
				t.Fatal(err)
			}
			for _, tool := range list.Result.Tools {
				if tool["name"] == "crunch" {
					found = true
					if fmt.Sprint(tool["execution"]) != fmt.Sprint(want) {
						t.Errorf("%s: crunch execution = %v, want %v", version, tool["execution"], want)
					}
				}
			}
			if cursor = list.Result.NextCursor; cursor == "" {
				break
			}
		}
		if !found {
			t.Errorf("%s: no crunch in any page of tools/list", version)
		}
	}
}

// TestSamplingNotGranted: a plugin that calls create_message without the
// grant gets an error naming the grant to add, and the client is never
// asked. (summarize is built without its manifest here: with it, the
// plugin would not load at all without the grant.)
func TestSamplingNotGranted(t *testing.T) {
	f := newFixture(t, "")
	root, err := plugintest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s",
		"-o", filepath.Join(f.plugins, "summarize.wasm"), "./plugins/examples/summarize")
	build.Dir = root
	build.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building summarize without its manifest: %v\n%s", err, out)
	}
	var asked atomic.Int32
	cs := f.connect(t, "2025-11-25", &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			asked.Add(1)
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "x"}}, nil
		},
	})
	wantToolError(t, "summarize without the grant", callTool(t, cs, "summarize", map[string]any{"text": "abc"}, nil),
		"host function create_message is not granted to plugin summarize",
		"add it to host_functions in [plugins.summarize]")
	if asked.Load() != 0 {
		t.Errorf("the client was asked to sample %d times without the grant", asked.Load())
	}

	// With its manifest and without the grant, summarize is not loaded, and
	// the server says which line to add.
	manifested := newFixture(t, "", "plugins/examples/summarize", "plugins/examples/jobs")
	cmd := exec.Command(mcphostBin, "serve", "--plugins", manifested.plugins, "--config", manifested.config)
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}` + "\n")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if _, err := cmd.Output(); err != nil {
		t.Fatalf("serve: %v\n%s", err, stderr.String())
	}
	if logs := stderr.String(); !strings.Contains(logs, "summarize.wasm: plugin needs grants it does not have") ||
		!strings.Contains(logs, `host_functions = [\"create_message\"]`) {
		t.Errorf("want the refusal naming the grant, got:\n%s", logs)
	}
}

// TestRepoConfigServesTalkBackExamples: ./mcphost.toml grants the talk-back
// examples what their manifests ask for (with the notes store created as
// `make examples` does), and grants sampling only to the examples that
// sample.
func TestRepoConfigServesTalkBackExamples(t *testing.T) {
	root, err := plugintest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	repoConfig, err := config.Load(filepath.Join(root, "mcphost.toml"))
	if err != nil {
		t.Fatal(err)
	}
	// Sampling spends the user's money: only the examples built to sample
	// (the Go summarize and the Rust textkit) are granted it.
	samplers := []string{"summarize", "textkit"}
	for name, pc := range repoConfig.Plugins {
		if granted := slices.Contains(pc.HostFunctions, "create_message"); granted != slices.Contains(samplers, name) {
			t.Errorf("plugin %s: create_message granted = %v; only %v may sample", name, granted, samplers)
		}
	}
	if notes := repoConfig.Plugin("notes"); len(notes.Mounts) != 1 || notes.Mounts[0].Host != filepath.Join(root, "build", "notes") || notes.Mounts[0].ReadOnly {
		t.Errorf("notes mounts = %+v, want build/notes read-write", notes.Mounts)
	}

	// Serve with a copy of the repo config, so that the relative mount
	// resolves inside a temporary directory.
	f := newFixture(t, "", talkbackExamples...)
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join(root, "mcphost.toml"))
	if err != nil {
		t.Fatal(err)
	}
	f.config = filepath.Join(dir, "mcphost.toml")
	if err := os.WriteFile(f.config, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "build", "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	f.serveArgs = allowPartial
	cs := f.connect(t, "2025-11-25", nil)
	var names []string
	for tool, err := range cs.Tools(ctxT(t), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	for _, want := range []string{"summarize", "add_note", "list_notes", "read_note", "delete_note", "roots", "crunch"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %s: an example did not load with the repo config", names, want)
		}
	}
	addNoteE2E(t, cs, "hello", "Hello", false)
	if _, err := os.Stat(filepath.Join(dir, "build", "notes", "hello.md")); err != nil {
		t.Errorf("the note did not land in build/notes: %v", err)
	}
}
