package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/mcphost/mcphost/internal/testrig/redistest"
)

// hashCall sends one 2026-07-28 tools/call of the examples' hash tool with
// client and returns its outcome: "ok", "rate_limited" (a tool error
// naming calls_per_second), or what else it got.
func hashCall(t *testing.T, client *http.Client, url string, id int) string {
	req := modernRequest(t, url, "", id, "tools/call", "hash", map[string]any{"name": "hash", "arguments": map[string]any{"text": "abc"}})
	resp, err := client.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var m struct {
		Result *struct {
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	switch {
	case json.Unmarshal(body, &m) != nil || m.Result == nil:
		return string(body)
	case !m.Result.IsError:
		return "ok"
	case strings.Contains(string(body), "calls_per_second"):
		return "rate_limited"
	}
	return string(body)
}

// TestLimitsHoldAcrossThreeReplicasBehindHAProxy puts haproxy (round
// robin, no stickiness, forwarding the client's address) in front of three
// replicas sharing Redis, with max_sessions_per_client = 3 and
// calls_per_second = 20: a client's fourth session is refused whichever
// replica it reaches, another client's is not; clients asking about 200
// calls a second get, once the shares settled, about 20 a second in all
// (each replica alone would admit 20), and every replica serves some.
func TestLimitsHoldAcrossThreeReplicasBehindHAProxy(t *testing.T) {
	r := redistest.Start(t)
	f := replicaFixtureOf(t, r, "\n[defaults]\ncalls_per_second = 20\n", examples,
		"max_sessions_per_client = 3", `trusted_proxies = ["127.0.0.1/32"]`)
	url, bases := replicasBehindHAProxy(t, f, 3)

	t.Run("max_sessions_per_client", func(t *testing.T) {
		alice, bob := clientFrom("127.0.0.2"), clientFrom("127.0.0.3")
		for i := range 3 {
			if code, body := initializeWith(t, alice, url); code != http.StatusOK {
				t.Fatalf("alice's session %d: %d %s", i+1, code, body)
			}
		}
		code, body := initializeWith(t, alice, url)
		if code != http.StatusServiceUnavailable || !strings.Contains(body, "max_sessions_per_client (3) are open across the service's replicas") {
			t.Errorf("alice's fourth session: %d %s; want 503 naming max_sessions_per_client across the replicas", code, body)
		}
		if code, body := initializeWith(t, bob, url); code != http.StatusOK {
			t.Errorf("bob's first session: %d %s; want it admitted", code, body)
		}
	})

	t.Run("calls_per_second", func(t *testing.T) {
		const (
			callers = 4
			pace    = 20 * time.Millisecond // each caller: 50 calls a second
			during  = 3 * time.Second
			limit   = 20
		)
		// callFor calls from every caller for d and counts the outcomes.
		callFor := func(d time.Duration) (outcomes map[string]int, took float64) {
			var mu sync.Mutex
			outcomes = map[string]int{}
			var wg sync.WaitGroup
			start := time.Now()
			for c := range callers {
				wg.Go(func() {
					client := &http.Client{}
					for id := c * 100000; time.Since(start) < d; id++ {
						got := hashCall(t, client, url, id)
						mu.Lock()
						outcomes[got]++
						mu.Unlock()
						time.Sleep(pace)
					}
				})
			}
			wg.Wait()
			return outcomes, time.Since(start).Seconds()
		}
		// The shares settle within a second of the calls' start: a
		// replica measures its demand over 250 ms, the others' as they
		// last recorded it.
		warm, _ := callFor(time.Second)
		t.Logf("the first second: %v", warm)
		before := make([]int, len(bases))
		for i, base := range bases {
			before[i] = operations(t, base)
		}
		outcomes, took := callFor(during)
		ok, limited := outcomes["ok"], outcomes["rate_limited"]
		t.Logf("%d callers through haproxy for %.1f s: %d calls admitted, %d rate limited", callers, took, ok, limited)
		for got, n := range outcomes {
			if got != "ok" && got != "rate_limited" {
				t.Errorf("%d calls ended otherwise than admitted or rate limited: %s", n, got)
			}
		}
		// The limit's burst (a second of it) plus its rate.
		if most := int(limit * (took + 1)); ok > most {
			t.Errorf("%d calls admitted in %.1f s, more than %d: the replicas do not share calls_per_second = %d", ok, took, most, limit)
		}
		if least := int(limit * took * 0.7); ok < least {
			t.Errorf("%d calls admitted in %.1f s, fewer than %d: the shares starve the limit", ok, took, least)
		}
		for i, base := range bases {
			if served := operations(t, base) - before[i]; served < 10 {
				t.Errorf("replica %d served %d calls; want haproxy to spread them", i, served)
			}
		}
	})
}

// initializeWith opens a 2025-11-25 session with client and returns the
// status and body of the answer.
func initializeWith(t *testing.T, client *http.Client, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctxT(t), http.MethodPost, url, strings.NewReader(
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e-limits","version":"1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestRedisRestartedMidRun stops the Redis that three replicas behind
// haproxy share while a 2025-11-25 session and 2026-07-28 requests call a
// tool through haproxy, then starts it again: during the outage, no
// request hangs; the session's calls fail with an error naming Redis
// (once the replicas' second of cached session has passed) and a new
// session is refused the same way, while 2026-07-28 calls, which need no
// Redis, and the rate-limited plugin keep being served; once Redis is
// back, the same session's calls succeed again.
func TestRedisRestartedMidRun(t *testing.T) {
	r := redistest.Start(t)
	f := replicaFixtureOf(t, r, "\n[defaults]\ncalls_per_second = 1000\n", examples)
	url, _ := replicasBehindHAProxy(t, f, 3)
	session := &httpPeer{url: url}
	initTasks(t, session)
	const bound = 10 * time.Second // a request's answer, whatever Redis does
	call := func(id int) (status int, body string, took time.Duration) {
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 2*bound)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(fmt.Sprintf(
			`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"hash","arguments":{"text":"abc"}}}`, id)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		req.Header.Set("Mcp-Session-Id", session.session)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error(), time.Since(start)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), time.Since(start)
	}
	served := func(status int, body string) bool {
		return status == http.StatusOK && strings.Contains(body, `"content"`) && !strings.Contains(body, `"isError":true`)
	}
	for i := range 3 {
		if status, body, _ := call(100 + i); !served(status, body) {
			t.Fatalf("a call with Redis up: %d %s", status, body)
		}
	}
	time.Sleep(1500 * time.Millisecond) // Redis's append-only file has the session
	r.Stop()
	stopped := time.Now()
	redisErrors := 0
	var slowest time.Duration
	for i := 0; time.Since(stopped) < 4*time.Second; i++ {
		status, body, took := call(200 + i)
		slowest = max(slowest, took)
		if took > bound {
			t.Errorf("a session's call with Redis down took %v, past %v", took, bound)
		}
		switch {
		case served(status, body):
			if time.Since(stopped) > 2*host.SessionRefresh+bound {
				t.Errorf("a session's call was served %v into the outage: the session is not checked", time.Since(stopped))
			}
		case strings.Contains(body, `"code":-32603`) && strings.Contains(body, "redis at "+r.Addr):
			// HTTP 503 from the transport, or the request's own error
			// when the replica holds the session and finds it cannot
			// check it.
			redisErrors++
		default:
			t.Errorf("a session's call with Redis down: %d %s; want it served or refused naming Redis", status, body)
		}
		if got := hashCall(t, http.DefaultClient, url, 300+i); got != "ok" {
			t.Errorf("a 2026-07-28 call with Redis down: %s; want it served", got)
		}
	}
	if redisErrors == 0 {
		t.Error("no call of the session failed naming Redis during 4 s of outage")
	}
	if code, body := initializeWith(t, http.DefaultClient, url); code != http.StatusServiceUnavailable || !strings.Contains(body, "redis at "+r.Addr) {
		t.Errorf("a new session with Redis down: %d %s; want 503 naming Redis", code, body)
	}
	r.Restart()
	restarted := time.Now()
	var status int
	var body string
	id := 400
	// The Redis client dials a server that refused it again within a
	// second; three calls in a row, one on each replica, are then served.
	if !poll.Within(bound, func() bool {
		for range 3 {
			id++
			if status, body, _ = call(id); !served(status, body) {
				return false
			}
		}
		return true
	}) {
		t.Errorf("the session's calls once Redis is back: %d %s; want them served", status, body)
	}
	t.Logf("every replica served the session's calls %v after Redis was back", time.Since(restarted).Round(time.Millisecond))
	t.Logf("%d calls of the session refused naming Redis during its outage; the slowest call took %v", redisErrors, slowest.Round(time.Millisecond))
}
