package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/pluginfake"
	"github.com/mcphost/mcphost/internal/testrig/rpctest"
)

// fakeRuntime is a plugin runtime made of Go functions, one per export.
// fakeRuntime, returns: plugin runtimes of Go functions.
type fakeRuntime = pluginfake.Runtime

var returns = pluginfake.Returns

// recorder is an Outbound that keeps every message it is sent.
type recorder struct {
	mu   sync.Mutex
	msgs []map[string]any
	ch   chan map[string]any
}

func newRecorder() *recorder { return &recorder{ch: make(chan map[string]any, 100)} }

func (r *recorder) Send(msg []byte) error {
	var m map[string]any
	if err := json.Unmarshal(msg, &m); err != nil {
		var batch []map[string]any
		if err := json.Unmarshal(msg, &batch); err != nil {
			return err
		}
		m = map[string]any{"batch": batch}
	}
	r.mu.Lock()
	r.msgs = append(r.msgs, m)
	r.mu.Unlock()
	r.ch <- m
	return nil
}

// next waits for the next message.
func (r *recorder) next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case m := <-r.ch:
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no message within 5s")
		return nil
	}
}

// none asserts nothing arrives for a while.
func (r *recorder) none(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case m := <-r.ch:
		t.Fatalf("unexpected message %v", m)
	case <-time.After(d):
	}
}

type harness struct {
	srv  *Server
	sess *Session
	out  *recorder
}

func newHarness(t *testing.T, plugins ...*Plugin) *harness {
	t.Helper()
	return newHarnessOn(t, NewServer, plugins...)
}

// newHarnessOn is newHarness on a server newServer makes (eachStore).
func newHarnessOn(t *testing.T, newServer func(Options, *Catalog) *Server, plugins ...*Plugin) *harness {
	t.Helper()
	return session(t, newServer(Options{Name: "test", Title: "Test Server", Version: "1", PageSize: 2}, BuildCatalog(context.Background(), plugins, nil)))
}

// send delivers a raw message.
func (h *harness) send(raw string) { h.sess.Handle(context.Background(), []byte(raw), h.out) }

// call sends a request and returns its response.
func (h *harness) call(t *testing.T, id int, method string, params any) map[string]any {
	t.Helper()
	p, _ := json.Marshal(params)
	h.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, p))
	return h.out.next(t)
}

// init performs the handshake at a protocol version.
func (h *harness) init(t *testing.T, version string) map[string]any {
	t.Helper()
	res := h.call(t, 0, "initialize", map[string]any{"protocolVersion": version, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return res
}

// errCode, result: the error code and the result of a response.
var (
	errCode = rpctest.ErrCode
	result  = rpctest.Result
)

var objectSchema = pluginfake.NSchema

var echoTool = abi.Tool{Name: "echo", InputSchema: objectSchema}

func toolsPlugin(name string, tools ...abi.Tool) *Plugin {
	return NewPlugin(name, "", pluginfake.Tools(name, tools...))
}

func TestMalformedMessagesGetTheRightErrorCodes(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		raw  string
		code int
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"`, CodeParseError},
		{`not json`, CodeParseError},
		{`{"id":1,"method":"ping"}`, CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":1,"method":5}`, CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":1}`, CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}`, CodeInvalidParams},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, CodeInvalidRequest}, // batch before 2025-03-26 session
	}
	for _, c := range cases {
		h.send(c.raw)
		if got := errCode(t, h.out.next(t)); got != c.code {
			t.Errorf("%s: code %d, want %d", c.raw, got, c.code)
		}
	}
}

func TestLifecycleAllowsOnlyPingBeforeInitialized(t *testing.T) {
	eachStore(t, func(t *testing.T, newServer func(Options, *Catalog) *Server) {
		h := newHarnessOn(t, newServer, toolsPlugin("a", abi.Tool{Name: "t", InputSchema: objectSchema}))
		if r := h.call(t, 1, "ping", nil); r["result"] == nil {
			t.Fatalf("ping before initialize: %v", r)
		}
		if code := errCode(t, h.call(t, 2, "tools/list", nil)); code != CodeInvalidRequest {
			t.Fatalf("tools/list before initialize: code %d", code)
		}
		h.call(t, 3, "initialize", map[string]any{"protocolVersion": Version20251125})
		if code := errCode(t, h.call(t, 4, "tools/list", nil)); code != CodeInvalidRequest {
			t.Fatalf("tools/list before notifications/initialized: code %d", code)
		}
		h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		h.out.none(t, 50*time.Millisecond) // notifications get no response
		if r := h.call(t, 5, "tools/list", nil); r["result"] == nil {
			t.Fatalf("tools/list after initialized: %v", r)
		}
		if code := errCode(t, h.call(t, 6, "initialize", map[string]any{"protocolVersion": Version20251125})); code != CodeInvalidRequest {
			t.Fatalf("second initialize: code %d", code)
		}
		if code := errCode(t, h.call(t, 7, "no/such/method", nil)); code != CodeMethodNotFound {
			t.Fatalf("unknown method: code %d", code)
		}
	})
}

func TestVersionNegotiation(t *testing.T) {
	eachStore(t, func(t *testing.T, newServer func(Options, *Catalog) *Server) {
		for requested, want := range map[string]string{
			Version20251125: Version20251125, Version20250618: Version20250618,
			Version20250326: Version20250326, Version20241105: Version20241105,
			"2099-01-01": LatestVersion,
		} {
			h := newHarnessOn(t, newServer)
			res := result(t, h.init(t, requested))
			if res["protocolVersion"] != want {
				t.Errorf("requested %s: got %v, want %s", requested, res["protocolVersion"], want)
			}
			info := res["serverInfo"].(map[string]any)
			if _, hasTitle := info["title"]; hasTitle != atLeast(want, Version20250618) {
				t.Errorf("version %s: serverInfo.title present=%v", want, hasTitle)
			}
		}
	})
}

func TestCapabilitiesFollowTheCatalog(t *testing.T) {
	eachStore(t, func(t *testing.T, newServer func(Options, *Catalog) *Server) {
		h := newHarnessOn(t, newServer, toolsPlugin("a", abi.Tool{Name: "t", InputSchema: objectSchema}))
		caps := result(t, h.init(t, Version20251125))["capabilities"].(map[string]any)
		if caps["tools"] == nil || caps["logging"] == nil {
			t.Fatalf("capabilities %v lack tools or logging", caps)
		}
		if caps["prompts"] != nil || caps["resources"] != nil || caps["completions"] != nil {
			t.Fatalf("capabilities %v claim features no plugin offers", caps)
		}
	})
}

func TestToolsListPaginatesWithOpaqueCursors(t *testing.T) {
	var tools []abi.Tool
	for i := range 5 {
		tools = append(tools, abi.Tool{Name: fmt.Sprintf("t%d", i), InputSchema: objectSchema})
	}
	h := newHarness(t, toolsPlugin("a", tools...))
	h.init(t, Version20251125)
	var names []string
	cursor := ""
	for i := 0; ; i++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		res := result(t, h.call(t, 10+i, "tools/list", params))
		for _, tl := range res["tools"].([]any) {
			names = append(names, tl.(map[string]any)["name"].(string))
		}
		next, _ := res["nextCursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	if strings.Join(names, ",") != "t0,t1,t2,t3,t4" {
		t.Fatalf("paged names %v", names)
	}
	if code := errCode(t, h.call(t, 99, "tools/list", map[string]any{"cursor": "garbage!"})); code != CodeInvalidParams {
		t.Fatalf("invalid cursor: code %d", code)
	}
	promptsCursor := encodeCursor("prompts", 1)
	if code := errCode(t, h.call(t, 98, "tools/list", map[string]any{"cursor": promptsCursor})); code != CodeInvalidParams {
		t.Fatalf("cursor of another list: code %d", code)
	}
}

func TestToolArgumentsAreValidatedBeforeThePluginRuns(t *testing.T) {
	h := newHarness(t, toolsPlugin("a", abi.Tool{Name: "count", InputSchema: objectSchema}))
	h.init(t, Version20251125)
	res := result(t, h.call(t, 1, "tools/call", map[string]any{"name": "count", "arguments": map[string]any{"n": "three"}}))
	text := res["content"].([]any)[0].(map[string]any)["text"].(string)
	if res["isError"] != true || !strings.Contains(text, "/n") {
		t.Fatalf("want an isError result naming /n, got %v", res)
	}
	res = result(t, h.call(t, 2, "tools/call", map[string]any{"name": "count", "arguments": map[string]any{}}))
	if res["isError"] != true || !strings.Contains(res["content"].([]any)[0].(map[string]any)["text"].(string), "n") {
		t.Fatalf("missing required argument: %v", res)
	}
	res = result(t, h.call(t, 3, "tools/call", map[string]any{"name": "count", "arguments": map[string]any{"n": 3}}))
	if res["isError"] == true || res["content"].([]any)[0].(map[string]any)["text"] != `a:count:{"n":3}` {
		t.Fatalf("valid call: %v", res)
	}
	if code := errCode(t, h.call(t, 4, "tools/call", map[string]any{"name": "nope"})); code != CodeInvalidParams {
		t.Fatalf("unknown tool: code %d", code)
	}
}

func TestSameToolNameInTwoPluginsIsNeverShadowed(t *testing.T) {
	a := toolsPlugin("alpha", abi.Tool{Name: "search", InputSchema: objectSchema})
	b := toolsPlugin("beta", abi.Tool{Name: "search", InputSchema: objectSchema})
	prefixed := toolsPlugin("gamma", abi.Tool{Name: "search", InputSchema: objectSchema})
	prefixed.Prefix = "g_"
	h := newHarness(t, b, prefixed, a) // order given does not matter
	h.init(t, Version20251125)
	id := 0 // a new id per request: the previous one may not be released yet
	for name, want := range map[string]string{"search": "alpha:search", "beta_search": "beta:search", "g_search": "gamma:search"} {
		id++
		res := result(t, h.call(t, id, "tools/call", map[string]any{"name": name, "arguments": map[string]any{"n": 1}}))
		if text := res["content"].([]any)[0].(map[string]any)["text"].(string); !strings.HasPrefix(text, want) {
			t.Errorf("%s answered %q, want %s", name, text, want)
		}
	}
}

func TestToolResultsAreCheckedAndDowngraded(t *testing.T) {
	out := json.RawMessage(`{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}`)
	var structured any = map[string]any{"sum": 3}
	plugin := NewPlugin("p", "", fakeRuntime{
		abi.ExportListTools: returns(abi.ListToolsResult{Tools: []abi.Tool{
			{Name: "good", Title: "Good", InputSchema: objectSchema, OutputSchema: out},
			{Name: "liar", InputSchema: objectSchema, OutputSchema: out},
			{Name: "fails", InputSchema: objectSchema},
			{Name: "refuses", InputSchema: objectSchema},
			{Name: "plain", InputSchema: objectSchema},
			{Name: "bad name!", InputSchema: objectSchema},
			{Name: "noschema"},
		}}),
		abi.ExportCallTool: func(_ context.Context, in []byte) ([]byte, error) {
			var input struct {
				Request abi.CallToolParams `json:"request"`
			}
			_ = json.Unmarshal(in, &input)
			switch input.Request.Name {
			case "good":
				return json.Marshal(abi.CallToolResult{Content: []abi.Content{{Type: "text", Text: `{"sum":3}`}, {Type: "resource_link", URI: "file:///a", Name: "a"}}, StructuredContent: structured})
			case "liar":
				return json.Marshal(abi.CallToolResult{Content: []abi.Content{{Type: "text", Text: "x"}}, StructuredContent: map[string]any{"sum": "three"}})
			case "fails":
				return nil, &CallError{Reason: "plugin call timed out", Message: "timed out after 1s"}
			case "plain":
				return nil, &CallError{Own: true, Message: "the city is unknown"}
			default:
				return nil, &CallError{Own: true, Message: `{"code":-32602,"message":"refused: bad input"}`}
			}
		},
	})
	h := newHarness(t, plugin)
	h.init(t, Version20251125)
	list := result(t, h.call(t, 1, "tools/list", map[string]any{}))
	list2 := result(t, h.call(t, 2, "tools/list", map[string]any{"cursor": list["nextCursor"]}))
	list3 := result(t, h.call(t, 20, "tools/list", map[string]any{"cursor": list2["nextCursor"]}))
	if n := len(list["tools"].([]any)) + len(list2["tools"].([]any)) + len(list3["tools"].([]any)); n != 5 {
		t.Fatalf("want 5 valid tools listed (bad name and missing schema left out), got %d", n)
	}
	res := result(t, h.call(t, 3, "tools/call", map[string]any{"name": "good", "arguments": map[string]any{"n": 1}}))
	if res["structuredContent"] == nil || res["isError"] == true {
		t.Fatalf("good: %v", res)
	}
	res = result(t, h.call(t, 4, "tools/call", map[string]any{"name": "liar", "arguments": map[string]any{"n": 1}}))
	if res["isError"] != true || !strings.Contains(fmt.Sprint(res["content"]), "outputSchema") {
		t.Fatalf("liar: want isError about outputSchema, got %v", res)
	}
	res = result(t, h.call(t, 5, "tools/call", map[string]any{"name": "fails", "arguments": map[string]any{"n": 1}}))
	if res["isError"] != true || !strings.Contains(fmt.Sprint(res["content"]), "timed out") {
		t.Fatalf("fails: %v", res)
	}
	res = result(t, h.call(t, 7, "tools/call", map[string]any{"name": "plain", "arguments": map[string]any{"n": 1}}))
	if text := res["content"].([]any)[0].(map[string]any)["text"]; res["isError"] != true || text != "the city is unknown" {
		t.Fatalf("a plugin's error text must reach the model as it is: %v", res)
	}
	if code := errCode(t, h.call(t, 6, "tools/call", map[string]any{"name": "refuses", "arguments": map[string]any{"n": 1}})); code != CodeInvalidParams {
		t.Fatalf("plugin-chosen protocol error: code %d", code)
	}

	old := newHarness(t, plugin)
	old.init(t, Version20250326)
	tool := result(t, old.call(t, 1, "tools/list", map[string]any{}))["tools"].([]any)[0].(map[string]any)
	if tool["title"] != nil || tool["outputSchema"] != nil {
		t.Fatalf("2025-03-26 client got newer tool fields: %v", tool)
	}
	res = result(t, old.call(t, 2, "tools/call", map[string]any{"name": "good", "arguments": map[string]any{"n": 1}}))
	if res["structuredContent"] != nil || res["content"].([]any)[1].(map[string]any)["type"] != "text" {
		t.Fatalf("2025-03-26 client got structuredContent or a resource_link: %v", res)
	}
}

func TestBatchesOnlyOn20250326(t *testing.T) {
	eachStore(t, func(t *testing.T, newServer func(Options, *Catalog) *Server) {
		h := newHarnessOn(t, newServer, toolsPlugin("a", abi.Tool{Name: "t", InputSchema: objectSchema}))
		h.init(t, Version20250326)
		h.send(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`)
		batch := h.out.next(t)["batch"].([]map[string]any)
		if len(batch) != 2 {
			t.Fatalf("want 2 responses in the batch, got %v", batch)
		}
		h2 := newHarnessOn(t, newServer)
		h2.init(t, Version20250618)
		h2.send(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`)
		if code := errCode(t, h2.out.next(t)); code != CodeInvalidRequest {
			t.Fatalf("batch on 2025-06-18: code %d", code)
		}
	})
}

func TestCancelledRequestStopsThePluginAndGetsNoResponse(t *testing.T) {
	started := make(chan struct{})
	stopped := make(chan error, 1)
	plugin := NewPlugin("slow", "", fakeRuntime{
		abi.ExportListTools: returns(abi.ListToolsResult{Tools: []abi.Tool{{Name: "wait", InputSchema: json.RawMessage(`{"type":"object"}`)}}}),
		abi.ExportCallTool: func(ctx context.Context, _ []byte) ([]byte, error) {
			close(started)
			<-ctx.Done()
			stopped <- ctx.Err()
			return nil, &CallError{Reason: "plugin call canceled", Message: "canceled", Canceled: true}
		},
	})
	h := newHarness(t, plugin)
	h.init(t, Version20251125)
	h.send(`{"jsonrpc":"2.0","id":"slow-1","method":"tools/call","params":{"name":"wait"}}`)
	<-started
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow-1","reason":"user"}}`)
	select {
	case err := <-stopped:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("plugin saw %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("plugin call was not interrupted")
	}
	h.out.none(t, 100*time.Millisecond)
	if r := h.call(t, 2, "ping", nil); r["result"] == nil {
		t.Fatalf("session no longer answers: %v", r)
	}
}

func TestProgressReachesTheClientOnlyWithTheRequestsToken(t *testing.T) {
	progress := (&Server{}).HostFunctions("p")[abi.HostNotifyProgress]
	plugin := NewPlugin("p", "", fakeRuntime{
		abi.ExportListTools: returns(abi.ListToolsResult{Tools: []abi.Tool{{Name: "job", InputSchema: json.RawMessage(`{"type":"object"}`)}}}),
		abi.ExportCallTool: func(ctx context.Context, in []byte) ([]byte, error) {
			var input abi.Input
			_ = json.Unmarshal(in, &input)
			token := input.Context.Meta["progressToken"]
			for _, v := range []float64{1, 2} {
				if _, err := progress(ctx, mustJSON(abi.ProgressParams{ProgressToken: token, Progress: v})); err != nil {
					return nil, err
				}
			}
			if _, err := progress(ctx, mustJSON(abi.ProgressParams{ProgressToken: token, Progress: 1})); err == nil {
				return nil, errors.New("decreasing progress was accepted")
			}
			return json.Marshal(abi.CallToolResult{Content: []abi.Content{{Type: "text", Text: "done"}}})
		},
	})
	h := newHarness(t, plugin)
	h.init(t, Version20251125)
	h.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"job","_meta":{"progressToken":"tok"}}}`)
	for _, want := range []float64{1, 2} {
		m := h.out.next(t)
		p := m["params"].(map[string]any)
		if m["method"] != "notifications/progress" || p["progressToken"] != "tok" || p["progress"] != want {
			t.Fatalf("want progress %v, got %v", want, m)
		}
	}
	res := result(t, h.out.next(t))
	if res["isError"] == true {
		t.Fatalf("job: %v", res)
	}
}

func TestResourcesRouteByURIAndTemplate(t *testing.T) {
	read := func(_ context.Context, in []byte) ([]byte, error) {
		var input struct {
			Request abi.ReadResourceParams `json:"request"`
		}
		_ = json.Unmarshal(in, &input)
		return json.Marshal(abi.ReadResourceResult{Contents: []abi.ResourceContents{{URI: input.Request.URI, Text: "body of " + input.Request.URI}}})
	}
	plugin := NewPlugin("docs", "", fakeRuntime{
		abi.ExportListResources:         returns(abi.ListResourcesResult{Resources: []abi.Resource{{URI: "docs://readme", Name: "readme"}, {URI: "not a uri", Name: "bad"}}}),
		abi.ExportListResourceTemplates: returns(abi.ListResourceTemplatesResult{ResourceTemplates: []abi.ResourceTemplate{{URITemplate: "docs://pages/{page}", Name: "page"}}}),
		abi.ExportReadResource:          read,
	})
	h := newHarness(t, plugin)
	h.init(t, Version20251125)
	if n := len(result(t, h.call(t, 1, "resources/list", nil))["resources"].([]any)); n != 1 {
		t.Fatalf("want the invalid URI left out, got %d resources", n)
	}
	for id, uri := range []string{"docs://readme", "docs://pages/intro"} {
		res := result(t, h.call(t, 10+id, "resources/read", map[string]any{"uri": uri}))
		if got := res["contents"].([]any)[0].(map[string]any)["text"]; got != "body of "+uri {
			t.Fatalf("%s read %v", uri, got)
		}
	}
	if code := errCode(t, h.call(t, 20, "resources/read", map[string]any{"uri": "other://x"})); code != CodeResourceNotFound {
		t.Fatalf("unknown resource: code %d", code)
	}
}

func TestCompletionIsRoutedAndCapped(t *testing.T) {
	var seen abi.CompleteParams
	plugin := NewPlugin("p", "pre_", fakeRuntime{
		abi.ExportListPrompts: returns(abi.ListPromptsResult{Prompts: []abi.Prompt{{Name: "review", Arguments: []abi.PromptArgument{{Name: "language", Required: true}}}}}),
		abi.ExportGetPrompt:   returns(abi.GetPromptResult{Messages: []abi.PromptMessage{{Role: "user", Content: abi.Content{Type: "text", Text: "hi"}}}}),
		abi.ExportComplete: func(_ context.Context, in []byte) ([]byte, error) {
			var input struct {
				Request abi.CompleteParams `json:"request"`
			}
			_ = json.Unmarshal(in, &input)
			seen = input.Request
			values := make([]string, 150)
			for i := range values {
				values[i] = fmt.Sprint("v", i)
			}
			return json.Marshal(abi.CompleteResult{Completion: abi.Completion{Values: values}})
		},
	})
	h := newHarness(t, plugin)
	caps := result(t, h.init(t, Version20251125))["capabilities"].(map[string]any)
	if caps["completions"] == nil || caps["prompts"] == nil {
		t.Fatalf("capabilities %v", caps)
	}
	res := result(t, h.call(t, 1, "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "pre_review"}, "argument": map[string]any{"name": "language", "value": "py"}}))
	c := res["completion"].(map[string]any)
	if len(c["values"].([]any)) != 100 || c["hasMore"] != true || c["total"] != float64(150) {
		t.Fatalf("completion not capped: %v", c)
	}
	if seen.Ref.Type != abi.RefPrompt || seen.Ref.Name != "review" || seen.Argument.Value != "py" {
		t.Fatalf("plugin saw %+v", seen)
	}
	if code := errCode(t, h.call(t, 2, "prompts/get", map[string]any{"name": "pre_review"})); code != CodeInvalidParams {
		t.Fatalf("missing required prompt argument: code %d", code)
	}
	if code := errCode(t, h.call(t, 3, "prompts/get", map[string]any{"name": "nope"})); code != CodeInvalidParams {
		t.Fatalf("unknown prompt: code %d", code)
	}
}

func TestRequestsOnOneSessionRunConcurrently(t *testing.T) {
	eachStore(t, func(t *testing.T, newServer func(Options, *Catalog) *Server) {
		// Each call waits until both are in flight: served one after the other,
		// the first would give up.
		var mu sync.Mutex
		inFlight := 0
		both := make(chan struct{})
		plugin := NewPlugin("p", "", fakeRuntime{
			abi.ExportListTools: returns(abi.ListToolsResult{Tools: []abi.Tool{{Name: "meet", InputSchema: json.RawMessage(`{"type":"object"}`)}}}),
			abi.ExportCallTool: func(context.Context, []byte) ([]byte, error) {
				mu.Lock()
				inFlight++
				if inFlight == 2 {
					close(both)
				}
				mu.Unlock()
				select {
				case <-both:
					return json.Marshal(abi.CallToolResult{Content: []abi.Content{{Type: "text", Text: "met"}}})
				case <-time.After(3 * time.Second):
					return nil, &CallError{Own: true, Message: "the other call never came"}
				}
			},
		})
		h := newHarnessOn(t, newServer, plugin)
		h.init(t, Version20251125)
		h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"meet"}}`)
		h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"meet"}}`)
		for range 2 {
			res := result(t, h.out.next(t))
			if res["isError"] == true {
				t.Fatalf("calls were not concurrent: %v", res)
			}
		}
	})
}

func TestAnIDIsFreeAgainOnceItsResponseArrives(t *testing.T) {
	h := newHarness(t, toolsPlugin("a", abi.Tool{Name: "t", InputSchema: objectSchema}))
	h.init(t, Version20251125)
	for range 200 { // a client that reuses one id as soon as it has the answer
		res := h.call(t, 1, "tools/call", map[string]any{"name": "t", "arguments": map[string]any{"n": 1}})
		if res["error"] != nil {
			t.Fatalf("reusing an answered id: %v", res)
		}
	}
}

// TestOversizedBatchesAreRefusedWhole: a 2025-03-26 batch of more than
// maxBatch messages is refused with one error before any of it runs, so
// that one line cannot make the server build an unbounded response.
func TestOversizedBatchesAreRefusedWhole(t *testing.T) {
	var calls atomic.Int64
	rt := fakeRuntime{
		abi.ExportListTools: func(context.Context, []byte) ([]byte, error) {
			return json.Marshal(abi.ListToolsResult{Tools: []abi.Tool{{Name: "t", InputSchema: objectSchema}}})
		},
		abi.ExportCallTool: func(context.Context, []byte) ([]byte, error) {
			calls.Add(1)
			return json.Marshal(abi.CallToolResult{Content: []abi.Content{}})
		},
	}
	h := newHarness(t, NewPlugin("p", "", rt))
	h.init(t, Version20250326)
	batch := func(n int) string {
		items := make([]string, n)
		for i := range items {
			items[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t","arguments":{"n":1}}}`, i+1)
		}
		return "[" + strings.Join(items, ",") + "]"
	}
	h.send(batch(78000))
	resp := h.out.next(t)
	if errCode(t, resp) != CodeInvalidRequest || !strings.Contains(fmt.Sprint(resp["error"]), "78000 messages") {
		t.Fatalf("oversized batch: %v", resp)
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("%d calls of an oversized batch ran", n)
	}
	h.send(batch(maxBatch))
	if got := len(h.out.next(t)["batch"].([]map[string]any)); got != maxBatch {
		t.Fatalf("a batch of %d got %d responses", maxBatch, got)
	}
}
