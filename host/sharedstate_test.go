package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/mcphost/mcphost/internal/testrig/redistest"
	"github.com/mcphost/mcphost/redisstate"
)

// redisReplicas returns n servers of echoTool that share one real Redis
// (redistest) for their sessions and one requestState key, as replicas of
// one service do, with the subject of a request in its context
// (subjectKey), and that Redis.
func redisReplicas(t *testing.T, n int) ([]*Server, *redistest.Server) {
	t.Helper()
	r := redistest.Start(t)
	var servers []*Server
	for range n {
		servers = append(servers, NewServer(Options{
			SessionStore:     r.Store("test:"),
			SessionTTL:       time.Minute,
			RequestStateKeys: [][]byte{[]byte("0123456789abcdef0123456789abcdef")},
			Subject:          func(ctx context.Context) string { s, _ := ctx.Value(subjectKey{}).(string); return s },
		}, BuildCatalog(t.Context(), []*Plugin{toolsPlugin("p", echoTool)}, nil)))
	}
	return servers, r
}

// initOn opens a session of opts on srv and initializes it at 2025-11-25
// with the subject of ctx.
func initOn(t *testing.T, srv *Server, ctx context.Context, opts SessionOptions) *harness {
	t.Helper()
	out := newRecorder()
	h := &harness{srv: srv, sess: srv.OpenSession(out, opts), out: out}
	h.initAs(t, ctx, Version20251125)
	return h
}

// TestASessionInitializedOnOneReplicaIsServedByAnother initializes a
// 2025-11-25 session on one server and serves its next requests on
// another that shares its Redis: the second finds it by its id, for its
// owner on its endpoint only, with what it negotiated; Detach on one
// replica leaves it to the others, and Close ends it everywhere.
func TestASessionInitializedOnOneReplicaIsServedByAnother(t *testing.T) {
	servers, r := redisReplicas(t, 2)
	const id = "c2Vzc2lvbi1jcmVkZW50aWFs"
	alice := context.WithValue(context.Background(), subjectKey{}, "alice")
	opts := SessionOptions{Transport: TransportHTTP, ID: id, Endpoint: "/mcp"}
	a := initOn(t, servers[0], alice, opts)

	if _, err := servers[1].ResumeSession(t.Context(), newRecorder(), opts, "bob"); !errors.Is(err, ErrNoSession) {
		t.Errorf("bob resuming alice's session: %v, want ErrNoSession", err)
	}
	if _, err := servers[1].ResumeSession(t.Context(), newRecorder(), SessionOptions{Transport: TransportHTTP, ID: id, Endpoint: "/other"}, "alice"); !errors.Is(err, ErrNoSession) {
		t.Errorf("resuming alice's session on another endpoint: %v, want ErrNoSession", err)
	}
	sess, err := servers[1].ResumeSession(t.Context(), newRecorder(), opts, "alice")
	if err != nil {
		t.Fatalf("alice resuming her session on the second replica: %v", err)
	}
	b := &harness{srv: servers[1], sess: sess, out: newRecorder()}
	if got := b.sess.Version(); got != Version20251125 {
		t.Errorf("the resumed session's version is %q, want %q", got, Version20251125)
	}
	if res := b.ask(t, alice, 1, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"x": 1}}, ""); res["error"] != nil {
		t.Errorf("tools/call on the second replica: %v", res)
	}
	keys, err := r.Do("KEYS", "*")
	if err != nil || keys != "test:session:"+hashSession(id) {
		t.Errorf("Redis holds keys %q (%v), want the session's record under the prefix and its id's hash only", keys, err)
	}
	if ttl, err := r.Do("PTTL", keys); err != nil || ttl == "-1" || strings.HasPrefix(ttl, "-") {
		t.Errorf("the record's TTL is %s (%v), want one", ttl, err)
	}

	b.sess.Detach()
	if _, err := servers[1].ResumeSession(t.Context(), newRecorder(), opts, "alice"); err != nil {
		t.Errorf("resuming after the second replica detached it: %v", err)
	}
	a.sess.Close()
	if _, err := servers[1].ResumeSession(t.Context(), newRecorder(), opts, "alice"); !errors.Is(err, ErrNoSession) {
		t.Errorf("resuming after the first replica closed it: %v, want ErrNoSession", err)
	}
}

// TestARecordChangedInRedisIsRefused rewrites the owner in a session's
// record in Redis, as someone with write access to Redis but not the
// replicas' key would, and checks that no replica serves the session to
// the new owner or the old: the record's MAC no longer holds, and the
// error says so.
func TestARecordChangedInRedisIsRefused(t *testing.T) {
	servers, r := redisReplicas(t, 1)
	const id = "dGFtcGVyZWQtc2Vzc2lvbg"
	alice := context.WithValue(context.Background(), subjectKey{}, "alice")
	opts := SessionOptions{Transport: TransportHTTP, ID: id, Endpoint: "/mcp"}
	initOn(t, servers[0], alice, opts)
	key := "test:session:" + hashSession(id)
	rec, err := r.Do("GET", key)
	if err != nil || !strings.Contains(rec, `"Owner":"alice"`) {
		t.Fatalf("the record: %q, %v", rec, err)
	}
	if _, err := r.Do("SET", key, strings.Replace(rec, `"Owner":"alice"`, `"Owner":"bob"`, 1)); err != nil {
		t.Fatal(err)
	}
	for _, subject := range []string{"bob", "alice"} {
		_, err := servers[0].ResumeSession(t.Context(), newRecorder(), opts, subject)
		if err == nil || !strings.Contains(err.Error(), "MAC does not match") {
			t.Errorf("%s resuming the tampered session: %v, want an error saying its MAC does not match", subject, err)
		}
	}
	// A record sealed for another session, copied under this one's key,
	// is refused too: the MAC covers the id.
	other := "b3RoZXItc2Vzc2lvbg"
	initOn(t, servers[0], alice, SessionOptions{Transport: TransportHTTP, ID: other, Endpoint: "/mcp"})
	copied, _ := r.Do("GET", "test:session:"+hashSession(other))
	copied = strings.Replace(copied, hashSession(other), hashSession(id), 1)
	if _, err := r.Do("SET", key, copied); err != nil {
		t.Fatal(err)
	}
	if _, err := servers[0].ResumeSession(t.Context(), newRecorder(), opts, "alice"); err == nil || !strings.Contains(err.Error(), "MAC does not match") {
		t.Errorf("resuming with another session's record: %v, want an error saying its MAC does not match", err)
	}
}

// TestRecordSealOpensWithAnyKeyAndOnlyWhatItSealed checks the seal alone:
// a record sealed with the first key opens with a set that still holds it
// second (a rotation), and not as another kind or id, nor once changed.
func TestRecordSealOpensWithAnyKeyAndOnlyWhatItSealed(t *testing.T) {
	oldKey, newKey := bytes.Repeat([]byte("o"), 32), bytes.Repeat([]byte("n"), 32)
	before := newRecordSeal(newStateKeys([][]byte{oldKey}))
	after := newRecordSeal(newStateKeys([][]byte{newKey, oldKey}))
	sealed := before.sealed("session", "id1", []byte(`{"Owner":"alice"}`))
	if got, err := after.open("session", "id1", sealed); err != nil || string(got) != `{"Owner":"alice"}` {
		t.Errorf("opening after a rotation: %q, %v", got, err)
	}
	for name, try := range map[string]func() ([]byte, error){
		"as another id":   func() ([]byte, error) { return after.open("session", "id2", sealed) },
		"as another kind": func() ([]byte, error) { return after.open("task", "id1", sealed) },
		"changed": func() ([]byte, error) {
			return after.open("session", "id1", bytes.Replace(sealed, []byte("alice"), []byte("bob"), 1))
		},
		"without the old key": func() ([]byte, error) {
			return newRecordSeal(newStateKeys([][]byte{newKey})).open("session", "id1", sealed)
		},
	} {
		if _, err := try(); !errors.Is(err, errRecordSeal) {
			t.Errorf("opening %s: %v, want errRecordSeal", name, err)
		}
	}
}

// TestALogLevelSetOnOneReplicaReachesTheOthersWithinASecond sets the log
// level of a session on the replica that resumed it: the replica that
// initialized it, which keeps the session's record for recordFresh rather
// than reading Redis at each request, takes the new level within that.
func TestALogLevelSetOnOneReplicaReachesTheOthersWithinASecond(t *testing.T) {
	servers, _ := redisReplicas(t, 2)
	alice := context.WithValue(context.Background(), subjectKey{}, "alice")
	opts := SessionOptions{Transport: TransportHTTP, ID: "bGV2ZWwtc2Vzc2lvbg", Endpoint: "/mcp"}
	a := initOn(t, servers[0], alice, opts)
	sess, err := servers[1].ResumeSession(t.Context(), newRecorder(), opts, "alice")
	if err != nil {
		t.Fatal(err)
	}
	b := &harness{srv: servers[1], sess: sess, out: newRecorder()}
	if res := b.ask(t, alice, 1, "logging/setLevel", map[string]any{"level": "error"}, ""); res["error"] != nil {
		t.Fatalf("logging/setLevel: %v", res)
	}
	want, _ := parseLogLevel("error")
	time.Sleep(recordFresh + 100*time.Millisecond)
	if rec, _ := a.sess.record(); rec.LogLevel != want {
		t.Errorf("the first replica's level %d after %v, want %d (error)", rec.LogLevel, recordFresh, want)
	}
}

// TestATaskStartedOnOneReplicaIsServedByAnother starts tasks on one of two
// servers that share Redis for sessions and tasks, and serves the rest on
// the other, through the same 2025-11-25 session: tasks/get and
// tasks/list find a task the other runs; tasks/cancel there interrupts
// the run here within a few polls; tasks/result there waits for a run
// here to end and answers with its result.
func TestATaskStartedOnOneReplicaIsServedByAnother(t *testing.T) {
	r := redistest.Start(t)
	p, tt := taskPlugin(t)
	var servers []*Server
	for range 2 {
		store := r.Store("tasks:") // the same keys: replicas of one service
		servers = append(servers, NewServer(Options{SessionStore: store, TaskStore: store, SessionTTL: time.Minute,
			RequestStateKeys: [][]byte{[]byte("0123456789abcdef0123456789abcdef")}}, BuildCatalog(t.Context(), []*Plugin{p}, nil)))
	}
	opts := SessionOptions{Transport: TransportHTTP, ID: "dGFzay1zZXNzaW9u", Endpoint: "/mcp"}
	a := initOn(t, servers[0], context.Background(), opts)
	sess, err := servers[1].ResumeSession(t.Context(), newRecorder(), opts, "")
	if err != nil {
		t.Fatal(err)
	}
	b := &harness{srv: servers[1], sess: sess, out: newRecorder()}

	task := a.startTask(t, 1, "wait", map[string]any{"ttl": 60000})
	id := task["taskId"].(string)
	<-tt.started
	if got := b.taskStatus(t, id, taskWorking); got["taskId"] != id {
		t.Fatalf("tasks/get on the other replica: %v", got)
	}
	if list := result(t, b.request(t, 2, "tasks/list", map[string]any{})); len(list["tasks"].([]any)) != 1 {
		t.Errorf("tasks/list on the other replica: %v, want the task", list)
	}
	if res := result(t, b.request(t, 3, "tasks/cancel", map[string]any{"taskId": id})); res["status"] != taskCancelled {
		t.Errorf("tasks/cancel on the other replica: %v", res)
	}
	select {
	case <-tt.stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("the run on the first replica was not interrupted within 5s of tasks/cancel on the other")
	}
	a.taskStatus(t, id, taskCancelled)

	task = a.startTask(t, 4, "wait", map[string]any{"ttl": 60000})
	<-tt.started
	b.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":5,"method":"tasks/result","params":{"taskId":%q}}`, task["taskId"]))
	time.Sleep(2 * sharedTaskPoll)
	close(tt.release)
	res, _ := b.await(t, responseTo(5))
	if got := fmt.Sprint(result(t, res)["content"]); !strings.Contains(got, "released") {
		t.Errorf("tasks/result on the other replica: %v, want the run's result", res)
	}
}

// TestA2026TaskAnsweredOnAnotherReplicaIsReplayedWhereItRuns starts a
// 2026-07-28 task on one of two servers that share Redis for tasks, reads
// and answers its questions on the other, and checks that the first
// replays the run with the answers (the tool runs twice, there) and the
// other reads its result; and that a task cancelled on the other stops
// its run on the first.
func TestA2026TaskAnsweredOnAnotherReplicaIsReplayedWhereItRuns(t *testing.T) {
	r := redistest.Start(t)
	var hs []*harness
	var runs []*atomic.Int32
	for range 2 {
		n := new(atomic.Int32)
		srv := NewServer(Options{TaskStore: r.Store("modern:"), RequestStateKeys: [][]byte{[]byte("0123456789abcdef0123456789abcdef")}}, nil)
		srv.catalog.Store(BuildCatalog(context.Background(), []*Plugin{modernTaskPlugin(srv, n)}, nil))
		hs, runs = append(hs, session(t, srv)), append(runs, n)
	}
	a, b := hs[0], hs[1]
	ctx := context.Background()
	id := result(t, modernRequest(t, a, ctx, 1, "tools/call", tasksCaps, `{"name":"multi","arguments":{}}`))["taskId"].(string)
	if res := pollTask(t, b, ctx, id, taskInputRequired); res["status"] != taskInputRequired {
		t.Fatalf("tasks/get on the other replica: %v, want input_required", res)
	}
	result(t, modernRequest(t, b, ctx, 2, "tasks/update", tasksCaps, `{"taskId":"`+id+`","inputResponses":{"first":{"action":"accept","content":{"v":"a"}},"second":{"action":"accept","content":{"v":"b"}}}}`))
	res := pollTask(t, b, ctx, id, taskCompleted)
	if res["status"] != taskCompleted || !strings.Contains(fmt.Sprint(res["result"]), "a+b") {
		t.Errorf("after the answers on the other replica: %v, want completed with a+b", res)
	}
	if n, m := runs[0].Load(), runs[1].Load(); n != 2 || m != 0 {
		t.Errorf("the tool ran %d times on the first replica and %d on the other, want 2 and 0", n, m)
	}

	id = result(t, modernRequest(t, a, ctx, 3, "tools/call", tasksCaps, `{"name":"slow","arguments":{"ms":60000}}`))["taskId"].(string)
	result(t, modernRequest(t, b, ctx, 4, "tasks/cancel", tasksCaps, `{"taskId":"`+id+`"}`))
	if res := pollTask(t, a, ctx, id, taskCancelled); res["status"] != taskCancelled {
		t.Errorf("tasks/get on the first replica after a cancel on the other: %v", res)
	}
	if !poll.Within(5*time.Second, func() bool { l := a.srv.tasks.live.get(id); return l == nil || l.ended() }) {
		t.Error("the first replica did not interrupt the cancelled task's run within 5s")
	}
}

// TestAListChangeOnOneReplicaReachesTheClientsOfAnother swaps the plugins
// of one of two servers that share Redis for list changes: a session on
// the other hears tools/list_changed, on its stream and on its
// subscriptions/listen, and the first does not hear its own change twice.
func TestAListChangeOnOneReplicaReachesTheClientsOfAnother(t *testing.T) {
	r := redistest.Start(t)
	var servers []*Server
	for range 2 {
		srv := NewServer(Options{Changes: r.Store("changes:"), CatalogChanges: true}, BuildCatalog(t.Context(), []*Plugin{toolsPlugin("p", echoTool)}, nil))
		ctx, stop := context.WithCancel(context.Background())
		t.Cleanup(stop)
		go srv.FollowChanges(ctx)
		servers = append(servers, srv)
	}
	a, b := session(t, servers[0]), session(t, servers[1])
	a.init(t, Version20251125)
	b.init(t, Version20251125)
	b.listen(t, context.Background(), `{"toolsListChanged":true}`)
	time.Sleep(200 * time.Millisecond) // the followers have read the stream's end
	servers[0].ReplacePlugins(t.Context(), []*Plugin{toolsPlugin("p", echoTool, abi.Tool{Name: "more", InputSchema: objectSchema})})
	got := map[string]bool{}
	for range 2 {
		m := b.out.next(t)
		got[fmt.Sprint(m["method"], " ", subscriptionID(m))] = true
	}
	if !got[methodToolsListChanged+" <nil>"] || !got[methodToolsListChanged+" l"] {
		t.Errorf("the other replica's session and listen stream were told %v, want %s on both", got, methodToolsListChanged)
	}
	if m := a.out.next(t); m["method"] != methodToolsListChanged {
		t.Errorf("the swapping replica's session got %v, want %s", m, methodToolsListChanged)
	}
	a.out.none(t, 2*time.Second) // its own change does not come back from the feed
}

// TestResourceSubscriptionsHoldAcrossReplicas runs three servers sharing
// Redis for sessions and changes, each serving a plugin with the resource
// test://watched. A session initialized on the first has its stream on
// the second; it subscribes through the first: an update the plugin
// announces on the second reaches it, and so does one announced on the
// first (through the changes), as it does a subscriptions/listen stream on
// the second; the third replica, resuming the session afterwards, knows
// the subscription from the session's record; once it unsubscribes
// through the first, no replica tells it of updates.
func TestResourceSubscriptionsHoldAcrossReplicas(t *testing.T) {
	r := redistest.Start(t)
	var servers []*Server
	var trips atomic.Int64 // of the first replica
	for i := range 3 {
		plugin := NewPlugin("p", "", fakeRuntime{
			abi.ExportListResources: returns(abi.ListResourcesResult{Resources: []abi.Resource{{URI: "test://watched", Name: "watched"}}}),
		})
		var counted []func(string)
		if i == 0 {
			counted = append(counted, func(command string) {
				switch command {
				case "xread", "xrevrange": // the changes followed: a blocking read a second
				case "hello": // a new pooled connection's handshake, once
				default:
					trips.Add(1)
				}
			})
		}
		srv := NewServer(Options{SessionStore: r.Store("subs:", counted...), Changes: r.Store("subs:", counted...), SessionTTL: time.Minute,
			RequestStateKeys: [][]byte{[]byte("0123456789abcdef0123456789abcdef")}}, BuildCatalog(t.Context(), []*Plugin{plugin}, nil))
		ctx, stop := context.WithCancel(context.Background())
		t.Cleanup(stop)
		go srv.FollowChanges(ctx)
		servers = append(servers, srv)
	}
	notify := func(srv *Server) {
		t.Helper()
		if _, err := srv.HostFunctions("p")[abi.HostNotifyResourceUpdated](t.Context(), []byte(`{"uri":"test://watched"}`)); err != nil {
			t.Fatal(err)
		}
	}
	opts := SessionOptions{Transport: TransportHTTP, ID: "c3Vic2NyaXB0aW9ucy1zZXNzaW9u", Endpoint: "/mcp"}
	a := initOn(t, servers[0], context.Background(), opts)
	stream := newRecorder()
	if _, err := servers[1].ResumeSession(t.Context(), stream, opts, ""); err != nil {
		t.Fatal(err)
	}
	listener := session(t, servers[1])
	listener.listen(t, context.Background(), `{"resourceSubscriptions":["test://watched"]}`)
	time.Sleep(200 * time.Millisecond) // the followers have read the feed's end

	a.sess.touch() // the session's touch, a second apart, does not count below
	before := trips.Load()
	if res := a.ask(t, context.Background(), 1, "resources/subscribe", map[string]any{"uri": "test://watched"}, ""); res["error"] != nil {
		t.Fatalf("subscribing on the first replica: %v", res)
	}
	subscribeTrips := trips.Load() - before
	updated := func(rec *recorder, what string) {
		t.Helper()
		if m := rec.next(t); m["method"] != "notifications/resources/updated" {
			t.Errorf("%s: got %v, want notifications/resources/updated", what, m)
		}
	}
	if !poll.Within(5*time.Second, func() bool { return len(servers[1].subs.subscribers("test://watched")) == 1 }) {
		t.Fatal("the replica holding the stream does not learn of the subscription taken on another")
	}
	notify(servers[1])
	updated(stream, "an update announced on the replica holding the stream")
	updated(listener.out, "the listen stream, of an update announced where it is held")
	before = trips.Load()
	notify(servers[0])
	notifyTrips := trips.Load() - before
	t.Logf("Redis round trips: resources/subscribe %d, notify_resource_updated %d", subscribeTrips, notifyTrips)
	if subscribeTrips > 3 || notifyTrips != 1 {
		t.Errorf("resources/subscribe took %d Redis round trips, notify_resource_updated %d; want at most 3 (the record read and written, the change published) and 1", subscribeTrips, notifyTrips)
	}
	updated(stream, "an update announced on the replica that took the subscription")
	updated(listener.out, "the listen stream, of an update announced on another replica")

	third := newRecorder()
	if _, err := servers[2].ResumeSession(t.Context(), third, opts, ""); err != nil {
		t.Fatal(err)
	}
	notify(servers[2])
	updated(third, "a replica that resumed the session after it subscribed")
	updated(stream, "the replica holding the stream, of an update announced on a third")

	if res := a.ask(t, context.Background(), 2, "resources/unsubscribe", map[string]any{"uri": "test://watched"}, ""); res["error"] != nil {
		t.Fatalf("unsubscribing on the first replica: %v", res)
	}
	if !poll.Within(5*time.Second, func() bool { return len(servers[1].subs.subscribers("test://watched")) == 0 }) {
		t.Fatal("the replica holding the stream does not learn of the unsubscription")
	}
	notify(servers[1])
	stream.none(t, 300*time.Millisecond)
}

// TestATaskOfALostReplicaFailsWithinItsLease starts a task on one of two
// servers that share Redis, with a task lease of a second, and then cuts
// that replica off from Redis (its store closed), as a replica killed or
// partitioned is: polled on the other, the task stays working while the
// lease holds, then fails within the lease and a poll, with an error
// naming the lost replica; the run, when it ends there, does not change
// that end.
func TestATaskOfALostReplicaFailsWithinItsLease(t *testing.T) {
	r := redistest.Start(t)
	p, tt := taskPlugin(t)
	const lease = time.Second
	var servers []*Server
	var stores []interface{ Close() error }
	for _, name := range []string{"replica-a", "replica-b"} {
		store := r.Store("lost:")
		stores = append(stores, store)
		servers = append(servers, NewServer(Options{SessionStore: store, TaskStore: store, SessionTTL: time.Minute, TaskLease: lease, Replica: name,
			RequestStateKeys: [][]byte{[]byte("0123456789abcdef0123456789abcdef")}}, BuildCatalog(t.Context(), []*Plugin{p}, nil)))
	}
	opts := SessionOptions{Transport: TransportHTTP, ID: "bG9zdC1yZXBsaWNh", Endpoint: "/mcp"}
	a := initOn(t, servers[0], context.Background(), opts)
	sess, err := servers[1].ResumeSession(t.Context(), newRecorder(), opts, "")
	if err != nil {
		t.Fatal(err)
	}
	b := &harness{srv: servers[1], sess: sess, out: newRecorder()}
	id := a.startTask(t, 1, "wait", map[string]any{"ttl": 60000})["taskId"].(string)
	<-tt.started
	time.Sleep(2 * lease) // renewed meanwhile: still working
	if got := b.taskStatus(t, id, taskWorking); got["taskId"] != id {
		t.Fatalf("tasks/get on the other replica while the first renews the lease: %v", got)
	}
	stores[0].Close() // the first replica is cut off
	cut := time.Now()
	got := b.taskStatus(t, id, taskFailed)
	if took := time.Since(cut); took > lease+lease/3+2*time.Second {
		t.Errorf("the task failed %v after its replica was cut off, want within its lease (%v) and a poll", took, lease)
	}
	if msg, _ := got["statusMessage"].(string); !strings.Contains(msg, "the replica that ran it (replica-a) was lost") {
		t.Errorf("the failed task says %q, want it to name the lost replica", msg)
	}
	res := b.request(t, 2, "tasks/result", map[string]any{"taskId": id})
	if e, _ := res["error"].(map[string]any); e == nil || !strings.Contains(fmt.Sprint(e["message"]), "replica-a") || !strings.Contains(fmt.Sprint(e["message"]), "not run again elsewhere") {
		t.Errorf("tasks/result of the lost task: %v, want its error naming the replica", res)
	}
	close(tt.release) // the run ends on the cut-off replica, which cannot record it
	time.Sleep(2 * sharedTaskPoll)
	b.taskStatus(t, id, taskFailed)
}

// TestAClientsAnswerOnAnotherReplicaReachesTheWaitingCall runs a tool that
// asks the client for sampling on one of two servers sharing Redis for
// sessions and inboxes; the client's answer reaches the other, which
// passes it to the first through its inbox: the call ends with it. An
// answer written to the inbox by someone without the replicas' key is
// refused, and the call waits on for the real one.
// replicaPair starts two servers sharing the Redis r, under prefix, for
// their sessions, inboxes and changes, and for what more adds, each
// serving the plugins that plugins makes for it and following its inbox
// and the changes; then it opens a session of a 2025-11-25 client of caps
// on the first (a) and resumes it on the second (b).
func replicaPair(t *testing.T, r *redistest.Server, prefix string, more func(*redisstate.Store, *Options), plugins func(*Server) []*Plugin, caps string) (servers []*Server, a, b *harness) {
	t.Helper()
	for range 2 {
		store := r.Store(prefix)
		opts := Options{SessionStore: store, Inbox: store, Changes: store, SessionTTL: time.Minute,
			RequestStateKeys: [][]byte{[]byte("0123456789abcdef0123456789abcdef")}}
		if more != nil {
			more(store, &opts)
		}
		srv := NewServer(opts, nil)
		srv.SetCatalog(BuildCatalog(t.Context(), plugins(srv), nil))
		ctx, stop := context.WithCancel(context.Background())
		t.Cleanup(stop)
		go srv.FollowInbox(ctx)
		go srv.FollowChanges(ctx)
		servers = append(servers, srv)
	}
	opts := SessionOptions{Transport: TransportHTTP, ID: "pair-" + strings.TrimSuffix(prefix, ":"), Endpoint: "/mcp"}
	out := newRecorder()
	a = &harness{srv: servers[0], sess: servers[0].OpenSession(out, opts), out: out}
	initWithCaps(t, a, Version20251125, caps)
	bOut := newRecorder()
	sess, err := servers[1].ResumeSession(t.Context(), bOut, opts, "")
	if err != nil {
		t.Fatal(err)
	}
	b = &harness{srv: servers[1], sess: sess, out: bOut}
	time.Sleep(200 * time.Millisecond) // the inboxes and changes are followed
	return servers, a, b
}

func TestAClientsAnswerOnAnotherReplicaReachesTheWaitingCall(t *testing.T) {
	r := redistest.Start(t)
	servers, a, b := replicaPair(t, r, "inbox:", nil, func(*Server) []*Plugin {
		return []*Plugin{callerPlugin(hostFn(t, abi.HostCreateMessage))}
	}, `{"sampling":{}}`)

	a.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}}}`)
	req := a.out.next(t)
	if req["method"] != "sampling/createMessage" {
		t.Fatalf("want a sampling request to the client, got %v", req)
	}
	id, _ := json.Marshal(req["id"])
	if !strings.Contains(string(id), servers[0].origin) {
		t.Fatalf("the request's id %s does not name the replica that asked", id)
	}
	forged := `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"role":"assistant","content":{"type":"text","text":"forged"},"model":"m"}}`
	if err := r.Store("inbox:").Send(t.Context(), servers[0].origin, []byte("answer "+a.sess.id+"\nr1.k.bm90LWEtbWFj."+forged)); err != nil {
		t.Fatal(err)
	}
	a.out.none(t, 300*time.Millisecond)
	b.send(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"role":"assistant","content":{"type":"text","text":"hello"},"model":"m"}}`)
	res := result(t, a.out.next(t))
	if text := res["content"].([]any)[0].(map[string]any)["text"].(string); !strings.Contains(text, `"hello"`) {
		t.Fatalf("the plugin got %q, want the answer given on the other replica", text)
	}
}

// TestAskedByNamesTheReplicaOfARequestID reads the replica out of the ids
// clientRequestID makes, whose names may hold '-' and '_' (base64url), and
// nothing out of other ids.
func TestAskedByNamesTheReplicaOfARequestID(t *testing.T) {
	for id, want := range map[string]string{
		`"mcphost-t1axwJRJ-ifX-12"`: "t1axwJRJ-ifX",
		`"mcphost-a_b-1"`:           "a_b",
		`"mcphost-7"`:               "",
		`"mcphost--7"`:              "",
		`"other-x-1"`:               "",
		`7`:                         "",
	} {
		if got := askedBy(json.RawMessage(id)); got != want {
			t.Errorf("askedBy(%s) = %q, want %q", id, got, want)
		}
	}
	srv := NewServer(Options{Inbox: fakeInbox{}}, nil)
	sess := srv.NewSession(newRecorder())
	if got := askedBy(sess.clientRequestID(3)); got != srv.origin {
		t.Errorf("the replica of a request id this server made: %q, want %q", got, srv.origin)
	}
}

// fakeInbox is a SharedInbox that carries nothing.
type fakeInbox struct{}

func (fakeInbox) Send(context.Context, string, []byte) error { return nil }
func (fakeInbox) Receive(ctx context.Context, _ string, _ func([]byte)) error {
	<-ctx.Done()
	return nil
}

// TestAURLElicitationCompletesOnAnotherReplica has a plugin on one replica
// send a URL elicitation that the client accepts, and the same plugin on
// another replica sharing Redis complete it, as when the user's next
// request lands elsewhere: the session's client hears on each replica
// holding it (its stream of server messages is on one), once; a second
// completion, a record forged in Redis and a completion forged on the
// changes stream are refused.
func TestAURLElicitationCompletesOnAnotherReplica(t *testing.T) {
	r := redistest.Start(t)
	_, a, b := replicaPair(t, r, "elicit:", func(store *redisstate.Store, o *Options) { o.Elicitations = store },
		func(srv *Server) []*Plugin { return []*Plugin{urlElicitingPlugin(t, srv)} }, urlCaps)

	askURL(t, a, 1, "e1", "accept")
	b.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"done","arguments":{"elicitationId":"e1"}}}`)
	var answered bool
	for range 2 { // on the replica that completed it: the response and its copy of the notification
		switch m := b.out.next(t); {
		case m["method"] == "notifications/elicitation/complete":
		case textOf(t, m) == "ok:":
			answered = true
		default:
			t.Fatalf("completing on the other replica: %v", m)
		}
	}
	if m := a.out.next(t); !answered || m["method"] != "notifications/elicitation/complete" || m["params"].(map[string]any)["elicitationId"] != "e1" {
		t.Fatalf("the replica that sent the elicitation got %v (answered %v), want its completion", m, answered)
	}
	a.out.none(t, 100*time.Millisecond)
	if txt := textOf(t, b.call(t, 3, "tools/call", map[string]any{"name": "done", "arguments": map[string]any{"elicitationId": "e1"}})); !strings.Contains(txt, "not a URL elicitation of this plugin") {
		t.Errorf("completing e1 again: %s", txt)
	}
	forged := `{"session":"` + a.sess.id + `","id":"e9"}`
	if _, err := r.Do("SET", "elicit:elicitation:"+elicitationKey("p", "e9"), "r1.k.bm90LWEtbWFj."+forged); err != nil {
		t.Fatal(err)
	}
	if txt := textOf(t, b.call(t, 4, "tools/call", map[string]any{"name": "done", "arguments": map[string]any{"elicitationId": "e9"}})); !strings.HasPrefix(txt, "error:") {
		t.Errorf("completing an elicitation forged in Redis: %s", txt)
	}
	change, _ := json.Marshal(map[string]any{"elicitation": []byte("r1.k.bm90LWEtbWFj." + forged)})
	if err := r.Store("elicit:").Publish(t.Context(), "forger", change); err != nil {
		t.Fatal(err)
	}
	a.out.none(t, 300*time.Millisecond)
}

// TestATasksRequestsReachItsTasksResultOnAnotherReplica creates a task on
// one replica whose run asks the client for an elicitation
// (input_required), and calls tasks/result for it on another replica
// sharing Redis: the elicitation request comes out there, with the
// related task; the client's answer, given there, reaches the run; and
// that tasks/result ends with the task's result.
func TestATasksRequestsReachItsTasksResultOnAnotherReplica(t *testing.T) {
	r := redistest.Start(t)
	_, a, b := replicaPair(t, r, "tw:", func(store *redisstate.Store, o *Options) { o.TaskStore = store },
		func(*Server) []*Plugin { p, _ := taskPlugin(t); return []*Plugin{p} }, `{"elicitation":{"form":{}}}`)

	a.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{},"task":{}}}`)
	created, _ := a.await(t, responseTo(1))
	id := result(t, created)["task"].(map[string]any)["taskId"].(string)
	b.taskStatus(t, id, "input_required")
	b.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":%q}}`, id))
	ask, _ := b.await(t, isMethod("elicitation/create"))
	if relatedTask(ask["params"].(map[string]any)) != id {
		t.Fatalf("the elicitation on the other replica lacks the related task: %v", ask)
	}
	askID, _ := json.Marshal(ask["id"])
	b.send(`{"jsonrpc":"2.0","id":` + string(askID) + `,"result":{"action":"accept","content":{"name":"Ada"}}}`)
	res, _ := b.await(t, responseTo(2))
	if text := result(t, res)["content"].([]any)[0].(map[string]any)["text"].(string); !strings.Contains(text, `"Ada"`) {
		t.Fatalf("tasks/result on the other replica: %v", res)
	}
}
