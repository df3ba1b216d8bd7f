package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectHTTP connects the SDK client to a Streamable HTTP endpoint at
// 2025-11-25, with a bearer token unless it is "".
func connectHTTP(t *testing.T, endpoint, token string) *mcp.ClientSession {
	t.Helper()
	transport := &mcp.StreamableClientTransport{Endpoint: endpoint}
	if token != "" {
		transport.HTTPClient = &http.Client{Transport: headerTransport{"Authorization", "Bearer " + token}}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-visibility", Version: "1"}, nil).Connect(ctxT(t), transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect to %s: %v", endpoint, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// toolNames lists every tool a session sees, page after page.
func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(ctxT(t), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	return names
}

// unknownToolError calls a tool that must be unknown to the session and
// returns its error with the tool's name replaced by NAME, so that a
// hidden tool's error can be compared with a nonexistent one's.
func unknownToolError(t *testing.T, cs *mcp.ClientSession, tool string) string {
	t.Helper()
	res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	if err == nil {
		t.Fatalf("calling %s: %+v, want an error", tool, res)
	}
	return strings.ReplaceAll(err.Error(), tool, "NAME")
}

// TestScopesDecideWhoSeesAPlugin: with [auth] mode = "jwt" and a plugin
// requiring the scope memo:use, a token holding it lists and calls the
// plugin's tools, and a token without it neither lists them nor calls
// them: it gets the error of a tool that does not exist, in a 2025-11-25
// session and in stateless 2026-07-28 requests alike. Both see the
// plugin that requires nothing.
func TestScopesDecideWhoSeesAPlugin(t *testing.T) {
	issuer := newJWTIssuer(t)
	f := newFixture(t, issuer.auth+"[plugins.memo]\nrequire_scopes = [\"memo:use\"]\n", "plugins/examples/tools")
	if err := os.WriteFile(filepath.Join(f.plugins, "memo.js"), []byte(memoPlugin), 0o644); err != nil {
		t.Fatal(err)
	}
	url := f.serveHTTP(t)
	holder, stranger := issuer.token(t, "alice", "memo:use", "other"), issuer.token(t, "bob", "other")

	a := connectHTTP(t, url, holder)
	if names := toolNames(t, a); !slices.Contains(names, "remember") || !slices.Contains(names, "hash") {
		t.Errorf("the token with memo:use lists %q", names)
	}
	if res, err := a.CallTool(ctxT(t), &mcp.CallToolParams{Name: "remember", Arguments: map[string]any{"text": "x"}}); err != nil || res.IsError || text(t, res.Content) != "kept" {
		t.Fatalf("the token with memo:use calls remember: %v %+v", err, res)
	}

	b := connectHTTP(t, url, stranger)
	if names := toolNames(t, b); slices.Contains(names, "remember") || slices.Contains(names, "recall") || !slices.Contains(names, "hash") {
		t.Errorf("the token without memo:use lists %q", names)
	}
	if got, want := unknownToolError(t, b, "remember"), unknownToolError(t, b, "no_such_tool"); got != want {
		t.Errorf("the token without memo:use calling remember: %q, want the unknown tool's %q", got, want)
	}

	if names := modernToolNames(t, url, stranger); slices.Contains(names, "remember") || !slices.Contains(names, "hash") {
		t.Errorf("2026-07-28, the token without memo:use lists %q", names)
	}
	if names := modernToolNames(t, url, holder); !slices.Contains(names, "remember") {
		t.Errorf("2026-07-28, the token with memo:use lists %q", names)
	}
	modernError := func(token, tool string) string {
		res := postModernAs(t, url, token, 1, "tools/call", tool, map[string]any{"name": tool, "arguments": map[string]any{}})
		e, _ := res["error"].(map[string]any)
		if e == nil {
			t.Fatalf("2026-07-28 tools/call %s: %v, want an error", tool, res)
		}
		raw, _ := json.Marshal(e)
		return strings.ReplaceAll(string(raw), tool, "NAME")
	}
	if got, want := modernError(stranger, "remember"), modernError(stranger, "no_such_tool"); got != want {
		t.Errorf("2026-07-28, the token without memo:use calling remember: %s, want the unknown tool's %s", got, want)
	}
	res := postModernAs(t, url, holder, 1, "tools/call", "recall", map[string]any{"name": "recall", "arguments": map[string]any{}})
	if result, _ := res["result"].(map[string]any); result == nil || result["isError"] == true {
		t.Errorf("2026-07-28, the token with memo:use calling recall: %v", res)
	}
}

// TestEndpointsServeOnlyTheirPlugins: an [[endpoints]] table serves its
// plugins alone, over Streamable HTTP at its path and legacy HTTP+SSE
// under it; the default /mcp still serves every plugin.
func TestEndpointsServeOnlyTheirPlugins(t *testing.T) {
	f := newFixture(t, "[plugins.memo]\n\n[[endpoints]]\npath = \"/mcp/memo\"\nplugins = [\"memo\"]\n", "plugins/examples/tools")
	if err := os.WriteFile(filepath.Join(f.plugins, "memo.js"), []byte(memoPlugin), 0o644); err != nil {
		t.Fatal(err)
	}
	url := f.serveHTTP(t)

	all := connectHTTP(t, url, "")
	if names := toolNames(t, all); !slices.Contains(names, "remember") || !slices.Contains(names, "hash") {
		t.Errorf("/mcp lists %q, want every plugin's tools", names)
	}
	memo := connectHTTP(t, url+"/memo", "")
	if names := toolNames(t, memo); !slices.Equal(names, []string{"recall", "remember"}) && !slices.Equal(names, []string{"remember", "recall"}) {
		t.Errorf("/mcp/memo lists %q, want memo's tools only", names)
	}
	if got, want := unknownToolError(t, memo, "hash"), unknownToolError(t, memo, "no_such_tool"); got != want {
		t.Errorf("/mcp/memo calling hash: %q, want the unknown tool's %q", got, want)
	}

	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-endpoint-sse", Version: "1"}, nil)
	sse, err := client.Connect(ctxT(t), &mcp.SSEClientTransport{Endpoint: url + "/memo/sse"}, &mcp.ClientSessionOptions{ProtocolVersion: "2024-11-05"})
	if err != nil {
		t.Fatal(err)
	}
	defer sse.Close()
	if names := toolNames(t, sse); slices.Contains(names, "hash") || !slices.Contains(names, "remember") {
		t.Errorf("/mcp/memo/sse lists %q, want memo's tools only", names)
	}
}

// TestATaskIsAsVisibleAsItsPlugin (issue 23, R4): with [plugins.memo]
// require_scopes = ["memo:use"], alice's token with the scope runs memo's
// remember as a task. Her second token, without the scope, in a session
// of its own, lists no task, and its tasks/get, tasks/result and
// tasks/cancel of that task are answered exactly as for a task that does
// not exist, as its tools/call of remember is answered as for a tool that
// does not exist; the token with the scope still gets the task's result.
func TestATaskIsAsVisibleAsItsPlugin(t *testing.T) {
	issuer := newJWTIssuer(t)
	f := newFixture(t, issuer.auth+"[plugins.memo]\nrequire_scopes = [\"memo:use\"]\ntask_support = { \"*\" = \"optional\" }\n", "plugins/examples/tools")
	if err := os.WriteFile(filepath.Join(f.plugins, "memo.js"), []byte(memoPlugin), 0o644); err != nil {
		t.Fatal(err)
	}
	url := f.serveHTTP(t)
	connect := func(token string) *httpPeer {
		t.Helper()
		p := &httpPeer{url: url, token: token}
		resultOf(t, p.request(t, 0, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "e2e-task-visibility", "version": "1"}}))
		p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		return p
	}
	holder := connect(issuer.token(t, "alice", "memo:use"))
	task, _ := resultOf(t, holder.request(t, 1, "tools/call", map[string]any{"name": "remember", "arguments": map[string]any{"text": "x"}, "task": map[string]any{}}))["task"].(map[string]any)
	id, _ := task["taskId"].(string)
	if id == "" {
		t.Fatalf("remember as a task: %v", task)
	}
	taskResult := func(p *httpPeer) string {
		t.Helper()
		return fmt.Sprint(resultOf(t, p.request(t, 2, "tasks/result", map[string]any{"taskId": id}))["content"])
	}
	if got := taskResult(holder); !strings.Contains(got, "kept") {
		t.Fatalf("the token with memo:use: tasks/result %s", got)
	}

	stranger := connect(issuer.token(t, "alice"))
	sameAsUnknown := func(method string, params func(string) map[string]any, hidden, unknown string) {
		t.Helper()
		got, want := response(t, stranger.request(t, 3, method, params(hidden))), response(t, stranger.request(t, 3, method, params(unknown)))
		g, _ := json.Marshal(got["error"])
		w, _ := json.Marshal(want["error"])
		if got["error"] == nil || string(g) != strings.ReplaceAll(string(w), unknown, hidden) {
			t.Errorf("the token without memo:use: %s %v: %v, want it answered as %s: %s", method, params(hidden), got, unknown, w)
		}
	}
	sameAsUnknown("tools/call", func(name string) map[string]any { return map[string]any{"name": name, "arguments": map[string]any{}} }, "remember", "no_such_tool")
	if tasks := resultOf(t, stranger.request(t, 4, "tasks/list", nil))["tasks"].([]any); len(tasks) != 0 {
		t.Errorf("the token without memo:use lists the tasks %v", tasks)
	}
	for _, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		sameAsUnknown(method, func(id string) map[string]any { return map[string]any{"taskId": id} }, id, "no-such-task")
	}
	if got := taskResult(holder); !strings.Contains(got, "kept") {
		t.Errorf("the token with memo:use, after the other's tasks/cancel: tasks/result %s", got)
	}
}
