package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/mcphost/mcphost/internal/testrig/redistest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// withStateSetting adds a line to the [state] table of a fixture from
// replicaFixtureOf, which ends its config.
func (f fixture) withStateSetting(t testing.TB, line string) fixture {
	t.Helper()
	cfg, err := os.OpenFile(f.config, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer cfg.Close()
	if _, err := cfg.WriteString(line + "\n"); err != nil {
		t.Fatal(err)
	}
	return f
}

// twoReplicas starts two replicas of f, once both have loaded their
// plugins: the first one a test may kill (its pid), the second's URL.
func twoReplicas(t *testing.T, f fixture) (first *server, second string) {
	t.Helper()
	first, second = f.start(t), f.serveHTTP(t)
	for _, url := range []string{first.url, second} {
		poll.Until(t, 60*time.Second, "the replicas' load to end", func() bool { return readyzStatus(t, strings.TrimSuffix(url, "/mcp")) == 200 })
	}
	return first, second
}

// TestATaskOfAKilledReplicaFailsWithinItsLease runs two replicas sharing
// Redis, with [state] task_lease = "3s", starts a task of each era on the
// first and kills it with SIGKILL: polled on the second, each task fails
// within the lease (and a poll), with an error naming the killed replica,
// and is not run again.
func TestATaskOfAKilledReplicaFailsWithinItsLease(t *testing.T) {
	r := redistest.Start(t)
	f := replicaFixtureOf(t, r, taskConfig, taskPlugins).withStateSetting(t, `task_lease = "3s"`)
	first, second := twoReplicas(t, f)

	old := &httpPeer{url: first.url}
	initTasks(t, old)
	oldTask := createdTask(t, old.request(t, 1, "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"millis": 60000}, "task": map[string]any{}}))
	modern := postModern(t, first.url, 2, "tools/call", "slow", map[string]any{"name": "slow", "arguments": map[string]any{"millis": 60000},
		"_meta": map[string]any{"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}}})
	modernTask, _ := modern["result"].(map[string]any)["taskId"].(string)
	if modernTask == "" {
		t.Fatalf("a 2026-07-28 call of slow: %v, want a task", modern)
	}
	elsewhere := &httpPeer{url: second, session: old.session}
	id := &ids{n: 10}
	pollStatus(t, elsewhere, id, oldTask, "working")

	if err := syscall.Kill(first.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	replica := strings.TrimSuffix(strings.TrimPrefix(first.url, "http://"), "/mcp")
	got := pollStatus(t, elsewhere, id, oldTask, "failed")
	took := time.Since(killed)
	t.Logf("the killed replica's 2025-11-25 task failed on the other %v after the kill (lease 3s)", took.Round(time.Millisecond))
	if took > 3*time.Second+2*time.Second {
		t.Errorf("the task failed %v after its replica was killed, want within the 3s lease and a poll", took)
	}
	if msg, _ := got["statusMessage"].(string); !strings.Contains(msg, replica+") was lost") {
		t.Errorf("the failed task says %q, want it to name the killed replica (%s)", msg, replica)
	}
	var modernGot map[string]any
	if !poll.Within(10*time.Second, func() bool {
		id.n++
		modernGot, _ = postModern(t, second, id.n, "tasks/get", modernTask, map[string]any{"taskId": modernTask,
			"_meta": map[string]any{"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}}})["result"].(map[string]any)
		return modernGot["status"] == "failed"
	}) {
		t.Fatalf("the 2026-07-28 task of the killed replica: %v, want failed", modernGot)
	}
	if e := fmt.Sprint(modernGot["error"]); !strings.Contains(e, replica+") was lost") || !strings.Contains(e, "not run again elsewhere") {
		t.Errorf("the failed 2026-07-28 task inlines %v, want an error naming the killed replica", modernGot["error"])
	}
}

// echoSampling is a client's sampling: it answers "re: " and the first
// message's text.
func echoSampling(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	in, _ := req.Params.Messages[0].Content.(*mcp.TextContent)
	return &mcp.CreateMessageResult{Role: "assistant", Model: "echo-model", StopReason: "endTurn", Content: &mcp.TextContent{Text: "re: " + in.Text}}, nil
}

// TestServerToClientRequestsAnsweredOnAnotherReplica runs the Go SDK's
// client through haproxy in front of three replicas sharing Redis, with
// the conformance plugin's tools that ask the client for sampling and for
// an elicitation: at 2025-11-25 each answer is a POST of its own, which
// haproxy brings to another replica than the one whose plugin call waits
// for it, and which passes it there through Redis; at 2026-07-28 the
// answer comes back with the retried request, wherever it lands. Each call
// ends with the client's answer.
func TestServerToClientRequestsAnsweredOnAnotherReplica(t *testing.T) {
	r := redistest.Start(t)
	url, bases := replicasBehindHAProxy(t, replicaFixtureOf(t, r, conformanceGrants, []string{"plugins/conformance"}), 3)
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-talkback", Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: echoSampling,
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"username": "Ada", "email": "ada@example.com"}}, nil
		},
		Capabilities: &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}, Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
	})
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			cs := connectAt(t, client, url, version)
			defer cs.Close()
			for range 3 { // the call and its answer on each replica in turn
				for tool, want := range map[string]string{
					"test_sampling":    "re: across replicas",
					"test_elicitation": "Ada",
				} {
					res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"prompt": "across replicas", "message": "Who are you?"}})
					if err != nil || res.IsError {
						t.Fatalf("%s: %v %+v", tool, err, res)
					}
					text, _ := res.Content[0].(*mcp.TextContent)
					if text == nil || !strings.Contains(text.Text, want) {
						t.Errorf("%s answered %+v, want it to carry the client's answer %q", tool, res.Content, want)
					}
				}
			}
		})
	}
	for i, base := range bases {
		if n := operations(t, base); n < 3 {
			t.Errorf("replica %d served %d MCP requests, want several: haproxy spreads them", i, n)
		}
	}
}

// BenchmarkServerToClientRoundTripAcrossReplicas measures a tool call that
// asks the client for sampling (the Go SDK's client at 2025-11-25, one
// session, calls one after another) two ways, in interleaved rounds of
// b.N calls each: on one replica, and on two replicas sharing Redis whose
// requests alternate, so that the client's answer always reaches the
// replica that did not ask and goes through its inbox. It reports each
// median and the difference:
//
//	go test ./internal/testrig/e2e -run '^$' -bench ServerToClientRoundTrip -benchtime 300x
func BenchmarkServerToClientRoundTripAcrossReplicas(b *testing.B) {
	r := redistest.Start(b)
	single := newFixture(b, conformanceGrants, "plugins/conformance").serveHTTP(b)
	f := replicaFixtureOf(b, r, conformanceGrants, []string{"plugins/conformance"})
	rr := newRoundRobin(b, f.serveHTTP(b), f.serveHTTP(b))
	client := mcp.NewClient(&mcp.Implementation{Name: "bench-talkback", Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "ok"}}, nil
		},
		Capabilities: &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}},
	})
	connect := func(url string, hc *http.Client) *mcp.ClientSession {
		cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cs.Close() })
		return cs
	}
	ways := []string{"one replica", "two replicas, the answer on the other"}
	sessions := map[string]*mcp.ClientSession{
		ways[0]: connect(single, nil),
		ways[1]: connect("http://"+rr.hosts[0]+"/mcp", &http.Client{Transport: rr}),
	}
	medians := interleavedMedians(b, ways, sessions, &mcp.CallToolParams{Name: "test_sampling", Arguments: map[string]any{"prompt": "hi"}})
	one, across := medians[ways[0]], medians[ways[1]]
	b.Logf("median sampling round trip: %s %v, %s %v (+%v, %.2f×)", ways[0], one, ways[1], across, across-one, float64(across)/float64(one))
	b.ReportMetric(float64(one.Microseconds()), "µs-one")
	b.ReportMetric(float64(across.Microseconds()), "µs-across")
}

// TestALegacyClientsPOSTsLandOnOtherReplicas runs the Go SDK's legacy
// HTTP+SSE client (2024-11-05) through haproxy in front of three replicas
// sharing Redis: its /sse stream is held by one replica and haproxy
// spreads its POSTs over all three. Each call is served where its POST
// lands, its response reaches the stream through the holder's inbox, and
// a call that asks the client for sampling gets the client's answer,
// POSTed to yet another replica.
func TestALegacyClientsPOSTsLandOnOtherReplicas(t *testing.T) {
	r := redistest.Start(t)
	url, bases := replicasBehindHAProxy(t, replicaFixtureOf(t, r, conformanceGrants, []string{"plugins/conformance"}), 3)
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-legacy", Version: "1"}, &mcp.ClientOptions{CreateMessageHandler: echoSampling})
	cs, err := client.Connect(ctxT(t), &mcp.SSEClientTransport{Endpoint: strings.TrimSuffix(url, "/mcp") + "/sse"}, &mcp.ClientSessionOptions{ProtocolVersion: "2024-11-05"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for i := range 6 {
		res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "test_simple_text"})
		if err != nil || res.IsError {
			t.Fatalf("call %d: %v %+v", i, err, res)
		}
		res, err = cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "test_sampling", Arguments: map[string]any{"prompt": "legacy"}})
		if err != nil || res.IsError {
			t.Fatalf("sampling call %d: %v %+v", i, err, res)
		}
		if text, _ := res.Content[0].(*mcp.TextContent); text == nil || !strings.Contains(text.Text, "re: legacy") {
			t.Errorf("sampling call %d answered %+v, want the client's answer", i, res.Content)
		}
	}
	var served []int
	idle := 0
	for _, base := range bases {
		n := operations(t, base)
		served = append(served, n)
		if n == 0 {
			idle++
		}
	}
	if idle > 1 {
		t.Errorf("MCP requests served by each replica: %v, want them on at least two: haproxy spreads the POSTs over replicas that do not hold the stream", served)
	}
	t.Logf("MCP requests served by each replica: %v", served)
}

// TestAURLElicitationCompletedOnAnotherReplica runs the Go SDK's client
// through haproxy in front of three replicas sharing Redis, with the
// signin plugin: each round sends a URL elicitation (sign_in), which the
// client accepts, then completes it (signed_in) in a call that haproxy's
// round robin brings to another replica (the calls and the client's
// answer are three POSTs a round). The client hears of each completion on
// its stream of server messages, which one replica holds.
func TestAURLElicitationCompletedOnAnotherReplica(t *testing.T) {
	r := redistest.Start(t)
	url, _ := replicasBehindHAProxy(t, replicaFixtureOf(t, r, `
[plugins.signin]
host_functions = ["create_elicitation", "notify_elicitation_complete"]
`, []string{"internal/testrig/testplugins/signin"}), 3)
	completed := make(chan string, 10)
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-signin", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if req.Params.Mode != "url" {
				return nil, fmt.Errorf("want a URL elicitation, got %+v", req.Params)
			}
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
		ElicitationCompleteHandler: func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			completed <- req.Params.ElicitationID
		},
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
	})
	cs, err := client.Connect(ctxT(t), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for i := range 6 {
		id := fmt.Sprintf("sign-in-%d", i)
		for _, call := range [][2]string{{"sign_in", "accept"}, {"signed_in", "completed " + id}} {
			res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: call[0], Arguments: map[string]any{"id": id}})
			if err != nil || res.IsError {
				t.Fatalf("%s %s: %v %+v", call[0], id, err, res)
			}
			if text, _ := res.Content[0].(*mcp.TextContent); text == nil || text.Text != call[1] {
				t.Fatalf("%s %s answered %+v, want %q", call[0], id, res.Content, call[1])
			}
		}
		select {
		case got := <-completed:
			if got != id {
				t.Fatalf("the client heard that %s completed, want %s", got, id)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("the client did not hear that %s completed", id)
		}
	}
}
