package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/haproxytest"
	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/mcphost/mcphost/internal/testrig/redistest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// killBound is how long a call in flight on a replica killed with
// SIGKILL may take to fail: the client's reconnect delay (the SSE retry,
// 1 s), the silence after which a replica is taken for lost (5 s), a beat
// (1.5 s at most), and margin for a loaded machine.
const killBound = 12 * time.Second

// TestAReplicaKilledUnderSteadyLoad kills one of three replicas behind
// haproxy with SIGKILL while 32 Go SDK clients (2025-11-25) call a tool
// that takes 100 ms (the conformance plugin's, with progress) without
// pause, their sessions and streams shared in Redis. The clients
// whose stream broke resume it on the other replicas (Last-Event-ID).
// No call hangs past killBound, and every client goes on calling. Each
// call that fails was in flight on the killed replica — haproxy's log,
// matched by a header naming the call, shows it sent there and cut off
// (a call whose stream was resumed fails with the error naming the
// replica; one cut off before its stream began, with haproxy's 502) —
// or is one that haproxy answered by closing the client's connection,
// with no log line: what it does when a server closes a reused
// connection without an answer, so that the client tries again
// (haproxy/haproxy#1109; only the killed replica closes one so, and the Go
// SDK does not try a POST again). The calls haproxy saw cut off there
// that did not fail got the response the killed replica had logged.
func TestAReplicaKilledUnderSteadyLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("a replica killed under load takes a while")
	}
	r := redistest.Start(t)
	f := replicaFixtureOf(t, r, conformanceGrants+"max_instances = 16\n", []string{"plugins/conformance"})
	victim := f.start(t)
	hosts := []string{strings.TrimSuffix(strings.TrimPrefix(victim.url, "http://"), "/mcp")}
	for range 2 {
		hosts = append(hosts, strings.TrimSuffix(strings.TrimPrefix(f.serveHTTP(t), "http://"), "/mcp"))
	}
	proxy := haproxytest.Start(t, haproxytest.Options{Check: "/readyz", Log: true, LogHeader: callHeader}, hosts...)
	poll.Until(t, 60*time.Second, "haproxy to find every replica ready", func() bool { return proxy.Up(t) == 3 })

	const clients = 32
	var mu sync.Mutex
	var ok, after int
	failed := map[string]string{} // call → error
	var slowest time.Duration
	killed := time.Now().Add(time.Hour) // set at the kill
	ctx, stopCalling := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for c := range clients {
		client := mcp.NewClient(&mcp.Implementation{Name: "e2e-kill", Version: "1"}, nil)
		cs, err := client.Connect(ctxT(t), &mcp.StreamableClientTransport{Endpoint: proxy.URL + "/mcp", HTTPClient: &http.Client{Transport: callTagger{}}},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		wg.Go(func() {
			for n := 0; ctx.Err() == nil; n++ {
				call := fmt.Sprintf("c%d-%d", c, n)
				start := time.Now()
				callCtx, cancel := context.WithTimeout(context.Background(), 3*killBound)
				res, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "test_tool_with_progress", Meta: mcp.Meta{"call": call}})
				cancel()
				took := time.Since(start)
				mu.Lock()
				slowest = max(slowest, took)
				switch {
				case err != nil || res.IsError:
					failed[call] = fmt.Sprint(err, res)
				case start.After(killed.Add(time.Second)):
					ok++
					after++
				default:
					ok++
				}
				mu.Unlock()
			}
		})
	}
	time.Sleep(time.Second) // steady load
	mu.Lock()
	killed = time.Now()
	mu.Unlock()
	if err := syscall.Kill(victim.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	time.Sleep(killBound)
	stopCalling()
	wg.Wait()

	// The calls in flight on the killed replica: haproxy's log lines of a
	// POST it sent there that the server ended without a whole answer.
	var cutOff []string
	for _, line := range strings.Split(proxy.Log(), "\n") {
		if m := serverCutOff.FindStringSubmatch(line); m != nil {
			cutOff = append(cutOff, m[1])
		}
	}
	log := proxy.Log()
	var resumed, unforwarded int
	var stray []string
	for call, err := range failed {
		switch {
		case slices.Contains(cutOff, call) && strings.Contains(err, hosts[0]+") was lost"):
			resumed++
		case slices.Contains(cutOff, call):
		case !strings.Contains(log, "{"+call+"}") && strings.HasSuffix(strings.TrimSuffix(err, " <nil>"), ": EOF"):
			unforwarded++
		default:
			stray = append(stray, call+": "+err)
		}
	}
	t.Logf("one of 3 replicas killed under %d clients: %d calls succeeded (%d started a second after the kill), %d failed: "+
		"%d of the %d that haproxy saw cut off on the killed replica (%d of them after their stream was resumed elsewhere, with the error naming the replica; the others got the response it had logged), "+
		"and %d whose connection haproxy closed without a log line (a reused connection to the killed replica); the slowest call took %v",
		clients, ok, after, len(failed), len(failed)-unforwarded-len(stray), len(cutOff), resumed, unforwarded, slowest.Round(time.Millisecond))
	if slowest > killBound {
		t.Errorf("a call took %v, past the bound of %v", slowest, killBound)
	}
	if len(stray) > 0 {
		t.Errorf("%d calls failed that were not in flight on the killed replica, or not with the error naming it: %v", len(stray), stray)
	}
	if len(cutOff) == 0 {
		t.Error("haproxy saw no call cut off on the killed replica: the kill did not catch any in flight")
	}
	if after < clients {
		t.Errorf("only %d calls succeeded from a second after the kill: the clients do not go on on the other replicas", after)
	}
}

// callHeader names the call a POST carries, for haproxy's log.
const callHeader = "X-Test-Call"

// callTagger sets callHeader on each POST of a tools/call whose _meta
// names its call (c<client>-<n>).
type callTagger struct{}

var callText = regexp.MustCompile(`"call":"(c[0-9]+-[0-9]+)"`)

func (callTagger) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodPost && r.Body != nil {
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		r = r.Clone(r.Context())
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		if m := callText.FindSubmatch(body); m != nil {
			r.Header.Set(callHeader, string(m[1]))
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// serverCutOff matches haproxy's HTTP log line of a POST of a call sent to
// the first server (r0) that the server ended without a whole answer
// (termination state S…), capturing the call's name.
var serverCutOff = regexp.MustCompile(` mcphost/r0 .* S[A-Z]-- .*\{(c[0-9]+-[0-9]+)\} "POST /mcp `)

// TestAStreamOfAKilledReplicaIsReplayedElsewhere calls, on one of two
// replicas sharing Redis, the conformance plugin's tool that asks the
// client for an elicitation, and kills that replica with SIGKILL while
// the call waits for the answer. The client resumes the call's stream on
// the other replica with Last-Event-ID (the priming event's): the
// elicitation request the killed replica sent is replayed under its event
// id, then the call is answered with an error naming the killed replica,
// within the bound (5 s without a beat), never left waiting.
func TestAStreamOfAKilledReplicaIsReplayedElsewhere(t *testing.T) {
	r := redistest.Start(t)
	f := replicaFixtureOf(t, r, conformanceGrants, []string{"plugins/conformance"})
	first, second := twoReplicas(t, f)
	peer := &httpPeer{url: first.url}
	initTasks(t, peer)
	resp := peer.post(t, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"test_elicitation","arguments":{"message":"Who are you?"}}}`)
	defer resp.Body.Close()
	events := sseEventsOf(resp.Body)
	priming, asked := <-events, <-events
	if priming.data != "" || !strings.Contains(asked.data, `"elicitation/create"`) {
		t.Fatalf("the call's stream: %+v then %+v, want the priming event then the elicitation request", priming, asked)
	}
	time.Sleep(300 * time.Millisecond) // logged in the background
	if err := syscall.Kill(first.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()

	req, err := http.NewRequest(http.MethodGet, second, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", peer.session)
	req.Header.Set("Last-Event-ID", priming.id)
	resumed, err := http.DefaultClient.Do(req)
	if err != nil || resumed.StatusCode != http.StatusOK {
		t.Fatalf("GET with Last-Event-ID %s on the other replica: %v %v", priming.id, err, resumed.Status)
	}
	defer resumed.Body.Close()
	replay := sseEventsOf(resumed.Body)
	<-replay // the retry
	if e := <-replay; e.id != asked.id || e.data != asked.data {
		t.Fatalf("replayed %+v, want the elicitation request %+v", e, asked)
	}
	var answer sseEvent
	select {
	case answer = <-replay:
	case <-time.After(killBound):
		t.Fatalf("the call was not answered within %v of the kill", killBound)
	}
	took := time.Since(killed)
	replica := strings.TrimSuffix(strings.TrimPrefix(first.url, "http://"), "/mcp")
	t.Logf("the killed replica's call answered on the other %v after the kill: %s", took.Round(time.Millisecond), answer.data)
	if !strings.Contains(answer.data, `"id":5`) || !strings.Contains(answer.data, replica+") was lost") {
		t.Errorf("the call's answer: %s, want an error for request 5 naming the killed replica", answer.data)
	}
	if took > killBound {
		t.Errorf("answered %v after the kill, past %v", took, killBound)
	}
}

// sseEvent is an event of an SSE stream: its id and data.
type sseEvent struct{ id, data string }

// sseEventsOf reads the events of an SSE body as they come.
func sseEventsOf(body io.Reader) <-chan sseEvent {
	ch := make(chan sseEvent, 100)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(body)
		sc.Buffer(nil, 1<<20)
		var e sseEvent
		for sc.Scan() {
			field, value, _ := strings.Cut(sc.Text(), ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "":
				ch <- e
				e = sseEvent{}
			case "id":
				e.id = value
			case "data":
				e.data += value
			}
		}
	}()
	return ch
}
