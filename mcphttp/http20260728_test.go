package mcphttp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/jsonrpc"
)

// modernPost sends a 2026-07-28 request to /mcp with the standard headers
// of its body (MCP-Protocol-Version, Mcp-Method, and Mcp-Name when given);
// headers add or, empty, remove headers after them.
func (hh *httpHarness) modernPost(t *testing.T, method, name, params string, headers ...string) *http.Response {
	t.Helper()
	std := []string{headerVersion, host.Version20260728, "Mcp-Method", method}
	if name != "" {
		std = append(std, "Mcp-Name", name)
	}
	return hh.do(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":7,"method":"`+method+`","params":`+params+`}`, append(std, headers...)...)
}

// decodeBody reads a JSON-RPC response body.
func decodeBody(t *testing.T, resp *http.Response) map[string]any {
	t.Helper()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("body %q: %v", raw, err)
	}
	return m
}

// Modern requests over Streamable HTTP need no session: each POST is served
// on its own and no Mcp-Session-Id is minted; a session id sent anyway is
// ignored. The headers must mirror the body (-32020 otherwise, 400), a
// missing _meta field is 400 -32602, an unsupported version 400 -32022, a
// removed or unknown method 404 -32601, a missing client capability 400
// -32021; every error carries the request's id.
func TestModernRequestsOverStreamableHTTP(t *testing.T) {
	hh := newHTTPHarness(t, Options{}, toolsPlugin("a", echoTool), callerPlugin(hostFn(t, abi.HostCreateMessage)))
	meta := modernMeta(`{}`, "")
	callEcho := `{"name":"echo","arguments":{"x":1},"_meta":` + meta + `}`
	b64 := func(s string) string { return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?=" }
	for _, tc := range []struct {
		name, method, mcpName, params string
		headers                       []string
		status, code                  int
	}{
		{"discover", "server/discover", "", `{"_meta":` + meta + `}`, nil, 200, 0},
		{"tools/call", "tools/call", "echo", callEcho, nil, 200, 0},
		{"Mcp-Name in base64", "tools/call", b64("echo"), callEcho, nil, 200, 0},
		{"a session id is ignored", "tools/call", "echo", callEcho, []string{headerSessionID, "no-such-session"}, 200, 0},
		{"version header differs from _meta", "server/discover", "", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999.0.0","io.modelcontextprotocol/clientCapabilities":{}}}`, nil, 400, host.CodeHeaderMismatch},
		{"version header missing", "server/discover", "", `{"_meta":` + meta + `}`, []string{headerVersion, ""}, 400, host.CodeHeaderMismatch},
		{"Mcp-Method differs", "server/discover", "", `{"_meta":` + meta + `}`, []string{"Mcp-Method", "tools/list"}, 400, host.CodeHeaderMismatch},
		{"Mcp-Method missing", "server/discover", "", `{"_meta":` + meta + `}`, []string{"Mcp-Method", ""}, 400, host.CodeHeaderMismatch},
		{"Mcp-Name differs", "tools/call", "other", callEcho, nil, 400, host.CodeHeaderMismatch},
		{"Mcp-Name in base64 differs", "tools/call", b64("other"), callEcho, nil, 400, host.CodeHeaderMismatch},
		{"Mcp-Name missing", "tools/call", "", callEcho, nil, 400, host.CodeHeaderMismatch},
		{"unsupported version", "server/discover", "", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999.0.0","io.modelcontextprotocol/clientCapabilities":{}}}`, []string{headerVersion, "v999.0.0"}, 400, host.CodeUnsupportedProtocolVersion},
		{"no _meta", "server/discover", "", `{}`, nil, 400, jsonrpc.CodeInvalidParams},
		{"no clientCapabilities", "tools/list", "", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`, nil, 400, jsonrpc.CodeInvalidParams},
		{"removed method", "ping", "", `{"_meta":` + meta + `}`, nil, 404, jsonrpc.CodeMethodNotFound},
		{"unknown method", "unknown/method", "", `{"_meta":` + meta + `}`, nil, 404, jsonrpc.CodeMethodNotFound},
		{"unknown tool", "tools/call", "nope", `{"name":"nope","_meta":` + meta + `}`, nil, 200, jsonrpc.CodeInvalidParams},
		{"missing client capability", "tools/call", "ask", `{"name":"ask","arguments":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10},"_meta":` + meta + `}`, nil, 400, host.CodeMissingClientCapability},
	} {
		resp := hh.modernPost(t, tc.method, tc.mcpName, tc.params, tc.headers...)
		if sid := resp.Header.Get(headerSessionID); sid != "" {
			t.Errorf("%s: a session id %q was minted", tc.name, sid)
		}
		m := decodeBody(t, resp)
		code := 0
		if e, ok := m["error"].(map[string]any); ok {
			code = int(e["code"].(float64))
		}
		if resp.StatusCode != tc.status || code != tc.code || m["id"] != float64(7) {
			t.Errorf("%s: HTTP %d, code %d, id %v; want HTTP %d, code %d, id 7 (%v)", tc.name, resp.StatusCode, code, m["id"], tc.status, tc.code, m)
		}
		if r, ok := m["result"].(map[string]any); ok && r["resultType"] != "complete" {
			t.Errorf("%s: resultType %v", tc.name, r["resultType"])
		}
	}
}

// A legacy session and modern requests share the endpoint: the session
// keeps its answers (no resultType) while stateless requests are served.
func TestLegacySessionsAndModernRequestsShareTheEndpoint(t *testing.T) {
	hh := newHTTPHarness(t, Options{}, toolsPlugin("a", echoTool))
	sid := hh.initSession(t, host.Version20251125)
	modern := decodeBody(t, hh.modernPost(t, "tools/list", "", `{"_meta":`+modernMeta(`{}`, "")+`}`))
	legacy := decodeBody(t, hh.do(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`, headerSessionID, sid, headerVersion, host.Version20251125))
	if r, _ := modern["result"].(map[string]any); r == nil || r["resultType"] != "complete" {
		t.Errorf("modern tools/list: %v", modern)
	}
	if r, _ := legacy["result"].(map[string]any); r == nil || r["resultType"] != nil || r["tools"] == nil {
		t.Errorf("legacy tools/list: %v", legacy)
	}
}

// A modern request's notifications (here log messages, asked for with
// _meta logLevel) make its answer an SSE stream that carries them and ends
// with the response; without logLevel the plugin's logs are dropped and the
// answer is one JSON body.
func TestModernRequestStreamsOnlyWhatItCauses(t *testing.T) {
	hh := newHTTPHarness(t, Options{}, gatedPlugin(t, nil))
	spam := func(level string) *http.Response {
		return hh.modernPost(t, "tools/call", "spam", `{"name":"spam","arguments":{"n":2,"size":3},"_meta":`+modernMeta(`{}`, level)+`}`)
	}
	resp := spam("")
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("without logLevel: Content-Type %q, want application/json", ct)
	}
	if m := decodeBody(t, resp); m["result"] == nil {
		t.Errorf("without logLevel: %v", m)
	}

	er := readEvents(t, spam("info"))
	var methods []string
	for {
		_, m := er.message(t)
		if m["id"] != nil {
			if r, _ := m["result"].(map[string]any); r == nil || r["resultType"] != "complete" {
				t.Errorf("final message %v", m)
			}
			break
		}
		methods = append(methods, m["method"].(string))
	}
	if strings.Join(methods, ",") != "notifications/message,notifications/message" {
		t.Errorf("stream carried %v before the response, want two log messages", methods)
	}
	if _, ok := er.next(t); ok {
		t.Error("the stream goes on after the response")
	}
}

// Tool parameters annotated with x-mcp-header are mirrored in
// Mcp-Param-{Name} headers: a value in the body needs its header, equal to
// it after base64 decoding (integers compared as numbers), else 400
// -32020; an absent or null value needs none. (A tool with a mark out of
// reach of properties is left out of the catalog: xmcpheader_test.go.)
func TestModernToolCallHeadersMirrorXMCPHeaderParams(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"count":{"type":"integer","x-mcp-header":"Count"},
		"opts":{"type":"object","properties":{"dry":{"type":"boolean","x-mcp-header":"Dry"}}}}}`)
	hh := newHTTPHarness(t, Options{}, toolsPlugin("a", abi.Tool{Name: "sql", InputSchema: schema}))
	call := func(args string, headers ...string) (int, int) {
		resp := hh.modernPost(t, "tools/call", "sql", `{"name":"sql","arguments":`+args+`,"_meta":`+modernMeta(`{}`, "")+`}`, headers...)
		m := decodeBody(t, resp)
		if e, ok := m["error"].(map[string]any); ok {
			return resp.StatusCode, int(e["code"].(float64))
		}
		return resp.StatusCode, 0
	}
	all := `{"region":"us-west1","count":42,"opts":{"dry":true}}`
	for _, tc := range []struct {
		name, args string
		headers    []string
		status     int
	}{
		{"all mirrored", all, []string{"Mcp-Param-Region", "us-west1", "Mcp-Param-Count", "42", "mcp-param-dry", "true"}, 200},
		{"base64", `{"region":"Hello, 世界"}`, []string{"Mcp-Param-Region", "=?base64?SGVsbG8sIOS4lueVjA==?="}, 200},
		{"no base64 suffix is literal", `{"region":"=?base64?SGVsbG8="}`, []string{"Mcp-Param-Region", "=?base64?SGVsbG8="}, 200},
		{"integers compare as numbers", `{"count":42}`, []string{"Mcp-Param-Count", "42.0"}, 200},
		{"absent and null values need no header", `{"region":null}`, nil, 200},
		{"missing header", all, []string{"Mcp-Param-Region", "us-west1", "Mcp-Param-Count", "42"}, 400},
		{"different value", `{"region":"us-west1"}`, []string{"Mcp-Param-Region", "eu-west1"}, 400},
		{"different integer", `{"count":42}`, []string{"Mcp-Param-Count", "43"}, 400},
		{"bad base64 padding", `{"region":"Hello"}`, []string{"Mcp-Param-Region", "=?base64?SGVsbG8?="}, 400},
		{"bad base64 characters", `{"region":"Hello"}`, []string{"Mcp-Param-Region", "=?base64?SGVs!!!bG8=?="}, 400},
	} {
		status, code := call(tc.args, tc.headers...)
		if status != tc.status || (status == 400) != (code == host.CodeHeaderMismatch) {
			t.Errorf("%s: HTTP %d, code %d; want HTTP %d", tc.name, status, code, tc.status)
		}
	}
}

// 2026-07-28 has no GET stream and no session to DELETE: a client that
// says it speaks 2026-07-28 and names no session gets 405, allowed POST. A
// request without the version header and without a session is refused as
// before (400), and a legacy session's GET is served as before.
func TestModernGETAndDELETEAreNotAllowed(t *testing.T) {
	hh := newHTTPHarness(t, Options{}, toolsPlugin("a", echoTool))
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		resp := hh.do(t, method, "/mcp", "", "Accept", "text/event-stream", headerVersion, host.Version20260728)
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != http.MethodPost {
			t.Errorf("%s at 2026-07-28: %d, Allow %q; want 405, Allow POST", method, resp.StatusCode, resp.Header.Get("Allow"))
		}
		if code := hh.status(t, method, "/mcp", "", "Accept", "text/event-stream"); code != http.StatusBadRequest {
			t.Errorf("%s without a version or a session: %d, want 400", method, code)
		}
	}
	sid := hh.initSession(t, host.Version20251125)
	if code := hh.status(t, http.MethodDelete, "/mcp", "", headerSessionID, sid, headerVersion, host.Version20251125); code != http.StatusNoContent {
		t.Errorf("DELETE of a legacy session: %d, want 204", code)
	}
}

// Over Streamable HTTP a subscription is the SSE answer to its POST:
// acknowledgement first, then its notifications; closing the stream ends
// the subscription, and with it the exchange.
func TestListenOverHTTPIsAnSSEStream(t *testing.T) {
	ended := make(chan struct{}, 1)
	endOfListen := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r)
			if r.Header.Get(headerMethod) == "subscriptions/listen" {
				ended <- struct{}{}
			}
		})
	}
	ts := httptest.NewUnstartedServer(nil)
	srv := host.NewServer(host.Options{Name: "test", Version: "1", CatalogChanges: true}, host.BuildCatalog(context.Background(), []*host.Plugin{toolsPlugin("a", echoTool)}, nil))
	h := NewHandler(srv, ts.Listener.Addr().String(), Options{Middleware: endOfListen})
	ts.Config.Handler = h
	ts.Start()
	t.Cleanup(func() { h.Close(); ts.Close() })
	hh := &httpHarness{h: h, url: ts.URL}

	resp := hh.modernPost(t, "subscriptions/listen", "", `{"notifications":{"toolsListChanged":true},"_meta":`+modernMeta(`{}`, "")+`}`)
	er := readEvents(t, resp)
	if _, ack := er.message(t); ack["method"] != "notifications/subscriptions/acknowledged" || subscriptionID(ack) != float64(7) {
		t.Fatalf("first event %v, want the acknowledgement", ack)
	}
	srv.ReplacePlugins(context.Background(), []*host.Plugin{toolsPlugin("b", abi.Tool{Name: "other", InputSchema: objectSchema})})
	if _, m := er.message(t); m["method"] != "notifications/tools/list_changed" || subscriptionID(m) != float64(7) {
		t.Errorf("event %v, want tools/list_changed tagged 7", m)
	}
	resp.Body.Close()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the subscription's exchange did not end when its client closed the stream")
	}
}

// subscriptionID returns the subscription id a notification is tagged
// with.
func subscriptionID(m map[string]any) any {
	params, _ := m["params"].(map[string]any)
	meta, _ := params["_meta"].(map[string]any)
	return meta["io.modelcontextprotocol/subscriptionId"]
}
