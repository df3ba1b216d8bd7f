package host

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/pluginfake"
	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/mcphost/mcphost/internal/testrig/rpctest"
)

// testScopesKey carries a request's token scopes in the tests, standing in
// for package auth.
type testScopesKey struct{}

func withScopes(scopes ...string) context.Context {
	return context.WithValue(context.Background(), testScopesKey{}, scopes)
}

func testScopes(ctx context.Context) []string {
	s, _ := ctx.Value(testScopesKey{}).([]string)
	return s
}

// everythingPlugin offers one of each kind: a tool, a prompt, a resource
// and a template, all named after the plugin, and completes.
func everythingPlugin(name string, opts ...PluginOption) *Plugin {
	return NewPlugin(name, "", pluginfake.Everything(name), opts...)
}

// scopedHarness serves an open plugin and one, secret, that requires the
// scopes team-a and read, to sessions whose requests carry the scopes of
// their context.
func scopedHarness(t *testing.T) *harness {
	t.Helper()
	srv := NewServer(Options{Name: "test", Version: "1", Scopes: testScopes}, BuildCatalog(context.Background(), []*Plugin{
		everythingPlugin("open"),
		everythingPlugin("secret", WithRequiredScopes([]string{"team-a", "read"})),
	}, nil))
	out := newRecorder()
	h := &harness{srv: srv, sess: srv.NewSession(out), out: out}
	t.Cleanup(h.sess.Close)
	return h
}

// ask sends a request with ctx (its token's scopes) and returns its
// response, skipping the notifications and requests sent meanwhile; meta,
// unless "", makes it a 2026-07-28 request.
func (h *harness) ask(t *testing.T, ctx context.Context, id int, method string, params map[string]any, meta string) map[string]any {
	t.Helper()
	raw, _ := json.Marshal(params)
	if meta != "" {
		if len(params) == 0 {
			raw = []byte(`{"_meta":` + meta + `}`)
		} else {
			raw = []byte(string(raw[:len(raw)-1]) + `,"_meta":` + meta + `}`)
		}
	}
	h.sess.Handle(ctx, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, raw), h.out)
	for {
		if m := h.out.next(t); m["method"] == nil {
			return m
		}
	}
}

// initAs performs the handshake at version with the token of ctx.
func (h *harness) initAs(t *testing.T, ctx context.Context, version string) {
	t.Helper()
	h.ask(t, ctx, 0, "initialize", map[string]any{"protocolVersion": version, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}, "")
	h.sess.Handle(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), h.out)
}

// listen opens subscriptions/listen, id "l", with the token of ctx and the
// notifications filter, and returns the filter its acknowledgement
// honours.
func (h *harness) listen(t *testing.T, ctx context.Context, filter string) map[string]any {
	t.Helper()
	h.sess.Handle(ctx, []byte(`{"jsonrpc":"2.0","id":"l","method":"subscriptions/listen","params":{"notifications":`+filter+`,"_meta":`+modernMeta(`{}`, "")+`}}`), h.out)
	ack := h.out.next(t)
	if ack["method"] != "notifications/subscriptions/acknowledged" {
		t.Fatalf("listen: %v", ack)
	}
	return ack["params"].(map[string]any)["notifications"].(map[string]any)
}

// names returns the names (or URIs) a list response holds.
var names = rpctest.Names

// uses are one request per way of using an item of a plugin named name,
// with the request that uses a name nobody offers in the same way.
func uses(name string) []struct {
	method          string
	params, unknown map[string]any
} {
	return []struct {
		method          string
		params, unknown map[string]any
	}{
		{"tools/call", map[string]any{"name": name + "_tool"}, map[string]any{"name": "nobody_tool"}},
		{"prompts/get", map[string]any{"name": name + "_prompt"}, map[string]any{"name": "nobody_prompt"}},
		{"resources/read", map[string]any{"uri": name + "://doc"}, map[string]any{"uri": "nobody://doc"}},
		{"resources/read", map[string]any{"uri": name + "://pages/1"}, map[string]any{"uri": "nobody://pages/1"}},
		{"completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": name + "_prompt"}, "argument": map[string]any{"name": "a", "value": ""}},
			map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "nobody_prompt"}, "argument": map[string]any{"name": "a", "value": ""}}},
		{"completion/complete", map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": name + "://pages/{page}"}, "argument": map[string]any{"name": "page", "value": ""}},
			map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": "nobody://pages/{page}"}, "argument": map[string]any{"name": "page", "value": ""}}},
		{"resources/subscribe", map[string]any{"uri": name + "://doc"}, map[string]any{"uri": "nobody://doc"}},
	}
}

// hiddenAsUnknown checks that using an item of plugin secret is answered
// as using an item nobody offers is, but for the name: the same code, the
// same message and data with the name replaced.
func hiddenAsUnknown(t *testing.T, h *harness, ctx context.Context, meta, what string) {
	t.Helper()
	for i, u := range uses("secret") {
		if meta != "" && u.method == "resources/subscribe" {
			continue // subscriptions/listen serves modern requests
		}
		got := h.ask(t, ctx, 100+i, u.method, u.params, meta)
		want := h.ask(t, ctx, 100+i, u.method, u.unknown, meta)
		g, _ := json.Marshal(got["error"])
		w, _ := json.Marshal(want["error"])
		if got["error"] == nil || string(g) != strings.ReplaceAll(string(w), "nobody", "secret") {
			t.Errorf("%s: %s %v: %s, want it answered as unknown: %s", what, u.method, u.params, mustJSON(got), w)
		}
	}
}

// listsOnlyOpen checks that the tools, prompts, resources and templates
// lists hold only those of plugin open.
func listsOnlyOpen(t *testing.T, h *harness, ctx context.Context, meta, what string) {
	t.Helper()
	for _, l := range []struct{ method, field, key string }{
		{"tools/list", "tools", "name"}, {"prompts/list", "prompts", "name"},
		{"resources/list", "resources", "uri"}, {"resources/templates/list", "resourceTemplates", "uriTemplate"},
	} {
		for _, name := range names(t, h.ask(t, ctx, 1, l.method, nil, meta), l.field, l.key) {
			if !slices.Contains([]string{"open_tool", "open_prompt", "open://doc", "open://pages/{page}"}, name) {
				t.Errorf("%s: %s lists %s", what, l.method, name)
			}
		}
	}
}

// TestAPluginRequiringScopesIsHiddenFromTokensWithoutThem: a plugin with
// required scopes is listed and used only by requests whose token holds
// every one of them; to the others, its tools, prompts, resources,
// templates and completions do not exist, and using one is answered
// exactly as using one nobody offers. Legacy sessions and 2026-07-28
// requests alike.
func TestAPluginRequiringScopesIsHiddenFromTokensWithoutThem(t *testing.T) {
	h := scopedHarness(t)
	h.init(t, Version20251125)
	modern := modernMeta(`{}`, "")
	for _, era := range []struct{ name, meta string }{{"2025-11-25", ""}, {"2026-07-28", modern}} {
		for _, scopes := range [][]string{nil, {"team-a"}, {"read", "other"}} {
			ctx := withScopes(scopes...)
			what := fmt.Sprintf("%s, scopes %v", era.name, scopes)
			listsOnlyOpen(t, h, ctx, era.meta, what)
			hiddenAsUnknown(t, h, ctx, era.meta, what)
			for i, u := range uses("open") {
				if era.meta != "" && u.method == "resources/subscribe" {
					continue
				}
				if resp := h.ask(t, ctx, 200+i, u.method, u.params, era.meta); resp["error"] != nil {
					t.Errorf("%s: %s of the open plugin: %v", what, u.method, resp["error"])
				}
			}
		}
		ctx := withScopes("read", "team-a", "other")
		if got := names(t, h.ask(t, ctx, 1, "tools/list", nil, era.meta), "tools", "name"); !reflect.DeepEqual(got, []string{"open_tool", "secret_tool"}) {
			t.Errorf("%s, every scope: tools %v", era.name, got)
		}
		for i, u := range uses("secret") {
			if era.meta != "" && u.method == "resources/subscribe" {
				continue
			}
			if resp := h.ask(t, ctx, 300+i, u.method, u.params, era.meta); resp["error"] != nil {
				t.Errorf("%s, every scope: %s: %v", era.name, u.method, resp["error"])
			}
		}
	}
}

// TestAnEndpointHidesThePluginsItDoesNotServe: at an endpoint that serves
// only the plugin open, even a token holding every scope sees nothing of
// the plugin secret: its tools, prompts, resources and templates are not
// listed, and its tools/call, prompts/get, resources/read (by URI and by
// template), completion/complete (of its prompt and of its template) and
// resources/subscribe are answered as for items nobody offers, in a legacy
// session and 2026-07-28 requests alike.
func TestAnEndpointHidesThePluginsItDoesNotServe(t *testing.T) {
	h := sessionAt(t, scopedHarness(t).srv, onlyOpen)
	ctx := withScopes("read", "team-a")
	h.initAs(t, ctx, Version20251125)
	for _, era := range []struct{ name, meta string }{{"2025-11-25", ""}, {"2026-07-28", modernMeta(`{}`, "")}} {
		what := "at an endpoint serving open alone, " + era.name
		listsOnlyOpen(t, h, ctx, era.meta, what)
		hiddenAsUnknown(t, h, ctx, era.meta, what)
	}
}

// TestStdioServesNoPluginRequiringScopes: without authentication (stdio,
// no Options.Scopes), no request has a token, so a plugin requiring
// scopes is served to nobody.
func TestStdioServesNoPluginRequiringScopes(t *testing.T) {
	h := newHarness(t, everythingPlugin("open"), everythingPlugin("secret", WithRequiredScopes([]string{"read"})))
	h.init(t, Version20251125)
	if got := names(t, h.call(t, 1, "tools/list", nil), "tools", "name"); !reflect.DeepEqual(got, []string{"open_tool"}) {
		t.Errorf("tools over stdio: %v", got)
	}
	hiddenAsUnknown(t, h, context.Background(), "", "stdio")
}

// TestListChangesReachOnlyThoseWhoSeeThem: when only a scoped plugin's
// lists change, the sessions and subscriptions whose token lacks its
// scopes are not told; those that hold them are.
func TestListChangesReachOnlyThoseWhoSeeThem(t *testing.T) {
	secret := func(tool string) *Plugin {
		return NewPlugin("secret", "", fakeRuntime{abi.ExportListTools: returns(abi.ListToolsResult{Tools: []abi.Tool{{Name: tool, InputSchema: json.RawMessage(`{"type":"object"}`)}}})},
			WithRequiredScopes([]string{"read"}))
	}
	open := toolsPlugin("open", abi.Tool{Name: "pub", InputSchema: json.RawMessage(`{"type":"object"}`)})
	srv := NewServer(Options{Name: "test", Version: "1", Scopes: testScopes, CatalogChanges: true}, BuildCatalog(context.Background(), []*Plugin{open, secret("one")}, nil))
	session := func(scopes ...string) *harness {
		out := newRecorder()
		h := &harness{srv: srv, sess: srv.NewSession(out), out: out}
		t.Cleanup(h.sess.Close)
		h.initAs(t, withScopes(scopes...), Version20251125)
		h.listen(t, withScopes(scopes...), `{"toolsListChanged":true}`)
		return h
	}
	reader, stranger := session("read"), session("write")
	poll.Until(t, 5*time.Second, "two listeners", func() bool { return srv.listeners.active() == 2 })

	srv.ReplacePlugins(context.Background(), []*Plugin{open, secret("two")})
	got := map[any]bool{}
	for range 2 {
		m := reader.out.next(t)
		got[m["method"].(string)+fmt.Sprint(subscriptionID(m))] = true
	}
	if !got["notifications/tools/list_changed<nil>"] || !got["notifications/tools/list_changedl"] {
		t.Errorf("the reader's session and subscription were told %v", got)
	}
	stranger.out.none(t, 50*time.Millisecond)

	srv.ReplacePlugins(context.Background(), []*Plugin{toolsPlugin("open", abi.Tool{Name: "pub2", InputSchema: json.RawMessage(`{"type":"object"}`)}), secret("two")})
	for _, h := range []*harness{reader, stranger} {
		for range 2 {
			if m := h.out.next(t); m["method"] != "notifications/tools/list_changed" {
				t.Errorf("a change of the open plugin: %v", m)
			}
		}
	}
}

// token returns the context of a request whose token names subject and
// holds scopes.
func token(subject string, scopes ...string) context.Context {
	return context.WithValue(withScopes(scopes...), subjectKey{}, subject)
}

func testSubject(ctx context.Context) string { s, _ := ctx.Value(subjectKey{}).(string); return s }

// onlyOpen is the set of an endpoint that serves the plugin open alone.
var onlyOpen = &PluginSet{names: map[string]bool{"open": true}}

// sessionAt returns a harness for a session of srv serving plugins (nil:
// every plugin).
func sessionAt(t *testing.T, srv *Server, plugins *PluginSet) *harness {
	out := newRecorder()
	h := &harness{srv: srv, sess: srv.OpenSession(out, SessionOptions{Plugins: plugins}), out: out}
	t.Cleanup(h.sess.Close)
	return h
}

// taskingPlugin offers one tool, NAME_tool, that may run as a task and
// answers "called NAME" once release is closed.
func taskingPlugin(name string, release <-chan struct{}, opts ...PluginOption) *Plugin {
	return NewPlugin(name, "", fakeRuntime{
		abi.ExportListTools: returns(abi.ListToolsResult{Tools: []abi.Tool{{Name: name + "_tool", InputSchema: openSchema, Execution: &abi.ToolExecution{TaskSupport: abi.TaskOptional}}}}),
		abi.ExportCallTool: func(ctx context.Context, _ []byte) ([]byte, error) {
			select {
			case <-release:
			case <-ctx.Done():
				return nil, &CallError{Reason: "plugin call canceled", Message: "canceled", Canceled: true}
			}
			return json.Marshal(abi.CallToolResult{Content: []abi.Content{{Type: "text", Text: "called " + name}}})
		},
	}, opts...)
}

// taskViewsServer serves taskingPlugin open, and secret, which requires
// the scope secret, to requests whose context carries a subject and
// scopes; closing release lets their calls answer.
func taskViewsServer(t *testing.T, store taskStoreCase) (*Server, chan struct{}) {
	release := make(chan struct{})
	srv := store.use(NewServer(Options{Name: "test", Version: "1", Scopes: testScopes, Subject: testSubject, TaskAfter: 10 * time.Millisecond},
		BuildCatalog(context.Background(), []*Plugin{
			taskingPlugin("open", release),
			taskingPlugin("secret", release, WithRequiredScopes([]string{"secret"})),
		}, nil)))
	return srv, release
}

// hiddenTaskViewers are alice's requests that do not see the plugin
// secret: with a token without its scope, and at an endpoint serving only
// the plugin open.
var hiddenTaskViewers = []struct {
	what string
	ep   *PluginSet
	ctx  context.Context
}{
	{"a token without the scope", nil, token("alice")},
	{"an endpoint serving only the open plugin", onlyOpen, token("alice", "secret")},
}

// sameAsUnknownTask checks that a request naming the task id is answered
// exactly as the same request naming a task that does not exist.
func sameAsUnknownTask(t *testing.T, h *harness, ctx context.Context, id int, method, taskID, meta, what string) {
	t.Helper()
	params := func(taskID string) map[string]any {
		return map[string]any{"taskId": taskID, "inputResponses": map[string]any{}}
	}
	got := h.ask(t, ctx, id, method, params(taskID), meta)
	want := h.ask(t, ctx, id, method, params("no-such-task"), meta)
	if got["error"] == nil || !reflect.DeepEqual(got, want) {
		t.Errorf("%s: %s of the hidden plugin's task: %s, want it answered as an unknown task: %s", what, method, mustJSON(got), mustJSON(want))
	}
}

// TestTasksOfAHiddenPluginAreUnknown (2025-11-25): a task is as visible as
// its plugin. alice's token with the scope secret starts a task of the
// open plugin and one of the plugin requiring that scope; her session with
// a token without it, and her session at an endpoint that serves only the
// open plugin, list only the open plugin's task, and their tasks/get,
// tasks/result and tasks/cancel of the other are answered exactly as for a
// task that does not exist. Her token with the scope, at /mcp, still lists
// both and takes the hidden plugin's result.
func TestTasksOfAHiddenPluginAreUnknown(t *testing.T) {
	forEachTaskStore(t, testTasksOfAHiddenPluginAreUnknown)
}

func testTasksOfAHiddenPluginAreUnknown(t *testing.T, store taskStoreCase) {
	srv, release := taskViewsServer(t, store)
	full := token("alice", "secret")
	creator := sessionAt(t, srv, nil)
	creator.initAs(t, full, Version20251125)
	start := func(id int, tool string) string {
		t.Helper()
		res := result(t, creator.ask(t, full, id, "tools/call", map[string]any{"name": tool, "task": map[string]any{}}, ""))
		task, ok := res["task"].(map[string]any)
		if !ok {
			t.Fatalf("tools/call %s with a task: %v", tool, res)
		}
		return task["taskId"].(string)
	}
	open, secret := start(1, "open_tool"), start(2, "secret_tool")
	close(release)
	listed := func(h *harness, ctx context.Context) []string {
		t.Helper()
		var ids []string
		for _, task := range result(t, h.ask(t, ctx, 3, "tasks/list", nil, ""))["tasks"].([]any) {
			ids = append(ids, task.(map[string]any)["taskId"].(string))
		}
		return ids
	}
	taskResult := func(h *harness, ctx context.Context, id string) string {
		t.Helper()
		return fmt.Sprint(result(t, h.ask(t, ctx, 4, "tasks/result", map[string]any{"taskId": id}, ""))["content"])
	}
	if got := taskResult(creator, full, secret); !strings.Contains(got, "called secret") {
		t.Fatalf("the creator's tasks/result of the secret task: %s", got)
	}

	for _, c := range hiddenTaskViewers {
		h := sessionAt(t, srv, c.ep)
		h.initAs(t, c.ctx, Version20251125)
		if got := listed(h, c.ctx); !slices.Equal(got, []string{open}) {
			t.Errorf("%s: tasks/list %v, want only the open plugin's task %s", c.what, got, open)
		}
		for i, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
			sameAsUnknownTask(t, h, c.ctx, 10+i, method, secret, "", c.what)
		}
		if got := taskResult(h, c.ctx, open); !strings.Contains(got, "called open") {
			t.Errorf("%s: tasks/result of the open plugin's task: %s", c.what, got)
		}
	}

	if got := listed(creator, full); !slices.Equal(got, []string{open, secret}) {
		t.Errorf("the token with the scope lists %v, want both tasks %v", got, []string{open, secret})
	}
	if got := taskResult(creator, full, secret); !strings.Contains(got, "called secret") {
		t.Errorf("the token with the scope, after the others' tasks/cancel: tasks/result %s", got)
	}
}

// TestModernTasksOfAHiddenPluginAreUnknown (2026-07-28): the same for the
// tasks extension. tasks/get, tasks/update and tasks/cancel of a hidden
// plugin's task, by a token without its scope or at an endpoint that does
// not serve it, are answered exactly as for a task that does not exist;
// the token with the scope still gets the task and its result.
func TestModernTasksOfAHiddenPluginAreUnknown(t *testing.T) {
	forEachTaskStore(t, testModernTasksOfAHiddenPluginAreUnknown)
}

func testModernTasksOfAHiddenPluginAreUnknown(t *testing.T, store taskStoreCase) {
	srv, release := taskViewsServer(t, store)
	meta := modernMeta(tasksCaps, "")
	full := token("alice", "secret")
	creator := sessionAt(t, srv, nil)
	start := func(id int, tool string) string {
		t.Helper()
		res := result(t, creator.ask(t, full, id, "tools/call", map[string]any{"name": tool}, meta))
		if res["resultType"] != "task" {
			t.Fatalf("tools/call %s: %v, want a task", tool, res)
		}
		return res["taskId"].(string)
	}
	open, secret := start(1, "open_tool"), start(2, "secret_tool")
	close(release)
	if res := pollTask(t, creator, full, secret, taskCompleted); !strings.Contains(fmt.Sprint(res["result"]), "called secret") {
		t.Fatalf("the creator's tasks/get of the secret task: %v", res)
	}

	for _, c := range hiddenTaskViewers {
		h := sessionAt(t, srv, c.ep)
		for i, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
			sameAsUnknownTask(t, h, c.ctx, 10+i, method, secret, meta, c.what)
		}
		if res := pollTask(t, h, c.ctx, open, taskCompleted); !strings.Contains(fmt.Sprint(res["result"]), "called open") {
			t.Errorf("%s: tasks/get of the open plugin's task: %v", c.what, res)
		}
	}

	if res := pollTask(t, creator, full, secret, taskCompleted); res["status"] != taskCompleted || !strings.Contains(fmt.Sprint(res["result"]), "called secret") {
		t.Errorf("the token with the scope, after the others' tasks/cancel: %v", res)
	}
}

// sharedURIPlugins are a plugin open whose template shared://{name}
// matches shared://doc, and a plugin secret, requiring the scope read,
// that lists shared://doc: a token with the scope reads shared://doc from
// secret, one without it from open.
func sharedURIPlugins() []*Plugin {
	return []*Plugin{
		NewPlugin("open", "", fakeRuntime{abi.ExportListResourceTemplates: returns(abi.ListResourceTemplatesResult{
			ResourceTemplates: []abi.ResourceTemplate{{URITemplate: "shared://{name}", Name: "shared"}}})}),
		NewPlugin("secret", "", fakeRuntime{abi.ExportListResources: returns(abi.ListResourcesResult{
			Resources: []abi.Resource{{URI: "shared://doc", Name: "doc"}}})}, WithRequiredScopes([]string{"read"})),
	}
}

// sharedSubscriber returns a session of srv initialized with a token
// holding scopes, subscribed to shared://doc with resources/subscribe and
// with subscriptions/listen.
func sharedSubscriber(t *testing.T, srv *Server, scopes ...string) *harness {
	t.Helper()
	h, ctx := sessionAt(t, srv, nil), withScopes(scopes...)
	h.initAs(t, ctx, Version20251125)
	if r := h.ask(t, ctx, 1, "resources/subscribe", map[string]any{"uri": "shared://doc"}, ""); r["result"] == nil {
		t.Fatalf("subscribe with scopes %v: %v", scopes, r)
	}
	h.listen(t, ctx, `{"resourceSubscriptions":["shared://doc"]}`)
	return h
}

// TestResourceUpdatesReachThoseTheAnnouncingPluginServes: resources/updated
// of a URI reaches the sessions and subscriptions/listen streams to which
// the announcing plugin serves that URI, and no other. When secret, hidden
// from tokens without the scope read, announces shared://doc, only the
// subscribers with the scope are told; when open, whose template serves
// shared://doc to the others, announces it, only they are told.
func TestResourceUpdatesReachThoseTheAnnouncingPluginServes(t *testing.T) {
	srv := NewServer(Options{Name: "test", Version: "1", Scopes: testScopes}, BuildCatalog(t.Context(), sharedURIPlugins(), nil))
	reader, stranger := sharedSubscriber(t, srv, "read"), sharedSubscriber(t, srv)
	poll.Until(t, 5*time.Second, "two listeners", func() bool { return srv.listeners.active() == 2 })
	for _, c := range []struct {
		plugin         string
		told, untold   *harness
		who, bystander string
	}{{"secret", reader, stranger, "the reader", "the stranger"}, {"open", stranger, reader, "the stranger", "the reader"}} {
		if _, err := srv.HostFunctions(c.plugin)[abi.HostNotifyResourceUpdated](t.Context(), []byte(`{"uri":"shared://doc"}`)); err != nil {
			t.Errorf("%s announcing shared://doc: %v", c.plugin, err)
			continue
		}
		got := map[string]bool{}
		for range 2 {
			m := c.told.out.next(t)
			got[fmt.Sprint(m["method"], " ", m["params"].(map[string]any)["uri"], " ", subscriptionID(m))] = true
		}
		if want := map[string]bool{"notifications/resources/updated shared://doc <nil>": true, "notifications/resources/updated shared://doc l": true}; !maps.Equal(got, want) {
			t.Errorf("%s announced shared://doc: %s's session and subscription were told %v, want %v", c.plugin, c.who, got, want)
		}
		select {
		case m := <-c.untold.out.ch:
			t.Errorf("%s announced shared://doc: %s, to whom it does not serve it, was told %v", c.plugin, c.bystander, m)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestASubscriptionEndsWhenItsURIIsGoneForItsSession: a session whose
// subscribed URI no plugin it sees serves anymore is told and
// unsubscribed, whatever a plugin hidden from it still serves: when open
// goes, the stranger, who read shared://doc from open's template, is told
// it changed (it is gone) and unsubscribed; the reader, to whom secret
// still serves it, keeps the subscription and is not told.
func TestASubscriptionEndsWhenItsURIIsGoneForItsSession(t *testing.T) {
	plugins := sharedURIPlugins()
	srv := NewServer(Options{Name: "test", Version: "1", Scopes: testScopes}, BuildCatalog(t.Context(), plugins, nil))
	reader, stranger := sharedSubscriber(t, srv, "read"), sharedSubscriber(t, srv)
	srv.ReplacePlugins(t.Context(), plugins[1:])
	told := func(h *harness) []string {
		var got []string
		for {
			select {
			case m := <-h.out.ch:
				if m["method"] == "notifications/resources/updated" {
					got = append(got, fmt.Sprint(m["params"].(map[string]any)["uri"]))
				}
				continue
			case <-time.After(100 * time.Millisecond):
			}
			return got
		}
	}
	if got := told(stranger); !slices.Equal(got, []string{"shared://doc"}) {
		t.Errorf("the stranger, to whom shared://doc is gone, was told of updates %v, want shared://doc", got)
	}
	if got := told(reader); len(got) > 0 {
		t.Errorf("the reader, to whom secret still serves shared://doc, was told of updates %v", got)
	}
	if got := srv.subs.subscribers("shared://doc"); !slices.Equal(got, []*Session{reader.sess}) {
		t.Errorf("shared://doc has %d subscribers, the reader among them: %v; want the reader alone", len(got), slices.Contains(got, reader.sess))
	}
}

// TestListenHonoursOnlyWhatItsViewMayAnnounce: subscriptions/listen
// honours a list's changes only when a plugin the token sees may announce
// them. A hidden plugin granted notify_prompt_list_changed makes the
// acknowledgement honour promptsListChanged for the token with its scope
// and for no other, whom it would tell that a plugin they do not see
// offers prompts.
func TestListenHonoursOnlyWhatItsViewMayAnnounce(t *testing.T) {
	announcer := NewPlugin("secret", "", fakeRuntime{abi.ExportListPrompts: returns(abi.ListPromptsResult{})},
		WithRequiredScopes([]string{"read"}), WithGrantedHostFunctions([]string{abi.HostNotifyPromptListChanged}))
	srv := NewServer(Options{Name: "test", Version: "1", Scopes: testScopes}, BuildCatalog(t.Context(), []*Plugin{everythingPlugin("open"), announcer}, nil))
	for _, c := range []struct {
		scopes []string
		want   bool
	}{{[]string{"read"}, true}, {nil, false}} {
		got := sessionAt(t, srv, nil).listen(t, withScopes(c.scopes...), `{"promptsListChanged":true}`)
		if got["promptsListChanged"] == true != c.want {
			t.Errorf("scopes %v: the acknowledgement honours %v, want promptsListChanged %v", c.scopes, got, c.want)
		}
	}
}
