package mcphttp

import (
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testrig/pluginfake"
	"github.com/mcphost/mcphost/internal/testrig/rpctest"
)

// everythingPlugin offers one of each kind, named after the plugin
// (pluginfake.Everything).
func everythingPlugin(name string) *host.Plugin {
	return host.NewPlugin(name, "", pluginfake.Everything(name))
}

var names = rpctest.Names

// TestEndpointsServeOnlyTheirPlugins: an endpoint serves its plugins
// alone, to 2025 sessions and 2026-07-28 requests over Streamable HTTP at
// its path and to HTTP+SSE sessions at its path + /sse; a session belongs
// to the endpoint that opened it (another one answers 404, as for an
// unknown session); /mcp serves every plugin unless an endpoint takes
// that path.
func TestEndpointsServeOnlyTheirPlugins(t *testing.T) {
	hh := newHTTPHarness(t, Options{Endpoints: []Endpoint{{Path: "/mcp/a", Plugins: []string{"a"}}}},
		everythingPlugin("a"), everythingPlugin("b"))
	initialize := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	open := func(path string) string {
		resp := hh.do(t, http.MethodPost, path, initialize)
		resp.Body.Close()
		id := resp.Header.Get(headerSessionID)
		if resp.StatusCode != http.StatusOK || id == "" {
			t.Fatalf("initialize at %s: %d", path, resp.StatusCode)
		}
		if resp := hh.do(t, http.MethodPost, path, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, headerSessionID, id); resp.StatusCode != http.StatusAccepted {
			t.Fatalf("initialized at %s: %d", path, resp.StatusCode)
		}
		return id
	}
	ask := func(path, id, body string) map[string]any {
		resp := hh.do(t, http.MethodPost, path, body, headerSessionID, id)
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST %s %s: %d", path, body, resp.StatusCode)
		}
		if resp.Header.Get("Content-Type") == "text/event-stream" {
			_, m := readEvents(t, resp).message(t)
			return m
		}
		return decodeBody(t, resp)
	}
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	call := func(tool string) string {
		return `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + tool + `"}}`
	}

	a := open("/mcp/a")
	if got := names(t, ask("/mcp/a", a, list), "tools", "name"); !reflect.DeepEqual(got, []string{"a_tool"}) {
		t.Errorf("/mcp/a lists %v", got)
	}
	got, want := ask("/mcp/a", a, call("b_tool"))["error"], ask("/mcp/a", a, call("nobody_tool"))["error"]
	if g, w := mustJSON(got), mustJSON(want); got == nil || string(g) != strings.ReplaceAll(string(w), "nobody", "b") {
		t.Errorf("/mcp/a calling b_tool: %s, want %s", g, w)
	}
	all := open("/mcp")
	if got := names(t, ask("/mcp", all, list), "tools", "name"); !reflect.DeepEqual(got, []string{"a_tool", "b_tool"}) {
		t.Errorf("/mcp lists %v", got)
	}
	for _, c := range []struct{ path, id string }{{"/mcp", a}, {"/mcp/a", all}} {
		if resp := hh.do(t, http.MethodPost, c.path, list, headerSessionID, c.id); resp.StatusCode != http.StatusNotFound {
			t.Errorf("a session of another endpoint at %s: %d, want 404", c.path, resp.StatusCode)
		}
	}

	resp := hh.do(t, http.MethodPost, "/mcp/a", `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":`+modernMeta(`{}`, "")+`}}`,
		headerVersion, host.Version20260728, "Mcp-Method", "tools/list")
	if got := names(t, decodeBody(t, resp), "tools", "name"); !reflect.DeepEqual(got, []string{"a_tool"}) {
		t.Errorf("2026-07-28 at /mcp/a lists %v", got)
	}
	resp.Body.Close()

	events := readEvents(t, hh.do(t, http.MethodGet, "/mcp/a/sse", ""))
	defer events.body.Close()
	e, _ := events.next(t)
	if e.name != "endpoint" || !strings.HasPrefix(e.data, "/mcp/a/messages?sessionId=") {
		t.Fatalf("HTTP+SSE at /mcp/a/sse: %+v", e)
	}
	for _, msg := range []string{strings.ReplaceAll(initialize, "2025-11-25", "2024-11-05"), `{"jsonrpc":"2.0","method":"notifications/initialized"}`, list} {
		if resp := hh.do(t, http.MethodPost, e.data, msg); resp.StatusCode != http.StatusAccepted {
			t.Fatalf("POST %s: %d", e.data, resp.StatusCode)
		}
	}
	for {
		_, m := events.message(t)
		if m["id"] == float64(1) {
			if got := names(t, m, "tools", "name"); !reflect.DeepEqual(got, []string{"a_tool"}) {
				t.Errorf("HTTP+SSE at /mcp/a lists %v", got)
			}
			break
		}
	}

	only := newHTTPHarness(t, Options{Endpoints: []Endpoint{{Path: "/mcp", Plugins: []string{"b"}}}}, everythingPlugin("a"), everythingPlugin("b"))
	hh = only
	if got := names(t, ask("/mcp", open("/mcp"), list), "tools", "name"); !reflect.DeepEqual(got, []string{"b_tool"}) {
		t.Errorf("/mcp configured to serve b lists %v", got)
	}
}

// TestALegacySessionIsUnknownAtAnotherEndpoint: an HTTP+SSE session
// belongs to the endpoint whose /sse opened it. Its messages POSTed to
// another endpoint's messages path are 404, as for a session that does
// not exist, and reach nothing: a session opened at /sse, which serves
// every plugin, cannot be used through /mcp/a/messages, nor one opened at
// /mcp/a/sse through /messages or /mcp/b/messages. At its own endpoint it
// is served, its lists showing that endpoint's plugins.
func TestALegacySessionIsUnknownAtAnotherEndpoint(t *testing.T) {
	hh := newHTTPHarness(t, Options{Endpoints: []Endpoint{{Path: "/mcp/a", Plugins: []string{"a"}}, {Path: "/mcp/b", Plugins: []string{"b"}}}},
		everythingPlugin("a"), everythingPlugin("b"))
	list := func(id int) string { return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id) }
	for _, c := range []struct {
		sse    string
		others []string
		tools  []string
	}{
		{"/sse", []string{"/mcp/a/messages", "/mcp/b/messages"}, []string{"a_tool", "b_tool"}},
		{"/mcp/a/sse", []string{"/messages", "/mcp/b/messages"}, []string{"a_tool"}},
	} {
		events := readEvents(t, hh.do(t, http.MethodGet, c.sse, ""))
		e, _ := events.next(t)
		own, query, _ := strings.Cut(e.data, "?")
		if e.name != "endpoint" || !strings.HasPrefix(query, "sessionId=") {
			t.Fatalf("HTTP+SSE at %s: %+v", c.sse, e)
		}
		post := func(path, msg string) int {
			resp := hh.do(t, http.MethodPost, path+"?"+query, msg)
			resp.Body.Close()
			return resp.StatusCode
		}
		for _, msg := range []string{`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, `{"jsonrpc":"2.0","method":"notifications/initialized"}`} {
			if code := post(own, msg); code != http.StatusAccepted {
				t.Fatalf("POST %s: %d", own, code)
			}
		}
		for i, other := range c.others {
			if code := post(other, list(1+i)); code != http.StatusNotFound {
				t.Errorf("the session of %s at %s: %d, want 404", c.sse, other, code)
			}
		}
		if code := post(own, list(9)); code != http.StatusAccepted {
			t.Fatalf("POST %s: %d", own, code)
		}
		for {
			_, m := events.message(t)
			if m["id"] == float64(0) {
				continue // the initialize response
			}
			if m["id"] != float64(9) {
				t.Errorf("the session of %s answered %v, want only the tools/list at its own endpoint", c.sse, m)
			}
			if got := names(t, m, "tools", "name"); !slices.Equal(got, c.tools) {
				t.Errorf("the session of %s lists %v, want %v", c.sse, got, c.tools)
			}
			break
		}
		events.body.Close()
	}
}
