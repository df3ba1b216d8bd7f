package host

import (
	"context"
	"reflect"
	"strings"
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

// changeOnAcknowledgement is an Outbound that, the moment a subscription's
// acknowledgement is handed to it, has the lists change from another
// goroutine, and waits for that change to be announced (or for a second,
// if the announcement waits on the acknowledgement).
type changeOnAcknowledgement struct {
	*recorder
	srv *Server
}

func (o changeOnAcknowledgement) Send(msg []byte) error {
	if strings.Contains(string(msg), "notifications/subscriptions/acknowledged") {
		done := make(chan struct{})
		go func() { o.srv.announce(ListChanges{Tools: true}, nil); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Second):
		}
	}
	return o.recorder.Send(msg)
}

// A change made once the acknowledgement is on its way reaches the
// subscription, after the acknowledgement: a client that has read the
// acknowledgement misses no change.
func TestListenGetsEveryChangeAfterItsAcknowledgement(t *testing.T) {
	h := &harness{srv: NewServer(Options{Name: "t", Version: "1", CatalogChanges: true}, transcriptCatalog()), out: newRecorder()}
	h.sess = h.srv.NewSession(h.out)
	t.Cleanup(h.sess.Close)
	listen := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":` + modernMeta(`{}`, "") + `}}`
	h.sess.Handle(context.Background(), []byte(listen), changeOnAcknowledgement{h.out, h.srv})
	if ack := h.out.next(t); ack["method"] != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first message %v, want the acknowledgement", ack)
	}
	if m := h.out.next(t); m["method"] != "notifications/tools/list_changed" || subscriptionID(m) != float64(1) {
		t.Errorf("second message %v, want tools/list_changed tagged 1", m)
	}
}
