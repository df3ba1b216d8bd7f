package mcphttp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/mcphost/mcphost/internal/testrig/redistest"
)

// streamReplicas starts two handlers, each of its own server, sharing the
// Redis r for their sessions, inboxes and stream logs as replicas do,
// serving gatedPlugin; stop[i] stops replica i's stream logger (its
// beats), as a replica killed does.
func streamReplicas(t *testing.T, r *redistest.Server, release <-chan struct{}) (reps []*httpHarness, stop []context.CancelFunc) {
	t.Helper()
	for i := range 2 {
		store := r.Store("t:")
		srv := host.NewServer(host.Options{Name: "test", Version: "1", SessionStore: store, StreamLog: store, Inbox: store, SessionTTL: time.Minute,
			Replica: "replica-" + string(rune('0'+i)), RequestStateKeys: [][]byte{[]byte("0123456789abcdef0123456789abcdef")}},
			host.BuildCatalog(context.Background(), []*host.Plugin{gatedPlugin(t, release)}, nil))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { srv.LogStreams(ctx); close(done) }()
		inboxCtx, stopInbox := context.WithCancel(context.Background())
		go srv.FollowInbox(inboxCtx)
		t.Cleanup(stopInbox)
		ts := httptest.NewUnstartedServer(nil)
		h := NewHandler(srv, ts.Listener.Addr().String(), Options{ReconnectDelay: 25 * time.Millisecond})
		ts.Config.Handler = h
		ts.Start()
		t.Cleanup(func() { cancel(); <-done; h.Close(); ts.Close() })
		reps, stop = append(reps, &httpHarness{h: h, url: ts.URL}), append(stop, cancel)
	}
	return reps, stop
}

// resumeOn asks rep for the stream of session id after event last (GET
// with Last-Event-ID).
func resumeOn(t *testing.T, rep *httpHarness, id, last string) *http.Response {
	t.Helper()
	return rep.do(t, http.MethodGet, "/mcp", "", headerSessionID, id, "Accept", "text/event-stream", headerLastEventID, last)
}

// startJobOn calls the gated tool job as request 7 of session id on rep,
// and returns its stream after the priming event and the progress event,
// with their ids.
func startJobOn(t *testing.T, rep *httpHarness, id string) (er *eventReader, priming, progress string) {
	t.Helper()
	er = readEvents(t, rep.do(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"job","_meta":{"progressToken":"p"}}}`, headerSessionID, id))
	first, _ := er.next(t)
	e, m := er.message(t)
	if first.data != "" || m["method"] != "notifications/progress" {
		t.Fatalf("the job's stream starts with %+v then %v, want the priming event then its progress", first, m)
	}
	return er, first.id, e.id
}

// TestAStreamResumesOnAnotherReplicaFromItsLog breaks the stream of a
// tool call running on one replica and resumes it with Last-Event-ID on
// another, as a load balancer without stickiness does: the other replays
// what the stream carried after that event from the shared log, then what
// the call sends as it comes, its response last, under the same event ids.
func TestAStreamResumesOnAnotherReplicaFromItsLog(t *testing.T) {
	r := redistest.Start(t)
	release := make(chan struct{})
	reps, _ := streamReplicas(t, r, release)
	id := reps[0].initSession(t, host.Version20251125)
	call, priming, progress := startJobOn(t, reps[0], id)
	call.body.Close()

	resumed := readEvents(t, resumeOn(t, reps[1], id, priming))
	if e, _ := resumed.next(t); e != (rawEvent{retry: "25"}) {
		t.Fatalf("the resumed stream starts with %+v, want the retry alone", e)
	}
	if e, m := resumed.message(t); e.id != progress || m["method"] != "notifications/progress" {
		t.Fatalf("replayed %s %v, want the progress event %s", e.id, m, progress)
	}
	close(release)
	stream := progress[:strings.LastIndexByte(progress, '-')]
	e, m := resumed.message(t)
	if e.id != stream+"-2" || m["id"] != float64(7) || m["result"] == nil {
		t.Fatalf("then %s %v, want the call's response as event %s-2", e.id, m, stream)
	}
	if e, more := resumed.next(t); more {
		t.Fatalf("the resumed stream goes on after the response: %+v", e)
	}

	// The standalone stream is not logged: resumed on the other replica,
	// it goes on with what that one sends.
	standalone := readEvents(t, reps[0].do(t, http.MethodGet, "/mcp", "", headerSessionID, id, "Accept", "text/event-stream"))
	primed, _ := standalone.next(t)
	standalone.body.Close()
	if code := resumeOn(t, reps[1], id, primed.id).StatusCode; code != http.StatusOK {
		t.Errorf("the standalone stream (%s) resumed on the other replica: %d, want its own standalone stream", primed.id, code)
	}
}

// TestAResumedStreamOfALostReplicaEndsWithAnError resumes on another
// replica the stream of a call whose replica stopped logging (killed): a
// forged entry in the log is not replayed, what was logged is, and the
// call is answered with an error naming the lost replica within
// streamSilence (and a beat) of the last entry, never left waiting.
func TestAResumedStreamOfALostReplicaEndsWithAnError(t *testing.T) {
	r := redistest.Start(t)
	release := make(chan struct{})
	defer close(release)
	reps, stop := streamReplicas(t, r, release)
	id := reps[0].initSession(t, host.Version20251125)
	call, priming, progress := startJobOn(t, reps[0], id)
	call.body.Close()
	stream := progress[:strings.LastIndexByte(progress, '-')]
	forged, _ := json.Marshal(map[string]any{"seq": 2, "msg": map[string]any{"jsonrpc": "2.0", "id": 7, "result": map[string]any{"content": []any{}}}, "final": true})
	if _, err := r.Do("XADD", "t:sse:"+id+":"+stream, "*", "e", "r1.k."+"AAAA."+string(forged)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // beats
	stop[0]()
	stopped := time.Now()

	resumed := readEvents(t, resumeOn(t, reps[1], id, priming))
	resumed.next(t) // retry
	if e, _ := resumed.message(t); e.id != progress {
		t.Fatalf("replayed %s, want the progress event %s", e.id, progress)
	}
	var e rawEvent
	select {
	case e = <-resumed.ch:
	case <-time.After(10 * time.Second):
		t.Fatal("no answer within 10s of the replica's last beat")
	}
	took := time.Since(stopped)
	var m struct {
		ID    int
		Error struct {
			Code    int
			Message string
		}
	}
	if err := json.Unmarshal([]byte(e.data), &m); err != nil || e.id != stream+"-2" || m.ID != 7 || m.Error.Code != -32603 ||
		!strings.Contains(m.Error.Message, "(replica-0) was lost") {
		t.Fatalf("the call's answer: %+v (%v), want event %s-2, an error for request 7 naming replica-0", e, err, stream)
	}
	t.Logf("answered %v after the replica's logger stopped: %s", took.Round(time.Millisecond), m.Error.Message)
	if took > 5*time.Second+2*time.Second {
		t.Errorf("the error came %v after the replica stopped, want within streamSilence (5s) and a beat", took)
	}
	// Resumed again, elsewhere: the error was logged.
	again := readEvents(t, resumeOn(t, reps[1], id, progress))
	again.next(t)
	if e, m := again.message(t); e.id != stream+"-2" || m["error"] == nil {
		t.Fatalf("resumed after the error: %s %v, want the logged error", e.id, m)
	}
}

// TestALegacySessionsPOSTsAreServedOnAnyReplica opens a legacy HTTP+SSE
// session's stream on one replica and POSTs its messages to the other, as
// a load balancer without stickiness does: the other serves them (its
// initialize, a tool call) and what they send reaches the stream through
// the first replica's inbox; a POST to the replica holding the stream after
// the other initialized the session is served there too; once the stream
// closes, the other answers 404 within host.SessionRefresh.
func TestALegacySessionsPOSTsAreServedOnAnyReplica(t *testing.T) {
	r := redistest.Start(t)
	release := make(chan struct{})
	close(release)
	reps, _ := streamReplicas(t, r, release)
	stream := readEvents(t, reps[0].do(t, http.MethodGet, "/sse", "", "Accept", "text/event-stream"))
	endpoint, _ := stream.next(t)
	id, ok := strings.CutPrefix(endpoint.data, "/messages?sessionId=")
	if endpoint.name != "endpoint" || !ok {
		t.Fatalf("the stream starts with %+v, want the endpoint event", endpoint)
	}
	post := func(rep *httpHarness, body string) int {
		return rep.status(t, http.MethodPost, "/messages?sessionId="+id, body)
	}
	answer := func(want string) map[string]any {
		t.Helper()
		for {
			_, m := stream.message(t)
			if m["id"] != nil {
				if !strings.Contains(mustJSONString(m), want) {
					t.Fatalf("the stream carries %v, want %s", m, want)
				}
				return m
			}
		}
	}
	if code := post(reps[1], `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"legacy","version":"1"}}}`); code != http.StatusAccepted {
		t.Fatalf("initialize on the other replica: %d", code)
	}
	answer(`"protocolVersion":"2024-11-05"`)
	if code := post(reps[1], `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
		t.Fatalf("notifications/initialized on the other replica: %d", code)
	}
	if code := post(reps[0], `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); code != http.StatusAccepted {
		t.Fatalf("tools/list on the replica holding the stream: %d", code)
	}
	answer(`"name":"job"`)
	if code := post(reps[1], `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"job","_meta":{"progressToken":"p"}}}`); code != http.StatusAccepted {
		t.Fatalf("tools/call on the other replica: %d", code)
	}
	answer(`"text":"done"`)
	if code := reps[1].status(t, http.MethodPost, "/messages?sessionId=nope", `{"jsonrpc":"2.0","id":4,"method":"ping"}`); code != http.StatusNotFound {
		t.Errorf("a POST for no session on the other replica: %d, want 404", code)
	}

	stream.body.Close()
	if !poll.Within(5*time.Second, func() bool { return post(reps[1], `{"jsonrpc":"2.0","id":5,"method":"ping"}`) == http.StatusNotFound }) {
		t.Error("the other replica still takes the session's POSTs after its stream closed")
	}
}

func mustJSONString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestResumptionsFromOtherReplicasAreBoundedPerSession resumes one stream
// of another replica many times at once, as a hostile client may, each
// holding a read of the log: beyond maxReplays at once they are refused
// with 503, and the session's other requests go on.
func TestResumptionsFromOtherReplicasAreBoundedPerSession(t *testing.T) {
	r := redistest.Start(t)
	release := make(chan struct{})
	defer close(release)
	reps, _ := streamReplicas(t, r, release)
	id := reps[0].initSession(t, host.Version20251125)
	call, priming, _ := startJobOn(t, reps[0], id)
	defer call.body.Close()
	var refused int
	for range maxReplays + 2 {
		switch code := resumeOn(t, reps[1], id, priming).StatusCode; code {
		case http.StatusOK:
		case http.StatusServiceUnavailable:
			refused++
		default:
			t.Fatalf("resuming %s: %d", priming, code)
		}
	}
	if refused != 2 {
		t.Errorf("%d of %d resumptions at once were refused, want those beyond %d", refused, maxReplays+2, maxReplays)
	}
	if code := reps[1].status(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`, headerSessionID, id); code != http.StatusOK {
		t.Errorf("tools/list meanwhile: %d", code)
	}
}
