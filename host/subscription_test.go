package host

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
)

func TestResourceUpdatesReachOnlySubscribers(t *testing.T) {
	plugin := NewPlugin("p", "", fakeRuntime{
		abi.ExportListResources: returns(abi.ListResourcesResult{Resources: []abi.Resource{{URI: "test://watched", Name: "watched"}}}),
	})
	srv := NewServer(Options{}, BuildCatalog(t.Context(), []*Plugin{plugin}, nil))
	fn := srv.HostFunctions("p")[abi.HostNotifyResourceUpdated]
	notify := func(in string) error { _, err := fn(t.Context(), []byte(in)); return err }
	subscriber, bystander := newRecorder(), newRecorder()
	subSess, otherSess := srv.NewSession(subscriber), srv.NewSession(bystander)
	h := &harness{srv: srv, sess: subSess, out: subscriber}
	caps := result(t, h.init(t, Version20251125))["capabilities"].(map[string]any)
	if caps["resources"].(map[string]any)["subscribe"] != true {
		t.Fatalf("resources capability does not offer subscribe: %v", caps)
	}
	other := &harness{srv: srv, sess: otherSess, out: bystander}
	other.init(t, Version20251125)

	if r := h.call(t, 1, "resources/subscribe", map[string]any{"uri": "test://watched"}); r["result"] == nil {
		t.Fatalf("subscribe: %v", r)
	}
	if code := errCode(t, h.call(t, 2, "resources/subscribe", map[string]any{"uri": "test://nothing"})); code != CodeResourceNotFound {
		t.Fatalf("subscribing to an unknown resource: code %d", code)
	}
	if err := notify(`{"uri":"test://watched"}`); err != nil {
		t.Fatal(err)
	}
	if m := subscriber.next(t); m["method"] != "notifications/resources/updated" {
		t.Fatalf("subscriber got %v", m)
	}
	bystander.none(t, 50*time.Millisecond)
	if err := notify(`{"uri":"test://someone-elses"}`); err == nil || !strings.Contains(err.Error(), "not a resource of this plugin") {
		t.Fatalf("a plugin announcing another's resource: %v", err)
	}
	if r := h.call(t, 3, "resources/unsubscribe", map[string]any{"uri": "test://watched"}); r["result"] == nil {
		t.Fatalf("unsubscribe: %v", r)
	}
	if err := notify(`{"uri":"test://watched"}`); err != nil {
		t.Fatal(err)
	}
	subscriber.none(t, 50*time.Millisecond)
}

func TestSubscribersOfAResourceThatGoesAwayAreToldAndUnsubscribed(t *testing.T) {
	withResource := NewPlugin("p", "", fakeRuntime{
		abi.ExportListResources: returns(abi.ListResourcesResult{Resources: []abi.Resource{{URI: "test://kept", Name: "kept"}, {URI: "test://gone", Name: "gone"}}}),
	})
	without := NewPlugin("p", "", fakeRuntime{
		abi.ExportListResources: returns(abi.ListResourcesResult{Resources: []abi.Resource{{URI: "test://kept", Name: "kept"}}}),
	})
	srv := NewServer(Options{}, BuildCatalog(t.Context(), []*Plugin{withResource}, nil))
	h := session(t, srv)
	h.init(t, Version20251125)
	for i, uri := range []string{"test://kept", "test://gone"} {
		if r := h.call(t, i+1, "resources/subscribe", map[string]any{"uri": uri}); r["result"] == nil {
			t.Fatalf("subscribe %s: %v", uri, r)
		}
	}
	srv.ReplacePlugins(t.Context(), []*Plugin{without})
	var methods []string
	var updated []any
	for range 2 {
		m := h.out.next(t)
		methods = append(methods, m["method"].(string))
		if m["method"] == "notifications/resources/updated" {
			updated = append(updated, m["params"].(map[string]any)["uri"])
		}
	}
	slices.Sort(methods)
	if !slices.Equal(methods, []string{"notifications/resources/list_changed", "notifications/resources/updated"}) || len(updated) != 1 || updated[0] != "test://gone" {
		t.Fatalf("got %v, updated %v", methods, updated)
	}
	h.out.none(t, 50*time.Millisecond)
	if subs := srv.subs.subscribers("test://gone"); len(subs) != 0 {
		t.Fatalf("the subscription to a resource that is gone stays: %v", subs)
	}
	if subs := srv.subs.subscribers("test://kept"); len(subs) != 1 {
		t.Fatalf("the subscription to a resource still served was dropped")
	}
}

// TestASessionsSubscriptionsAreBounded: a session holds at most
// maxSessionSubscriptions subscriptions, of at most
// maxSessionSubscriptionBytes of URIs together, however many URIs a
// template matches; beyond, resources/subscribe is refused with the bound
// named, and an unsubscribe makes room again.
func TestASessionsSubscriptionsAreBounded(t *testing.T) {
	plugin := NewPlugin("p", "", fakeRuntime{
		abi.ExportListResourceTemplates: returns(abi.ListResourceTemplatesResult{ResourceTemplates: []abi.ResourceTemplate{{URITemplate: "memo://{id}", Name: "memo"}}}),
	})
	srv := NewServer(Options{}, BuildCatalog(t.Context(), []*Plugin{plugin}, nil))
	out := newRecorder()
	h := &harness{srv: srv, sess: srv.NewSession(out), out: out}
	h.init(t, Version20251125)
	id := 0
	subscribe := func(uri string) map[string]any {
		id++
		return h.call(t, id, "resources/subscribe", map[string]any{"uri": uri})
	}
	for i := range maxSessionSubscriptions {
		if r := subscribe(fmt.Sprintf("memo://%d", i)); r["result"] == nil {
			t.Fatalf("subscription %d: %v", i, r)
		}
	}
	r := subscribe("memo://one-too-many")
	if code := errCode(t, r); code != CodeInternalError || !strings.Contains(fmt.Sprint(r["error"]), "subscriptions") {
		t.Fatalf("subscription %d: %v, want refused naming the bound", maxSessionSubscriptions+1, r)
	}
	id++
	if r := h.call(t, id, "resources/unsubscribe", map[string]any{"uri": "memo://0"}); r["result"] == nil {
		t.Fatalf("unsubscribe: %v", r)
	}
	if r := subscribe("memo://room-again"); r["result"] == nil {
		t.Fatalf("after an unsubscribe: %v", r)
	}

	// A few long URIs reach the bound on bytes first.
	out2 := newRecorder()
	h2 := &harness{srv: srv, sess: srv.NewSession(out2), out: out2}
	h2.init(t, Version20251125)
	long := strings.Repeat("x", maxSessionSubscriptionBytes/4-16) // four fit, with their prefixes
	for i := range 4 {
		if r := h2.call(t, i+1, "resources/subscribe", map[string]any{"uri": fmt.Sprintf("memo://%d%s", i, long)}); r["result"] == nil {
			t.Fatalf("long subscription %d: %v", i, r)
		}
	}
	if r := h2.call(t, 100, "resources/subscribe", map[string]any{"uri": "memo://last" + long}); errCode(t, r) != CodeInternalError {
		t.Fatalf("a long subscription past %d bytes: %v, want refused", maxSessionSubscriptionBytes, r)
	}
}
