package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/testenv"
)

// conformanceGrants lets the conformance plugin ask the client and notify
// it.
const conformanceGrants = `
[plugins.conformance]
host_functions = ["create_elicitation", "create_message", "notify_logging_message", "notify_progress", "notify_prompt_list_changed", "notify_tool_list_changed", "request_input"]
`

// mrtrFixture is a server of the conformance plugin, allowed to ask the
// client, whose requestState keys are in a file of its own holding keys.
func mrtrFixture(t *testing.T, keys string) fixture {
	t.Helper()
	keyFile := filepath.Join(t.TempDir(), "request-state-keys")
	if err := os.WriteFile(keyFile, []byte(keys), 0o600); err != nil {
		t.Fatal(err)
	}
	return newFixture(t, conformanceGrants, "plugins/conformance").withServerSetting(t, fmt.Sprintf("request_state_key_file = %q\n", keyFile))
}

// withServerSetting adds a line to the [server] table of the fixture's
// config.
func (f fixture) withServerSetting(t testing.TB, line string) fixture {
	t.Helper()
	b, err := os.ReadFile(f.config)
	if err != nil {
		t.Fatal(err)
	}
	cfg := strings.Replace(string(b), "[server]\n", "[server]\n"+line, 1)
	if err := os.WriteFile(f.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// postModern sends one 2026-07-28 request over Streamable HTTP, with the
// headers that mirror it, and returns the JSON-RPC response.
func postModern(t *testing.T, url string, id int, method, name string, params map[string]any) map[string]any {
	t.Helper()
	return postModernAs(t, url, "", id, method, name, params)
}

// postModernAs is postModern with a bearer token, unless it is "".
func postModernAs(t *testing.T, url, token string, id int, method, name string, params map[string]any) map[string]any {
	t.Helper()
	resp := openModernAs(t, url, token, id, method, name, params)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: HTTP %d, body %q is not one JSON-RPC response: %v", method, resp.StatusCode, raw, err)
	}
	return m
}

// openModern sends one 2026-07-28 request over Streamable HTTP, its _meta
// (params["_meta"], if any) completed with the protocol version and client
// capabilities and its headers mirroring it, and returns the HTTP
// response, for the caller to read and close.
func openModern(t *testing.T, url string, id int, method, name string, params map[string]any) *http.Response {
	t.Helper()
	return openModernAs(t, url, "", id, method, name, params)
}

// openModernAs is openModern with a bearer token, unless it is "".
func openModernAs(t *testing.T, url, token string, id int, method, name string, params map[string]any) *http.Response {
	t.Helper()
	resp, err := http.DefaultClient.Do(modernRequest(t, url, token, id, method, name, params))
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// modernRequest is the HTTP request openModernAs sends. The client
// capabilities are elicitation unless params["_meta"] names others.
func modernRequest(t *testing.T, url, token string, id int, method, name string, params map[string]any) *http.Request {
	t.Helper()
	meta, _ := params["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta["io.modelcontextprotocol/protocolVersion"] = "2026-07-28"
	if meta["io.modelcontextprotocol/clientCapabilities"] == nil {
		meta["io.modelcontextprotocol/clientCapabilities"] = map[string]any{"elicitation": map[string]any{}}
	}
	params["_meta"] = meta
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	req, err := http.NewRequestWithContext(ctxT(t), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

// A tool call that asks two questions in a row completes over three HTTP
// requests that alternate between two mcphost processes sharing nothing
// but the requestState key (each its own plugins folder, config and key
// file); a process with another key refuses the state as tampered.
func TestInputRequiredRetryCompletesOnASecondProcessSharingTheKey(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a plugin and starts three servers")
	}
	key := "shared-request-state-key-0123456789abcdef\n"
	first := mrtrFixture(t, key).serveHTTP(t)
	// The second is in the first step of a rotation: it signs with the
	// shared key and already accepts the next one.
	second := mrtrFixture(t, key+"# next, accepted before it signs\nnewer-request-state-key-0123456789abcdef\n").serveHTTP(t)
	stranger := mrtrFixture(t, "another-request-state-key-0123456789abcdef\n").serveHTTP(t)

	const tool = "test_input_required_result_multi_round"
	call := func(url string, id int, answers map[string]any, state any) map[string]any {
		params := map[string]any{"name": tool, "arguments": map[string]any{}}
		if answers != nil {
			params["inputResponses"] = answers
		}
		if state != nil {
			params["requestState"] = state
		}
		return postModern(t, url, id, "tools/call", tool, params)
	}
	round := func(resp map[string]any, key string) any {
		t.Helper()
		res, _ := resp["result"].(map[string]any)
		reqs, _ := res["inputRequests"].(map[string]any)
		if res["resultType"] != "input_required" || reqs[key] == nil || res["requestState"] == nil {
			t.Fatalf("want input_required asking %s, got %v", key, resp)
		}
		return res["requestState"]
	}
	accept := func(field, value string) map[string]any {
		return map[string]any{"action": "accept", "content": map[string]any{field: value}}
	}

	state := round(call(first, 1, nil, nil), "step1")
	answer1 := map[string]any{"step1": accept("name", "Alice")}
	tampered := call(stranger, 2, answer1, state)
	if e, _ := tampered["error"].(map[string]any); e == nil || e["code"] != float64(-32602) || e["data"].(map[string]any)["reason"] != "tampered" {
		t.Errorf("a process with another key: %v, want invalid params, reason tampered", tampered)
	}
	state = round(call(second, 3, answer1, state), "step2")
	resp := call(first, 4, map[string]any{"step2": accept("color", "blue")}, state)
	res, _ := resp["result"].(map[string]any)
	if res["resultType"] != "complete" || !strings.Contains(fmt.Sprint(res["content"]), "Alice likes blue") {
		t.Errorf("round 3: %v, want a complete result saying Alice likes blue", resp)
	}
}

// The configuration's instructions reach server/discover, and a plugin's
// cache_ttl and cache_scope the caching hints of its lists.
func TestInstructionsAndCacheHintsFromTheConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a plugin and starts a server")
	}
	f := newFixture(t, conformanceGrants+`cache_ttl = "90s"
cache_scope = "public"
`, "plugins/conformance").withServerSetting(t, "instructions = \"Call greet first.\"\n")
	url := f.serveHTTP(t)
	list, _ := postModern(t, url, 1, "tools/list", "", map[string]any{})["result"].(map[string]any)
	if list["ttlMs"] != float64(90000) || list["cacheScope"] != "public" {
		t.Errorf("tools/list: ttlMs %v, cacheScope %v; want 90000, public", list["ttlMs"], list["cacheScope"])
	}
	discover, _ := postModern(t, url, 2, "server/discover", "", map[string]any{})["result"].(map[string]any)
	if discover["instructions"] != "Call greet first." {
		t.Errorf("server/discover instructions %v", discover["instructions"])
	}
}

// The TypeScript SDK v2 client (@modelcontextprotocol/client 2.4.0)
// negotiates 2026-07-28 with mcphost over stdio and HTTP, in auto mode and
// pinned, and its input_required support completes a tool call that asks
// two questions in a row; in legacy mode the same plugin asks the same
// questions with requests to the client.
func TestTypeScriptV2ClientInterop(t *testing.T) {
	node := nodeWith(t, "@modelcontextprotocol/client")
	f := mrtrFixture(t, "ts-v2-interop-request-state-key-0123456789\n")
	url := f.serveHTTP(t)
	stdio := append([]string{"stdio", mcphostBin}, f.command().Args[1:]...)
	for _, tc := range []struct {
		mode, transport string
		args            []string
		era, version    string
	}{
		{"auto", "http", []string{"http", url}, "modern", "2026-07-28"},
		{"pin", "http", []string{"http", url}, "modern", "2026-07-28"},
		{"auto", "stdio", stdio, "modern", "2026-07-28"},
		{"pin", "stdio", stdio, "modern", "2026-07-28"},
		{"legacy", "stdio", stdio, "legacy", "2025-11-25"},
	} {
		t.Run(tc.mode+"-"+tc.transport, func(t *testing.T) {
			checkV2Client(t, node, tc.era, tc.version, append([]string{tc.mode}, tc.args...)...)
		})
	}
}

// checkV2Client runs the TypeScript SDK v2 client (v2client.mjs) with
// args and checks that it spoke era at version, listed tools, greeted, and
// had its two questions asked and answered.
func checkV2Client(t *testing.T, node, era, version string, args ...string) {
	t.Helper()
	out := runNode(t, node, "", append([]string{filepath.Join(tsClientDir, "v2client.mjs")}, args...)...)
	var got struct {
		Era, Version, Greet, Rounds string
		Tools                       int
		Asked                       []string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client output %q: %v", out, err)
	}
	if got.Era != era || got.Version != version || got.Tools == 0 || got.Greet != "Hello, v2!" ||
		got.Rounds != "Alice likes blue" || len(got.Asked) != 2 {
		t.Errorf("the v2 client %v saw %s; want era %s at %s, both questions asked and answered", args, out, era, version)
	}
}

// The Inspector CLI (@modelcontextprotocol/inspector 2.12.0) in the modern
// era lists mcphost's tools and calls one, over stdio and HTTP.
func TestInspectorCLIModernEra(t *testing.T) {
	node := nodeWith(t, "@modelcontextprotocol/inspector")
	cli := filepath.Join(tsClientDir, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
	f := mrtrFixture(t, "inspector-request-state-key-0123456789abcdef\n")
	url := f.serveHTTP(t)
	home := t.TempDir() // the Inspector keeps a catalog under $HOME
	run := func(t *testing.T, target []string, args ...string) map[string]any {
		t.Helper()
		out := runNode(t, node, home, append(append([]string{cli, "--cli", "--protocol-era", "modern"}, args...), target...)...)
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("inspector %v printed %q: %v", args, out, err)
		}
		return m
	}
	for name, target := range map[string][]string{
		"stdio": append([]string{"--", mcphostBin}, f.command().Args[1:]...),
		"HTTP":  {"--transport", "http", "--server-url", url},
	} {
		t.Run(name, func(t *testing.T) {
			if tools, _ := run(t, target, "--method", "tools/list")["tools"].([]any); len(tools) == 0 {
				t.Error("tools/list: no tools")
			}
			res := run(t, target, "--method", "tools/call", "--tool-name", "greet", "--tool-arg", "name=inspector")
			if res["resultType"] != "complete" || !strings.Contains(fmt.Sprint(res["content"]), "Hello, inspector!") {
				t.Errorf("tools/call greet: %v", res)
			}
		})
	}
}

// nodeWith returns the Node binary once the package (a path below
// tsclient's node_modules) is installed: the test is skipped without them,
// and fails in CI, where scripts/setup.sh installs them.
func nodeWith(t *testing.T, pkg string) string {
	t.Helper()
	node := nodeBinary()
	_, err := os.Stat(filepath.Join(tsClientDir, "node_modules", pkg, "package.json"))
	if node == "" || err != nil {
		testenv.Missing(t, "the test needs Node and %s (scripts/setup.sh installs them): node=%q: %v", pkg, node, err)
	}
	return node
}

// runNode runs a Node script with args and HOME set to home (when not
// empty) and returns what it printed, failing the test with its stderr when
// it fails.
func runNode(t *testing.T, node, home string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	if home != "" {
		cmd.Env = append(os.Environ(), "HOME="+home)
	}
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("node %v: %v\n%s\n%s", args, err, out, stderr)
	}
	return out
}
