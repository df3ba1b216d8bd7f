package host

import (
	"context"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/pluginfake"
)

// modernMeta is the per-request _meta of a 2026-07-28 request with these
// client capabilities and, unless "", this log level.
var modernMeta = pluginfake.Meta20260728

// A plugin asking the client for something the 2026-07-28 request did not
// declare it can do makes the whole request -32021, naming the missing
// capability as a ClientCapabilities object; nothing is sent to the client.
func TestModernRequestLackingACapabilityIsMissingRequiredClientCapability(t *testing.T) {
	sampling := `{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10`
	for _, tc := range []struct {
		fn, caps, args string
		want           map[string]any
	}{
		{abi.HostCreateMessage, `{}`, sampling + `}`, map[string]any{"sampling": map[string]any{}}},
		{abi.HostCreateMessage, `{"sampling":{}}`, sampling + `,"tools":[{"name":"x","inputSchema":{"type":"object"}}]}`, map[string]any{"sampling": map[string]any{"tools": map[string]any{}}}},
		{abi.HostCreateElicitation, `{}`, `{"message":"name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`, map[string]any{"elicitation": map[string]any{}}},
		{abi.HostListRoots, `{}`, `{}`, map[string]any{"roots": map[string]any{}}},
	} {
		h := newHarness(t, callerPlugin(hostFn(t, tc.fn)))
		h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":` + tc.args + `,"_meta":` + modernMeta(tc.caps, "") + `}}`)
		resp := h.out.next(t)
		if code := errCode(t, resp); code != CodeMissingClientCapability {
			t.Errorf("%s with capabilities %s: code %d, want %d (%v)", tc.fn, tc.caps, code, CodeMissingClientCapability, resp)
			continue
		}
		data, _ := resp["error"].(map[string]any)["data"].(map[string]any)
		if got := data["requiredCapabilities"]; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s with capabilities %s: requiredCapabilities %v, want %v", tc.fn, tc.caps, got, tc.want)
		}
		h.out.none(t, 20*time.Millisecond)
	}
}

// A 2026-07-28 request is never answered with a request to the client (the
// stdio binding forbids it): a plugin asking a client that declared the
// capability makes the request answer input_required, with the question.
func TestModernRequestSendsNoRequestToTheClient(t *testing.T) {
	h := newHarness(t, callerPlugin(hostFn(t, abi.HostCreateMessage)))
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10},"_meta":` + modernMeta(`{"sampling":{}}`, "") + `}}`)
	resp := h.out.next(t)
	reqs, _ := inputRequired(t, resp)
	if q, _ := reqs["sampling-1"].(map[string]any); q == nil || q["method"] != "sampling/createMessage" {
		t.Errorf("inputRequests %v, want sampling-1, a sampling/createMessage request", reqs)
	}
}

// The log level of a 2026-07-28 request is its own _meta logLevel: no log
// messages without one, only those at or above it with one, whatever a
// legacy session on the same stream set with logging/setLevel.
func TestModernLogLevelIsPerRequest(t *testing.T) {
	eachStore(t, func(t *testing.T, newServer func(Options, *Catalog) *Server) {
		srv := newServer(Options{Name: "test", Version: "1"}, nil)
		logFn := serverFn(t, srv, "p", abi.HostNotifyLoggingMessage)
		srv.catalog.Store(BuildCatalog(context.Background(), []*Plugin{callerPlugin(func(ctx context.Context, _ []byte) ([]byte, error) {
			return logFn(ctx, []byte(`{"level":"warning","data":"careful"}`))
		})}, nil))
		h := &harness{srv: srv, out: newRecorder()}
		h.sess = srv.NewSession(h.out)
		t.Cleanup(h.sess.Close)
		initWithCaps(t, h, Version20251125, `{}`)
		result(t, h.call(t, 1, "logging/setLevel", map[string]any{"level": "debug"}))

		for i, tc := range []struct {
			level string
			logs  int
		}{{"", 0}, {"debug", 1}, {"warning", 1}, {"error", 0}} {
			h.send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(2+i) + `,"method":"tools/call","params":{"name":"ask","arguments":{},"_meta":` + modernMeta(`{}`, tc.level) + `}}`)
			if logs := h.logsBeforeResponse(t); logs != tc.logs {
				t.Errorf("logLevel %q: %d log messages for a warning, want %d", tc.level, logs, tc.logs)
			}
		}
	})
}

// With no initialize to wait for the plugins loading at start-up, a
// 2026-07-28 request waits for them itself, as initialize would: its first
// tools/list and completion see the plugins that were loading.
func TestModernRequestsWaitForThePluginsLoading(t *testing.T) {
	srv := NewServer(Options{Name: "test", Version: "1"}, nil)
	compiled, done := srv.Loading(1, time.Minute)
	compiled()
	h := &harness{srv: srv, out: newRecorder()}
	h.sess = srv.NewSession(h.out)
	t.Cleanup(h.sess.Close)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":` + modernMeta(`{}`, "") + `}}`)
	h.send(`{"jsonrpc":"2.0","id":2,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"review"},"argument":{"name":"language","value":"g"},"_meta":` + modernMeta(`{}`, "") + `}}`)
	h.out.none(t, 100*time.Millisecond)
	srv.ReplacePlugins(context.Background(), transcriptCatalog().plugins)
	done()
	for range 2 {
		m := h.out.next(t)
		res := result(t, m)
		switch m["id"] {
		case float64(1):
			if tools, _ := res["tools"].([]any); len(tools) != 3 {
				t.Errorf("tools/list during start-up: %v, want calc's three tools", res)
			}
		case float64(2):
			if values := res["completion"].(map[string]any)["values"]; !reflect.DeepEqual(values, []any{"go"}) {
				t.Errorf("completion during start-up: %v, want [go]", values)
			}
		}
	}
}

// The server's instructions go out with initialize and server/discover;
// the caching hints of a list or read are those of the plugins behind it:
// the shortest ttl, and public only when every one is public.
func TestInstructionsAndCacheHintsPerPlugin(t *testing.T) {
	public := toolsPlugin("a", echoTool)
	WithCacheHints(time.Minute, true)(public)
	private := NewPlugin("b", "", fakeRuntime{
		abi.ExportListTools:     returns(abi.ListToolsResult{Tools: []abi.Tool{{Name: "other", InputSchema: objectSchema}}}),
		abi.ExportListResources: returns(abi.ListResourcesResult{Resources: []abi.Resource{{URI: "b://r", Name: "r"}}}),
		abi.ExportReadResource:  returns(abi.ReadResourceResult{Contents: []abi.ResourceContents{{URI: "b://r", Text: "x"}}}),
	}, WithCacheHints(30*time.Second, false))
	srv := NewServer(Options{Instructions: "Use echo."}, BuildCatalog(context.Background(), []*Plugin{public, private}, nil))
	h := session(t, srv)
	hints := func(method, params string) (any, any) {
		res := result(t, modernRequest(t, h, context.Background(), 1, method, `{}`, params))
		return res["ttlMs"], res["cacheScope"]
	}
	if ttl, scope := hints("tools/list", `{}`); ttl != float64(30000) || scope != "private" {
		t.Errorf("tools/list of both plugins: ttlMs %v cacheScope %v, want 30000 private", ttl, scope)
	}
	if ttl, scope := hints("resources/read", `{"uri":"b://r"}`); ttl != float64(30000) || scope != "private" {
		t.Errorf("resources/read of b: ttlMs %v cacheScope %v, want 30000 private", ttl, scope)
	}
	if ttl, scope := hints("prompts/list", `{}`); ttl != float64(0) || scope != "private" {
		t.Errorf("an empty list: ttlMs %v cacheScope %v, want 0 private", ttl, scope)
	}
	WithCacheHints(time.Minute, true)(private)
	srv.catalog.Store(BuildCatalog(context.Background(), []*Plugin{public, private}, nil))
	if ttl, scope := hints("tools/list", `{}`); ttl != float64(60000) || scope != "public" {
		t.Errorf("tools/list of two public plugins: ttlMs %v cacheScope %v, want 60000 public", ttl, scope)
	}
	if got := result(t, modernRequest(t, h, context.Background(), 2, "server/discover", `{}`, `{}`))["instructions"]; got != "Use echo." {
		t.Errorf("discover instructions %v", got)
	}
	other := session(t, srv)
	if got := result(t, other.call(t, 1, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}))["instructions"]; got != "Use echo." {
		t.Errorf("initialize instructions %v", got)
	}
}
