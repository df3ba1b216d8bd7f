package host

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/poll"
)

// subscriptionID returns the _meta subscriptionId of a message's params
// (or result), nil without one.
func subscriptionID(m map[string]any) any {
	body, _ := m["params"].(map[string]any)
	if body == nil {
		body, _ = m["result"].(map[string]any)
	}
	meta, _ := body["_meta"].(map[string]any)
	return meta[metaSubscriptionID]
}

// Two subscriptions on one stdio stream each get the acknowledgement
// first, then only the kinds their filters ask for, each message tagged
// with its subscription's id; a resource update goes only to those that
// listed its URI. A cancelled subscription gets nothing more.
func TestListenDeliversOnlyTheKindsAskedForTaggedWithItsID(t *testing.T) {
	h := &harness{srv: NewServer(Options{Name: "t", Version: "1", CatalogChanges: true}, transcriptCatalog()), out: newRecorder()}
	h.sess = h.srv.NewSession(h.out)
	t.Cleanup(h.sess.Close)
	meta := modernMeta(`{}`, "")
	h.send(`{"jsonrpc":"2.0","id":"tools","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":` + meta + `}}`)
	if ack := h.out.next(t); ack["method"] != "notifications/subscriptions/acknowledged" || subscriptionID(ack) != "tools" {
		t.Fatalf("first message %v, want the acknowledgement of tools", ack)
	}
	h.send(`{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{"notifications":{"promptsListChanged":true,"resourceSubscriptions":["docs://readme"]},"_meta":` + meta + `}}`)
	ack := h.out.next(t)
	if ack["method"] != "notifications/subscriptions/acknowledged" || subscriptionID(ack) != float64(9) {
		t.Fatalf("second subscription's first message %v, want its acknowledgement", ack)
	}
	if got := ack["params"].(map[string]any)["notifications"]; !reflect.DeepEqual(got, map[string]any{"promptsListChanged": true, "resourceSubscriptions": []any{"docs://readme"}}) {
		t.Errorf("acknowledged filter %v", got)
	}
	poll.Until(t, 5*time.Second, "two listeners", func() bool { return h.srv.listeners.active() == 2 })

	h.srv.announce(ListChanges{Tools: true, Prompts: true, Resources: true}, nil)
	got := map[string]any{}
	for range 2 {
		m := h.out.next(t)
		got[m["method"].(string)] = subscriptionID(m)
	}
	if want := map[string]any{"notifications/tools/list_changed": "tools", "notifications/prompts/list_changed": float64(9)}; !reflect.DeepEqual(got, want) {
		t.Errorf("list changes delivered %v, want %v", got, want)
	}
	updated := serverFn(t, h.srv, "docs", abi.HostNotifyResourceUpdated)
	if _, err := updated(context.Background(), []byte(`{"uri":"docs://readme"}`)); err != nil {
		t.Fatal(err)
	}
	if m := h.out.next(t); m["method"] != "notifications/resources/updated" || subscriptionID(m) != float64(9) || m["params"].(map[string]any)["uri"] != "docs://readme" {
		t.Errorf("resource update %v, want docs://readme tagged 9", m)
	}
	if _, err := updated(context.Background(), []byte(`{"uri":"docs://pages/intro"}`)); err != nil {
		t.Fatal(err)
	}
	h.out.none(t, 50*time.Millisecond)

	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"tools"}}`)
	poll.Until(t, 5*time.Second, "one listener", func() bool { return h.srv.listeners.active() == 1 })
	h.srv.announce(ListChanges{Tools: true}, nil)
	h.out.none(t, 50*time.Millisecond)
}

// 2026-07-28 discovery declares listChanged for a list only when it can
// change while the server serves: the catalog may be replaced
// (Options.CatalogChanges: a watched folder, a config reload) or a plugin
// was granted the host function that announces changes to that list.
// Otherwise it is absent, and a subscription's acknowledgement leaves out
// the list changes it asked for, which the server will never send.
func TestDiscoveryDeclaresListChangedOnlyWhenListsCanChange(t *testing.T) {
	prompts := NewPlugin("p", "", fakeRuntime{
		abi.ExportListPrompts: returns(abi.ListPromptsResult{Prompts: []abi.Prompt{{Name: "brief"}}}),
		abi.ExportListTools:   returns(abi.ListToolsResult{}),
	}, WithGrantedHostFunctions([]string{abi.HostNotifyToolListChanged}))
	for _, tc := range []struct {
		name           string
		opts           Options
		plugins        []*Plugin
		tools, prompts any
		acked          map[string]any
	}{
		{"static", Options{}, []*Plugin{toolsPlugin("a", echoTool)}, map[string]any{}, nil,
			map[string]any{"resourceSubscriptions": []any{"docs://x"}}},
		{"reloadable", Options{CatalogChanges: true}, []*Plugin{toolsPlugin("a", echoTool)}, map[string]any{"listChanged": true}, nil,
			map[string]any{"toolsListChanged": true, "resourceSubscriptions": []any{"docs://x"}}},
		{"announcing", Options{}, []*Plugin{prompts}, map[string]any{"listChanged": true}, map[string]any{},
			map[string]any{"toolsListChanged": true, "resourceSubscriptions": []any{"docs://x"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := session(t, NewServer(tc.opts, BuildCatalog(context.Background(), tc.plugins, nil)))
			caps := result(t, modernRequest(t, h, context.Background(), 1, "server/discover", `{}`, `{}`))["capabilities"].(map[string]any)
			if !reflect.DeepEqual(caps["tools"], tc.tools) || !reflect.DeepEqual(caps["prompts"], tc.prompts) {
				t.Errorf("tools %v, prompts %v; want %v, %v", caps["tools"], caps["prompts"], tc.tools, tc.prompts)
			}
			h.send(`{"jsonrpc":"2.0","id":"l","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"promptsListChanged":true,"resourceSubscriptions":["docs://x"]},"_meta":` + modernMeta(`{}`, "") + `}}`)
			ack := h.out.next(t)
			if got := ack["params"].(map[string]any)["notifications"]; !reflect.DeepEqual(got, tc.acked) {
				t.Errorf("acknowledged %v, want %v", got, tc.acked)
			}
		})
	}
}
