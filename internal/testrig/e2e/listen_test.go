package e2e

import (
	"slices"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/poll"
)

// A 2026-07-28 client of a server watching its plugins folder learns of a
// plugin dropped into it: discovery declares tools.listChanged, the
// client's subscriptions/listen stream gets notifications/tools/list_changed
// tagged with its id, and tools/list then shows the new plugin's tool.
func TestListenAnnouncesAPluginDroppedIntoTheWatchedFolder(t *testing.T) {
	f := newFixture(t, "", "plugins/examples/tools")
	srv := f.start(t)
	poll.Until(t, 60*time.Second, "the load to end", func() bool { return readyz(t, srv).code == 200 })

	caps, _ := postModern(t, srv.url, 1, "server/discover", "", map[string]any{})["result"].(map[string]any)["capabilities"].(map[string]any)
	if tools, _ := caps["tools"].(map[string]any); tools["listChanged"] != true {
		t.Fatalf("discovery capabilities %v: want tools.listChanged, the folder being watched", caps)
	}

	listen := openModern(t, srv.url, 2, "subscriptions/listen", "", map[string]any{"notifications": map[string]any{"toolsListChanged": true}})
	t.Cleanup(func() { listen.Body.Close() })
	events := make(chan map[string]any, 16)
	go func() {
		defer close(events)
		_ = readSSE(listen.Body, func(m map[string]any) bool { events <- m; return false })
	}()
	next := func(what string) map[string]any {
		t.Helper()
		select {
		case m, ok := <-events:
			if !ok {
				t.Fatalf("the listen stream ended before %s", what)
			}
			return m
		case <-time.After(60 * time.Second):
			t.Fatalf("no %s within 60s", what)
		}
		return nil
	}
	subscription := func(m map[string]any) any {
		params, _ := m["params"].(map[string]any)
		meta, _ := params["_meta"].(map[string]any)
		return meta["io.modelcontextprotocol/subscriptionId"]
	}
	ack := next("acknowledgement")
	if ack["method"] != "notifications/subscriptions/acknowledged" || subscription(ack) != float64(2) ||
		ack["params"].(map[string]any)["notifications"].(map[string]any)["toolsListChanged"] != true {
		t.Fatalf("first message %v, want the acknowledgement of toolsListChanged tagged 2", ack)
	}
	if names := modernToolNames(t, srv.url, ""); slices.Contains(names, "wordcount") {
		t.Fatalf("tools %v before the plugin was dropped in", names)
	}

	swapIn(t, f.plugins, "samego.wasm", wasmOf(t, "internal/testrig/testplugins/samego"))
	changed := next("notifications/tools/list_changed")
	if changed["method"] != "notifications/tools/list_changed" || subscription(changed) != float64(2) {
		t.Fatalf("message %v, want tools/list_changed tagged 2", changed)
	}
	if names := modernToolNames(t, srv.url, ""); !slices.Contains(names, "wordcount") {
		t.Errorf("tools %v after list_changed: want wordcount, the dropped plugin's tool", names)
	}
}

// modernToolNames lists every tool with 2026-07-28 requests, page by page,
// with a bearer token unless it is "".
func modernToolNames(t *testing.T, url, token string) []string {
	t.Helper()
	var names []string
	params := map[string]any{}
	for id := 100; ; id++ {
		resp := postModernAs(t, url, token, id, "tools/list", "", params)
		res, _ := resp["result"].(map[string]any)
		if res == nil {
			t.Fatalf("2026-07-28 tools/list: %v", resp)
		}
		for _, tool := range res["tools"].([]any) {
			names = append(names, tool.(map[string]any)["name"].(string))
		}
		cursor, _ := res["nextCursor"].(string)
		if cursor == "" {
			return names
		}
		params = map[string]any{"cursor": cursor}
	}
}
