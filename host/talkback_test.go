package host

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/poll"
)

// serverFn returns plugin's implementation of host function name on srv.
func serverFn(t *testing.T, srv *Server, plugin, name string) func(context.Context, []byte) ([]byte, error) {
	t.Helper()
	fn, ok := srv.HostFunctions(plugin)[name]
	if !ok {
		t.Fatalf("no host function %s", name)
	}
	return fn
}

// session opens an extra session on srv.
func session(t *testing.T, srv *Server) *harness {
	out := newRecorder()
	h := &harness{srv: srv, sess: srv.NewSession(out), out: out}
	t.Cleanup(h.sess.Close)
	return h
}

// singleInstance runs one call at a time, like a plugin with
// max_instances = 1: a call made while another runs waits for it.
type singleInstance struct {
	fakeRuntime
	sem chan struct{}
}

func (s singleInstance) Call(ctx context.Context, export string, in []byte) ([]byte, error) {
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, &CallError{Reason: "plugin call canceled", Message: "canceled waiting for an instance", Canceled: true}
	}
	defer func() { <-s.sem }()
	return s.fakeRuntime.Call(ctx, export, in)
}

// logRecords is a slog handler that keeps what it is given.
type logRecords struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, r.Clone())
	return nil
}
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecords) WithGroup(string) slog.Handler      { return l }

// warnings returns the attributes of the warnings logged with msg.
func (l *logRecords) warnings(msg string) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, r := range l.recs {
		if r.Level != slog.LevelWarn || r.Message != msg {
			continue
		}
		attrs := map[string]any{}
		r.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value.Any(); return true })
		out = append(out, attrs)
	}
	return out
}

func TestListChangedIsDebouncedSentOnlyForChangedKindsToInitializedSessions(t *testing.T) {
	eachStore(t, func(t *testing.T, newServer func(Options, *Catalog) *Server) {
		var mu sync.Mutex
		tools := []abi.Tool{{Name: "first", InputSchema: objectSchema}}
		resources := []abi.Resource{{URI: "dyn://a", Name: "a"}}
		var notifyTools, notifyPrompts, notifyResources func(context.Context, []byte) ([]byte, error)
		var dynLists, otherLists atomic.Int32
		rt := singleInstance{sem: make(chan struct{}, 1), fakeRuntime: fakeRuntime{
			abi.ExportListTools: func(context.Context, []byte) ([]byte, error) {
				dynLists.Add(1)
				mu.Lock()
				defer mu.Unlock()
				return json.Marshal(abi.ListToolsResult{Tools: tools})
			},
			abi.ExportListPrompts: returns(abi.ListPromptsResult{Prompts: []abi.Prompt{{Name: "same"}}}),
			abi.ExportListResources: func(context.Context, []byte) ([]byte, error) {
				mu.Lock()
				defer mu.Unlock()
				return json.Marshal(abi.ListResourcesResult{Resources: resources})
			},
			// grow adds a tool and announces it, in a burst of notifications
			// of every kind, from inside the call (the only instance is busy).
			abi.ExportCallTool: func(ctx context.Context, _ []byte) ([]byte, error) {
				mu.Lock()
				tools = append(tools, abi.Tool{Name: fmt.Sprintf("t%d", len(tools)), InputSchema: objectSchema})
				mu.Unlock()
				for range 10 {
					for _, fn := range []func(context.Context, []byte) ([]byte, error){notifyTools, notifyPrompts, notifyResources} {
						if _, err := fn(ctx, nil); err != nil {
							return nil, err
						}
					}
				}
				return json.Marshal(abi.CallToolResult{Content: []abi.Content{{Type: "text", Text: "grown"}}})
			},
		}}
		grants := []string{abi.HostNotifyToolListChanged, abi.HostNotifyPromptListChanged, abi.HostNotifyResourceListChanged}
		dyn := NewPlugin("dyn", "", rt, WithGrantedHostFunctions(grants))
		other := NewPlugin("other", "", fakeRuntime{
			abi.ExportListTools: func(context.Context, []byte) ([]byte, error) {
				otherLists.Add(1)
				return json.Marshal(abi.ListToolsResult{Tools: []abi.Tool{{Name: "static", InputSchema: objectSchema}}})
			},
		})
		srv := newServer(Options{}, BuildCatalog(t.Context(), []*Plugin{dyn, other}, nil))
		notifyTools = serverFn(t, srv, "dyn", abi.HostNotifyToolListChanged)
		notifyPrompts = serverFn(t, srv, "dyn", abi.HostNotifyPromptListChanged)
		notifyResources = serverFn(t, srv, "dyn", abi.HostNotifyResourceListChanged)

		a, b := session(t, srv), session(t, srv)
		caps := result(t, a.init(t, Version20251125))["capabilities"].(map[string]any)
		for _, kind := range []string{"tools", "prompts", "resources"} {
			if caps[kind].(map[string]any)["listChanged"] != true {
				t.Errorf("%s capability does not declare listChanged: %v", kind, caps[kind])
			}
		}
		b.init(t, Version20250326)
		uninitialized := session(t, srv)
		uninitialized.call(t, 0, "initialize", map[string]any{"protocolVersion": Version20251125})
		closed := session(t, srv)
		closed.init(t, Version20251125)
		closed.sess.Close()
		dynBefore, otherBefore := dynLists.Load(), otherLists.Load()

		start := time.Now()
		if res := result(t, a.call(t, 1, "tools/call", map[string]any{"name": "first", "arguments": map[string]any{"n": 1}})); res["isError"] == true {
			t.Fatalf("call: %v", res)
		}
		for _, h := range []*harness{a, b} {
			if m := h.out.next(t); m["method"] != "notifications/tools/list_changed" {
				t.Fatalf("want tools/list_changed, got %v", m)
			}
		}
		if d := time.Since(start); d < listChangedDelay {
			t.Errorf("list_changed after %v: not debounced", d)
		}
		a.out.none(t, 300*time.Millisecond) // once per burst, nothing for prompts or resources
		b.out.none(t, 10*time.Millisecond)
		uninitialized.out.none(t, 10*time.Millisecond)
		closed.out.none(t, 10*time.Millisecond)
		if got := dynLists.Load() - dynBefore; got != 1 {
			t.Errorf("the plugin was listed %d times for one burst", got)
		}
		if got := otherLists.Load() - otherBefore; got != 0 {
			t.Errorf("a plugin that announced nothing was listed again %d times", got)
		}
		if _, ok := srv.Catalog().toolIndex["t1"]; !ok {
			t.Fatal("the catalog does not have the new tool")
		}
		if n := len(result(t, a.call(t, 2, "tools/list", nil))["tools"].([]any)); n != 3 {
			t.Fatalf("tools/list after the change lists %d tools, want 3", n)
		}

		// A change of resources alone announces resources alone.
		mu.Lock()
		resources = append(resources, abi.Resource{URI: "dyn://b", Name: "b"})
		mu.Unlock()
		if _, err := notifyResources(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
		if m := a.out.next(t); m["method"] != "notifications/resources/list_changed" {
			t.Fatalf("want resources/list_changed, got %v", m)
		}
		a.out.none(t, 200*time.Millisecond)

		// Nothing changed: nothing is sent.
		if _, err := notifyTools(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
		a.out.none(t, 300*time.Millisecond)
	})
}

func TestListChangeCapabilityIsDeclaredForAPluginThatMayFillItsList(t *testing.T) {
	empty := NewPlugin("late", "", fakeRuntime{abi.ExportListTools: returns(abi.ListToolsResult{})})
	h := newHarness(t, empty)
	if caps := result(t, h.init(t, Version20251125))["capabilities"].(map[string]any); caps["tools"] != nil {
		t.Fatalf("tools claimed by a plugin with no tools and no grant: %v", caps)
	}
	granted := NewPlugin("late", "", fakeRuntime{abi.ExportListTools: returns(abi.ListToolsResult{})},
		WithGrantedHostFunctions([]string{abi.HostNotifyToolListChanged}))
	h = newHarness(t, granted)
	caps := result(t, h.init(t, Version20251125))["capabilities"].(map[string]any)
	if caps["tools"] == nil || caps["prompts"] != nil {
		t.Fatalf("capabilities %v: want tools (the plugin may announce tools), not prompts", caps)
	}
}

func TestRefreshKeepsTheListsOfAPluginThatCannotBeListedAndReplacePluginsSwaps(t *testing.T) {
	fail := atomic.Bool{}
	flaky := NewPlugin("flaky", "", fakeRuntime{
		abi.ExportListTools: func(context.Context, []byte) ([]byte, error) {
			if fail.Load() {
				return nil, &CallError{Reason: "plugin call timed out", Message: "busy"}
			}
			return json.Marshal(abi.ListToolsResult{Tools: []abi.Tool{{Name: "kept", InputSchema: objectSchema}}})
		},
	})
	srv := NewServer(Options{}, BuildCatalog(t.Context(), []*Plugin{flaky}, nil))
	a := session(t, srv)
	a.init(t, Version20251125)
	fail.Store(true)
	if ch := srv.Refresh(t.Context()); ch.Any() {
		t.Fatalf("a failed listing changed the lists: %+v", ch)
	}
	if _, ok := srv.Catalog().toolIndex["kept"]; !ok {
		t.Fatal("a plugin whose listing failed lost its tools")
	}
	a.out.none(t, 20*time.Millisecond)

	added := toolsPlugin("added", abi.Tool{Name: "fresh", InputSchema: objectSchema})
	old, ch := srv.ReplacePlugins(t.Context(), []*Plugin{flaky, added})
	if !ch.Tools || ch.Prompts || ch.Resources || len(old.Plugins()) != 1 {
		t.Fatalf("ReplacePlugins: changes %+v, old plugins %d", ch, len(old.Plugins()))
	}
	if m := a.out.next(t); m["method"] != "notifications/tools/list_changed" {
		t.Fatalf("want tools/list_changed, got %v", m)
	}
	if _, ok := srv.Catalog().toolIndex["kept"]; !ok {
		t.Fatal("a plugin kept across ReplacePlugins lost its tools")
	}
	if _, ok := srv.Catalog().toolIndex["fresh"]; !ok {
		t.Fatal("the new plugin's tool is missing")
	}

	// SetCatalog announces too: here tools and prompts changed.
	prompts := NewPlugin("prompts", "", fakeRuntime{abi.ExportListPrompts: returns(abi.ListPromptsResult{Prompts: []abi.Prompt{{Name: "hello"}}})})
	srv.SetCatalog(BuildCatalog(t.Context(), []*Plugin{prompts}, nil))
	got := map[any]bool{}
	for range 2 {
		got[a.out.next(t)["method"]] = true
	}
	if !got["notifications/tools/list_changed"] || !got["notifications/prompts/list_changed"] {
		t.Fatalf("SetCatalog sent %v", got)
	}
	a.out.none(t, 20*time.Millisecond)
}

func TestLoggingIsRateLimitedPerPluginWithoutTheSenderNoticing(t *testing.T) {
	eachStore(t, func(t *testing.T, newServer func(Options, *Catalog) *Server) {
		logs := &logRecords{}
		srv := newServer(Options{Logger: slog.New(logs)}, nil)
		fixed := time.Now()
		srv.logLimits.now = func() time.Time { return fixed } // no refill during the test
		srv.logLimits.warnEvery = 50 * time.Millisecond
		logFn := serverFn(t, srv, "chatty", abi.HostNotifyLoggingMessage)
		const sent = 150
		plugin := NewPlugin("chatty", "", fakeRuntime{
			abi.ExportListTools: returns(abi.ListToolsResult{Tools: []abi.Tool{{Name: "spam", InputSchema: json.RawMessage(`{"type":"object"}`)}}}),
			abi.ExportCallTool: func(ctx context.Context, _ []byte) ([]byte, error) {
				for i := range sent {
					if _, err := logFn(ctx, []byte(fmt.Sprintf(`{"level":"info","data":"line %d"}`, i))); err != nil {
						return nil, fmt.Errorf("message %d: %w", i, err)
					}
				}
				return json.Marshal(abi.CallToolResult{Content: []abi.Content{{Type: "text", Text: "done"}}})
			},
		})
		srv.SetCatalog(BuildCatalog(t.Context(), []*Plugin{plugin}, nil))
		h := session(t, srv)
		h.init(t, Version20251125)
		h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"spam"}}`)
		delivered := 0
		for {
			m := h.out.next(t)
			if m["method"] == "notifications/message" {
				delivered++
				continue
			}
			if res := result(t, m); res["isError"] == true {
				t.Fatalf("the plugin noticed the limit: %v", res)
			}
			break
		}
		if delivered != logBurst {
			t.Fatalf("delivered %d of %d messages, want the burst of %d", delivered, sent, logBurst)
		}
		var dropped int64
		var warnings []map[string]any
		if !poll.Within(5*time.Second, func() bool {
			dropped, warnings = 0, logs.warnings("plugin log messages dropped: over the rate limit")
			for _, w := range warnings {
				if w["plugin"] != "chatty" {
					t.Fatalf("warning does not name the plugin: %v", w)
				}
				dropped += w["dropped"].(int64)
			}
			return dropped == sent-logBurst
		}) {
			t.Fatalf("warnings report %d dropped, want %d: %v", dropped, sent-logBurst, warnings)
		}
		if len(warnings) > 2 {
			t.Errorf("%d warnings for one burst, want at most one per interval", len(warnings))
		}
		// Another plugin has its own budget.
		if !srv.allowLog("quiet") {
			t.Fatal("the rate limit of one plugin limited another")
		}
	})
}

func TestRootsListChangedReachesPluginsThatMayListRoots(t *testing.T) {
	eachStore(t, func(t *testing.T, newServer func(Options, *Catalog) *Server) {
		srv := newServer(Options{}, nil)
		listRootsFn := serverFn(t, srv, "r", abi.HostListRoots)
		progressFn := serverFn(t, srv, "r", abi.HostNotifyProgress)
		type outcome struct {
			input, roots string
			progressErr  error
		}
		got := make(chan outcome, 4)
		plugin := NewPlugin("r", "", fakeRuntime{
			abi.ExportListTools: returns(abi.ListToolsResult{}),
			abi.ExportOnRootsListChanged: func(ctx context.Context, in []byte) ([]byte, error) {
				_, perr := progressFn(ctx, []byte(`{"progressToken":"x","progress":1}`))
				roots, err := listRootsFn(ctx, nil)
				if err != nil {
					return nil, err
				}
				got <- outcome{input: string(in), roots: string(roots), progressErr: perr}
				return nil, nil
			},
		})
		srv.SetCatalog(BuildCatalog(t.Context(), []*Plugin{plugin}, nil))

		h := session(t, srv)
		initWithCaps(t, h, Version20251125, `{"roots":{"listChanged":true}}`)
		h.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
		req := h.out.next(t)
		if req["method"] != "roots/list" {
			t.Fatalf("want the plugin's roots/list request, got %v", req)
		}
		id, _ := json.Marshal(req["id"])
		h.send(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"roots":[{"uri":"file:///work","name":"work"}]}}`)
		select {
		case o := <-got:
			if o.input != `{"context":{"_meta":{}}}` {
				t.Errorf("on_roots_list_changed input %s", o.input)
			}
			if !strings.Contains(o.roots, "file:///work") {
				t.Errorf("the plugin listed roots %s", o.roots)
			}
			if o.progressErr == nil {
				t.Error("progress was accepted while handling a notification")
			}
		case <-time.After(5 * time.Second):
			t.Fatal("on_roots_list_changed did not run")
		}
		h.out.none(t, 50*time.Millisecond) // nothing else reaches the client

		// A client without roots.listChanged: ignored.
		h2 := session(t, srv)
		initWithCaps(t, h2, Version20251125, `{"roots":{}}`)
		h2.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
		h2.out.none(t, 100*time.Millisecond)
		if len(got) != 0 {
			t.Fatal("on_roots_list_changed ran for a client that did not declare roots.listChanged")
		}
	})
}

func TestRootsListChangedFailuresStayOnTheHost(t *testing.T) {
	eachStore(t, func(t *testing.T, newServer func(Options, *Catalog) *Server) {
		logs := &logRecords{}
		srv := newServer(Options{Logger: slog.New(logs)}, nil)
		plugin := NewPlugin("r", "", fakeRuntime{
			abi.ExportOnRootsListChanged: func(context.Context, []byte) ([]byte, error) {
				return nil, &CallError{Own: true, Message: "cannot cope"}
			},
		})
		srv.SetCatalog(BuildCatalog(t.Context(), []*Plugin{plugin}, nil))
		h := session(t, srv)
		initWithCaps(t, h, Version20251125, `{"roots":{"listChanged":true}}`)
		h.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
		h.out.none(t, 100*time.Millisecond)
		if w := logs.warnings("on_roots_list_changed failed"); len(w) != 1 || w[0]["plugin"] != "r" {
			t.Fatalf("want one logged failure naming the plugin, got %v", w)
		}
	})
}

// urlElicitingPlugin is plugin p of srv, whose tool ask sends a URL
// elicitation (its arguments), done completes one
// (notify_elicitation_complete) and done_hyper too, by hyper-mcp's name;
// each answers "ok:" and the host function's output, or "error: ".
func urlElicitingPlugin(t *testing.T, srv *Server) *Plugin {
	elicit := serverFn(t, srv, "p", abi.HostCreateElicitation)
	complete := serverFn(t, srv, "p", abi.HostNotifyElicitationComplete)
	completeHyper := serverFn(t, srv, "p", abi.HostNotifyURLElicitationCompleted)
	return NewPlugin("p", "", fakeRuntime{
		abi.ExportListTools: returns(abi.ListToolsResult{Tools: []abi.Tool{
			{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)},
			{Name: "done", InputSchema: json.RawMessage(`{"type":"object"}`)},
			{Name: "done_hyper", InputSchema: json.RawMessage(`{"type":"object"}`)},
		}}),
		abi.ExportCallTool: func(ctx context.Context, in []byte) ([]byte, error) {
			var input struct {
				Request abi.CallToolParams `json:"request"`
			}
			_ = json.Unmarshal(in, &input)
			fn := map[string]func(context.Context, []byte) ([]byte, error){"ask": elicit, "done": complete, "done_hyper": completeHyper}[input.Request.Name]
			out, err := fn(ctx, input.Request.Arguments)
			text := "ok:" + string(out)
			if err != nil {
				text = "error: " + err.Error()
			}
			return json.Marshal(abi.CallToolResult{Content: []abi.Content{{Type: "text", Text: text}}})
		},
	})
}

// textOf is the text of a tool call's response.
func textOf(t *testing.T, m map[string]any) string {
	t.Helper()
	return result(t, m)["content"].([]any)[0].(map[string]any)["text"].(string)
}

// askURL has the session of h call the plugin's ask: a URL elicitation
// the client answers with action.
func askURL(t *testing.T, h *harness, id int, elicitationID, action string) {
	t.Helper()
	h.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"ask","arguments":{"mode":"url","message":"sign in","url":"https://example.com/login","elicitationId":%q}}}`, id, elicitationID))
	req := h.out.next(t)
	if req["method"] != "elicitation/create" {
		t.Fatalf("want elicitation/create, got %v", req)
	}
	rid, _ := json.Marshal(req["id"])
	h.send(`{"jsonrpc":"2.0","id":` + string(rid) + `,"result":{"action":"` + action + `"}}`)
	if txt := textOf(t, h.out.next(t)); !strings.HasPrefix(txt, "ok:") {
		t.Fatalf("ask: %s", txt)
	}
}

// urlCaps are the capabilities of a client that takes URL elicitations.
const urlCaps = `{"elicitation":{"form":{},"url":{}}}`

func TestElicitationCompleteGoesOnlyToTheSessionThatWasAsked(t *testing.T) {
	eachStore(t, func(t *testing.T, newServer func(Options, *Catalog) *Server) {
		srv := newServer(Options{}, nil)
		otherPlugin := serverFn(t, srv, "q", abi.HostNotifyElicitationComplete)
		srv.SetCatalog(BuildCatalog(t.Context(), []*Plugin{urlElicitingPlugin(t, srv)}, nil))
		text := func(m map[string]any) string {
			t.Helper()
			return textOf(t, m)
		}
		asker, bystander := session(t, srv), session(t, srv)
		initWithCaps(t, asker, Version20251125, urlCaps)
		initWithCaps(t, bystander, Version20251125, urlCaps)
		ask := func(h *harness, id int, elicitationID, action string) {
			t.Helper()
			askURL(t, h, id, elicitationID, action)
		}
		ask(asker, 1, "e1", "accept")

		// The plugin, serving another client, says e1 completed: only the asker hears.
		if txt := text(bystander.call(t, 2, "tools/call", map[string]any{"name": "done", "arguments": map[string]any{"elicitationId": "e1"}})); txt != "ok:" {
			t.Fatalf("done: %s", txt)
		}
		m := asker.out.next(t)
		if m["method"] != "notifications/elicitation/complete" || m["params"].(map[string]any)["elicitationId"] != "e1" {
			t.Fatalf("asker got %v", m)
		}
		bystander.out.none(t, 50*time.Millisecond)

		// Completed once only; ids the plugin did not create are refused.
		for i, id := range []string{"e1", "never-issued"} {
			if txt := text(asker.call(t, 30+i, "tools/call", map[string]any{"name": "done", "arguments": map[string]any{"elicitationId": id}})); !strings.Contains(txt, "not a URL elicitation of this plugin") {
				t.Errorf("completing %s: %s", id, txt)
			}
		}
		// Another plugin cannot complete this plugin's elicitation.
		ask(asker, 4, "e2", "accept")
		if _, err := otherPlugin(t.Context(), []byte(`{"elicitationId":"e2"}`)); err == nil {
			t.Fatal("another plugin completed this plugin's elicitation")
		}
		// hyper-mcp's name is the same function.
		asker.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"done_hyper","arguments":{"elicitationId":"e2"}}}`)
		var notified, answered bool
		for range 2 { // the notification and the response, in either order
			m := asker.out.next(t)
			switch {
			case m["method"] == "notifications/elicitation/complete":
				notified = m["params"].(map[string]any)["elicitationId"] == "e2"
			case text(m) == "ok:":
				answered = true
			}
		}
		if !notified || !answered {
			t.Fatalf("done_hyper: notified %v, answered %v", notified, answered)
		}
		// A declined elicitation never completes.
		ask(asker, 6, "e3", "decline")
		if txt := text(asker.call(t, 7, "tools/call", map[string]any{"name": "done", "arguments": map[string]any{"elicitationId": "e3"}})); !strings.HasPrefix(txt, "error:") {
			t.Fatalf("completing a declined elicitation: %s", txt)
		}
		asker.out.none(t, 50*time.Millisecond)
	})
}

func TestURLElicitationsAreBoundedPerPlugin(t *testing.T) {
	var u urlElicitations
	req := &request{conn: &conn{}}
	for i := range maxURLElicitations * 3 {
		if err := u.start("p", fmt.Sprint("id", i), req); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			u.take("p", fmt.Sprint("id", i), req.conn)
		}
	}
	pe := u.byPlugin["p"]
	if len(pe.byID) > maxURLElicitations || len(pe.order) > 2*maxURLElicitations+1 {
		t.Fatalf("remembered %d ids, %d refs", len(pe.byID), len(pe.order))
	}
	if e, ok := u.take("p", fmt.Sprint("id", maxURLElicitations*3-1), nil); !ok || e.conn != req.conn {
		t.Fatal("the newest elicitation was forgotten")
	}
	if err := u.start("p", "id1", &request{conn: &conn{}}); err != nil {
		t.Fatalf("an evicted id cannot be reused: %v", err)
	}
	if err := u.start("p", "id1", &request{conn: &conn{}}); err == nil {
		t.Fatal("an id in progress with another session was reused")
	}
}

func TestAnnouncedChangesAreListedAgainWhenThePluginWasBusy(t *testing.T) {
	var failures atomic.Int32
	var grown atomic.Bool
	plugin := NewPlugin("busy", "", fakeRuntime{
		abi.ExportListTools: func(context.Context, []byte) ([]byte, error) {
			if failures.Add(-1) >= 0 {
				return nil, &CallError{Reason: "plugin call timed out", Message: "waited too long for an instance"}
			}
			tools := []abi.Tool{{Name: "one", InputSchema: objectSchema}}
			if grown.Load() {
				tools = append(tools, abi.Tool{Name: "two", InputSchema: objectSchema})
			}
			return json.Marshal(abi.ListToolsResult{Tools: tools})
		},
	})
	srv := NewServer(Options{}, BuildCatalog(t.Context(), []*Plugin{plugin}, nil))
	h := session(t, srv)
	h.init(t, Version20251125)
	grown.Store(true)
	failures.Store(2)
	notify := serverFn(t, srv, "busy", abi.HostNotifyToolListChanged)
	if _, err := notify(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if m := h.out.next(t); m["method"] != "notifications/tools/list_changed" {
		t.Fatalf("want tools/list_changed, got %v", m)
	}
	if _, ok := srv.Catalog().toolIndex["two"]; !ok {
		t.Fatal("the new tool is missing")
	}
	h.out.none(t, 300*time.Millisecond)
}
