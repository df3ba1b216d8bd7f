package e2e

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The adversarial suite, continued (hostile_test.go has the hostile
// plugins): attacks on what 2026-07-28 added (requestState,
// subscriptions/listen, server/discover, the tasks extension) and on
// hyper-mcp's credentials (get_access_token, get_keyring_secret). Each
// attack must be refused with a specific error, or bounded as documented,
// while the tools example's hash answers every call a session of its own
// makes meanwhile; afterwards the server must be live, and its peak
// resident memory during the attack within the ceiling the test states
// over its resident memory before it.

// siege is one attack under way: the healthy plugin called throughout it,
// and the server's memory before it.
type siege struct {
	srv      *server
	healthy  *healthy
	baseline int  // KiB resident before the attack
	isolated bool // the peak read at the end is the attack's own
}

// besiege starts an attack on srv: once cs's call of the healthy plugin
// answers, it makes the server's peak resident memory its current one,
// takes that as the baseline, and keeps cs calling the healthy plugin.
func besiege(t *testing.T, srv *server, cs *mcp.ClientSession) *siege {
	t.Helper()
	if got, isErr, err := hostileCall(ctxT(t), cs, "hash", map[string]any{"text": "abc"}); err != nil || isErr || !strings.Contains(got, sha256abc) {
		t.Fatalf("the healthy plugin before the attack: %v %v %q", err, isErr, got)
	}
	isolated := resetPeak(srv.pid)
	return &siege{srv: srv, baseline: procStatusKiB(t, srv.pid, "VmRSS"), isolated: isolated, healthy: keepCalling(t, cs)}
}

// lift ends the attack: the healthy plugin answered every call (at least
// one) made during it, the server answers /livez, and its peak resident
// memory stayed within ceilingMiB of the baseline.
func (s *siege) lift(t *testing.T, ceilingMiB int) {
	t.Helper()
	poll.Until(t, 30*time.Second, "a call of the healthy plugin during the attack", func() bool { return s.healthy.calls.Load() > 0 })
	s.healthy.finish(t)
	if code, body := getPath(t, s.srv, "/livez"); code != http.StatusOK {
		t.Errorf("/livez after the attack: %d %s", code, body)
	}
	peak := procStatusKiB(t, s.srv.pid, "VmHWM")
	t.Logf("peak RSS %d MiB = %d MiB before + %d MiB, ceiling + %d MiB (the attack's own peak: %v); the healthy plugin answered %d calls",
		peak>>10, s.baseline>>10, (peak-s.baseline)>>10, ceilingMiB, s.isolated, s.healthy.calls.Load())
	if peak > s.baseline+ceilingMiB<<10 {
		t.Errorf("peak RSS %d KiB is over the ceiling: %d KiB before + %d MiB", peak, s.baseline, ceilingMiB)
	}
}

// rpcError returns the error of a JSON-RPC response and its data.reason,
// failing the test when it has none.
func rpcError(t *testing.T, resp map[string]any) (code float64, message, reason string) {
	t.Helper()
	e, ok := resp["error"].(map[string]any)
	if !ok {
		t.Fatalf("want an error, got %v", resp)
	}
	data, _ := e["data"].(map[string]any)
	reason, _ = data["reason"].(string)
	message, _ = e["message"].(string)
	return e["code"].(float64), message, reason
}

// TestRequestStateAttacks: a requestState forged, tampered with (one bit
// flipped, its expiry pushed back, grown past the cap), replayed by another
// subject or on another request, or expired, is refused with -32602 and
// the data.reason that names why. (2026-07-28 requests have no session to
// replay a state in: another request is the other place it can go.)
func TestRequestStateAttacks(t *testing.T) {
	const ttl = 3 * time.Second
	// Each attack sends a few small requests: the ceiling is the heap's
	// headroom, not a bound on what a requestState may hold (64 KiB).
	const ceilingMiB = 32
	issuer := newJWTIssuer(t)
	f := newFixture(t, conformanceGrants+issuer.auth, "plugins/conformance", "plugins/examples/tools").
		withServerSetting(t, fmt.Sprintf("request_state_ttl = %q\n", ttl.String()))
	srv := f.start(t)
	alice, bob := issuer.token(t, "alice"), issuer.token(t, "bob")
	healthy := connectHTTP(t, srv.url, issuer.token(t, "healthy"))

	const tool, twin = "test_input_required_result_request_state", "test_input_required_result_tampered_state"
	answers := map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"ok": true}}}
	id := 0
	// retry sends the confirmation with a requestState as token.
	retry := func(token, method, name string, state any) map[string]any {
		id++
		params := map[string]any{"name": name, "inputResponses": answers, "requestState": state}
		if method == "tools/call" {
			params["arguments"] = map[string]any{}
		}
		return postModernAs(t, srv.url, token, id, method, name, params)
	}
	// issued returns a requestState the server issued to alice for tool.
	issued := func() string {
		t.Helper()
		id++
		resp := postModernAs(t, srv.url, alice, id, "tools/call", tool, map[string]any{"name": tool, "arguments": map[string]any{}})
		res, _ := resp["result"].(map[string]any)
		state, _ := res["requestState"].(string)
		if res["resultType"] != "input_required" || state == "" {
			t.Fatalf("want input_required with a requestState, got %v", resp)
		}
		return state
	}
	// Alice's own retry completes: what the attacks send is refused for
	// what they changed, not for being a retry.
	if resp := retry(alice, "tools/call", tool, issued()); !strings.Contains(fmt.Sprint(resp["result"]), "state-ok: confirmed=true") {
		t.Fatalf("alice's retry with her requestState: %v", resp)
	}

	// part splits a state into its four dot-separated parts.
	part := func(state string, i int) string { return strings.Split(state, ".")[i] }
	// flip flips the lowest bit of the first byte of part i of state (its
	// base64url decoded).
	flip := func(state string, i int) string {
		parts := strings.Split(state, ".")
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatal(err)
		}
		b[0] ^= 1
		parts[i] = base64.RawURLEncoding.EncodeToString(b)
		return strings.Join(parts, ".")
	}
	// rewrite replaces the payload of state with f of it, the signature
	// kept.
	rewrite := func(state string, f func(string) string) string {
		parts := strings.Split(state, ".")
		payload, err := base64.RawURLEncoding.DecodeString(parts[2])
		if err != nil {
			t.Fatal(err)
		}
		parts[2] = base64.RawURLEncoding.EncodeToString([]byte(f(string(payload))))
		return strings.Join(parts, ".")
	}
	const notIssued, badSignature = "invalid requestState: it is not a requestState this server issued",
		"invalid requestState: its signature does not verify with any key of this server"

	for _, a := range []struct {
		name, token, method, target string
		state                       func() any
		reason, message             string
	}{
		{"forged from random bytes", alice, "tools/call", tool, func() any { return rand.Text() + rand.Text() }, "tampered", notIssued},
		{"forged in the form of one, with a signature of its own", alice, "tools/call", tool, func() any {
			s := issued()
			return strings.Join([]string{"v1", part(s, 1), part(s, 2), base64.RawURLEncoding.EncodeToString([]byte(rand.Text()))}, ".")
		}, "tampered", badSignature},
		{"not a string", alice, "tools/call", tool, func() any { return map[string]any{"m": "tools/call"} }, "", "invalid params"},
		{"one bit of the payload flipped", alice, "tools/call", tool, func() any { return flip(issued(), 2) }, "tampered", badSignature},
		{"one bit of the signature flipped", alice, "tools/call", tool, func() any { return flip(issued(), 3) }, "tampered", badSignature},
		{"one bit of the key id flipped", alice, "tools/call", tool, func() any { return flip(issued(), 1) }, "tampered", badSignature},
		{"its answers rewritten", alice, "tools/call", tool, func() any {
			return rewrite(issued(), func(p string) string {
				return strings.Replace(p, `"q":{`, `"a":{"confirm":{"q":"x","r":{"action":"accept"}}},"q":{`, 1)
			})
		}, "tampered", badSignature},
		{"grown past 64 KiB", alice, "tools/call", tool, func() any { return issued() + strings.Repeat("A", 64<<10) }, "tampered",
			"invalid requestState: it has 65"},
		{"replayed by another subject", bob, "tools/call", tool, func() any { return issued() }, "other-user",
			"invalid requestState: it was issued to another user"},
		{"replayed on another tool", alice, "tools/call", twin, func() any { return issued() }, "other-arguments",
			"invalid requestState: it was issued for a tools/call request with other arguments"},
		{"replayed on another method", alice, "prompts/get", "test_input_required_result_prompt", func() any { return issued() }, "other-request",
			"invalid requestState: it was issued for tools/call, not prompts/get"},
		{"expired", alice, "tools/call", tool, func() any {
			s := issued()
			time.Sleep(ttl + 500*time.Millisecond) // kept: the state's expiry, checked when it is used, must pass
			return s
		}, "expired", "invalid requestState: it expired at "},
		{"expired, its expiry pushed back", alice, "tools/call", tool, func() any {
			s := issued()
			time.Sleep(ttl + 500*time.Millisecond) // kept: the state's expiry, checked when it is used, must pass
			return rewrite(s, func(p string) string {
				return strings.Replace(p, `"e":`, fmt.Sprintf(`"e":%d,"old":`, time.Now().Add(time.Hour).UnixMilli()), 1)
			})
		}, "tampered", badSignature},
	} {
		t.Run(a.name, func(t *testing.T) {
			s := besiege(t, srv, healthy)
			code, message, reason := rpcError(t, retry(a.token, a.method, a.target, a.state()))
			if code != -32602 || reason != a.reason || !strings.HasPrefix(message, a.message) {
				t.Errorf("got %v %q (reason %q), want -32602 %q… (reason %q)", code, message, reason, a.message, a.reason)
			}
			s.lift(t, ceilingMiB)
		})
	}
}

// clientFrom is an HTTP client whose connections come from ip, a loopback
// address of the attacker's own: the server's per-client limits count it
// apart from the healthy client, on 127.0.0.1.
func clientFrom(ip string) *http.Client {
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext, MaxIdleConnsPerHost: 64}}
}

// openListen opens a subscriptions/listen stream with client, asking for
// filter, and returns it once acknowledged; or, when the server refuses
// it, nil and the refusal (its status and body, or the error).
func openListen(t *testing.T, client *http.Client, url string, id int, filter map[string]any) (io.Closer, string) {
	t.Helper()
	resp, err := client.Do(modernRequest(t, url, "", id, "subscriptions/listen", "", map[string]any{"notifications": filter}))
	if err != nil {
		return nil, err.Error()
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return nil, fmt.Sprintf("%d %s", resp.StatusCode, body)
	}
	var ack map[string]any
	if err := readSSE(resp.Body, func(m map[string]any) bool { ack = m; return true }); err != nil || ack["method"] != "notifications/subscriptions/acknowledged" {
		resp.Body.Close()
		t.Fatalf("listen %d: first message %v (%v), want the acknowledgement", id, ack, err)
	}
	return resp.Body, ""
}

// TestListenAndDiscoverFloods: from one client address, more
// subscriptions/listen streams than [http] max_connections_per_client
// allows (the rest refused with the 503 naming it), streams whose params
// are as large as max_body_bytes allows (refused: a stream holds its
// params for as long as it lasts), streams at the cap on params (served),
// and thousands of server/discover requests as fast as the client can
// send them (each answered).
func TestListenAndDiscoverFloods(t *testing.T) {
	const perClient, maxBody = 64, 1 << 20
	f := newFixture(t, fmt.Sprintf("[http]\nmax_connections_per_client = %d\nmax_body_bytes = %d\n", perClient, maxBody), "plugins/examples/tools")
	srv := f.start(t)
	healthy := srv.session(t, nil)
	attacker := clientFrom("127.0.0.2")
	id := 0
	// listens opens n streams asking for filter and returns those
	// acknowledged and the refusals of the others.
	listens := func(t *testing.T, n int, filter map[string]any) (streams []io.Closer, refusals []string) {
		t.Helper()
		t.Cleanup(func() {
			for _, s := range streams {
				s.Close()
			}
		})
		for range n {
			id++
			if stream, refusal := openListen(t, attacker, srv.url, id, filter); stream != nil {
				streams = append(streams, stream)
			} else {
				refusals = append(refusals, refusal)
			}
		}
		return streams, refusals
	}
	// uris returns resource URIs that take about n bytes of JSON.
	uris := func(n int) []string {
		var out []string
		for size := 0; size < n; size += len(out[len(out)-1]) + 3 {
			out = append(out, fmt.Sprintf("file:///subscribed/%08d", len(out)))
		}
		return out
	}

	t.Run("listen streams beyond max_connections_per_client", func(t *testing.T) {
		// Sixty-four streams hold a few hundred KiB.
		const ceilingMiB = 32
		s := besiege(t, srv, healthy)
		streams, refusals := listens(t, perClient+16, map[string]any{"toolsListChanged": true})
		if len(streams) != perClient {
			t.Errorf("%d streams open, want %d", len(streams), perClient)
		}
		// The 503 is written as the connection is accepted, and the
		// connection closed: the client may see either first (the
		// request then fails).
		want := fmt.Sprintf(`503 {"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"too many connections from this client: [http] max_connections_per_client (%d) are open; close some, or retry later"}}`, perClient)
		for _, r := range refusals {
			if r != want && !strings.HasPrefix(r, "Post ") {
				t.Errorf("refusal %q, want %q or the connection closed", r, want)
			}
		}
		s.lift(t, ceilingMiB)
		for _, st := range streams {
			st.Close()
		}
		poll.Until(t, 30*time.Second, "a stream once the others closed", func() bool {
			stream, _ := openListen(t, attacker, srv.url, 0, map[string]any{"toolsListChanged": true})
			if stream != nil {
				stream.Close()
			}
			return stream != nil
		})
	})

	t.Run("listen streams with params of max_body_bytes", func(t *testing.T) {
		// Refused, they hold nothing; served, their 62 MiB of params held
		// three times over (the body, its params, the filter decoded)
		// would pass it.
		const ceilingMiB = 64
		s := besiege(t, srv, healthy)
		for name, filter := range map[string]map[string]any{
			"of resource URIs": {"resourceSubscriptions": uris(maxBody - 1024)},
			"of padding":       {"toolsListChanged": true, "padding": strings.Repeat(" ", maxBody-1024)},
		} {
			streams, refusals := listens(t, perClient/2-1, filter)
			if len(streams) > 0 {
				t.Errorf("%s: %d streams open, want none", name, len(streams))
			}
			for _, r := range refusals {
				if !strings.HasPrefix(r, `200 {"jsonrpc":"2.0","id":`) || !strings.Contains(r, `"error":{"code":-32602,"message":"invalid params: subscriptions/listen params of 104`) ||
					!strings.Contains(r, "bytes, more than the 16384 bytes a subscription may hold") {
					t.Errorf("%s: refusal %.300q, want -32602 naming the cap", name, r)
				}
			}
		}
		s.lift(t, ceilingMiB)
	})

	t.Run("listen streams at the cap on params", func(t *testing.T) {
		// 63 streams of 16 KiB params, held three times over: 3 MiB.
		const ceilingMiB = 32
		s := besiege(t, srv, healthy)
		streams, refusals := listens(t, perClient-1, map[string]any{"resourceSubscriptions": uris(15 << 10)})
		if len(streams) != perClient-1 {
			t.Errorf("%d streams open, want %d; refusals %.300q", len(streams), perClient-1, refusals)
		}
		s.lift(t, ceilingMiB)
	})

	t.Run("server/discover flood", func(t *testing.T) {
		const requests, workers, ceilingMiB = 5000, 32, 64
		s := besiege(t, srv, healthy)
		var answered, failed atomic.Int64
		var firstFailure atomic.Value
		work := make(chan int)
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for id := range work {
					var got string
					resp, err := attacker.Do(modernRequest(t, srv.url, "", id, "server/discover", "", map[string]any{}))
					if err == nil {
						body, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						if got = string(body); resp.StatusCode == http.StatusOK && strings.Contains(got, `"supportedVersions":["2026-07-28"`) {
							answered.Add(1)
							continue
						}
					}
					failed.Add(1)
					firstFailure.CompareAndSwap(nil, fmt.Sprintf("%v %.300q", err, got))
				}
			})
		}
		start := time.Now()
		for i := range requests {
			work <- 10000 + i
		}
		close(work)
		wg.Wait()
		t.Logf("%d server/discover requests in %v", requests, time.Since(start).Round(time.Millisecond))
		if answered.Load() != requests {
			t.Errorf("%d of %d answered; %d failed, first: %v", answered.Load(), requests, failed.Load(), firstFailure.Load())
		}
		s.lift(t, ceilingMiB)
	})
}

// TestModernTaskAttacks: with [auth] mode = "jwt", another subject's
// tasks/get, tasks/cancel and tasks/update of a task, and thousands of
// guessed task ids, are -32602 as for a task that does not exist, and
// leave the task as it was; task-creating calls beyond max_tasks_per_user
// and max_tasks are refused with the error naming the setting.
func TestModernTaskAttacks(t *testing.T) {
	const maxTasks, perUser = 12, 4
	// Each attack sends small requests, and the tasks' calls sleep in the
	// greedy plugin's two instances: the ceiling is two instances' memory
	// and the heap's headroom.
	const ceilingMiB = 64
	issuer := newJWTIssuer(t)
	f := newFixture(t, `
[plugins.greedy]
timeout = "60s"
max_instances = 2
max_queue = 64
task_support = { "sleep" = "optional" }
`+issuer.auth, "internal/testrig/testplugins/greedy", "plugins/examples/tools").
		withServerSetting(t, fmt.Sprintf("max_tasks = %d\nmax_tasks_per_user = %d\n", maxTasks, perUser))
	srv := f.start(t)
	healthy := connectHTTP(t, srv.url, issuer.token(t, "healthy"))
	tokens := map[string]string{}
	var mu sync.Mutex
	var id atomic.Int64
	// send sends a 2026-07-28 request declaring the tasks extension, as
	// subject, named by name.
	send := func(subject, method, name string, params map[string]any) map[string]any {
		mu.Lock()
		if tokens[subject] == "" {
			tokens[subject] = issuer.token(t, subject)
		}
		token := tokens[subject]
		mu.Unlock()
		params["_meta"] = map[string]any{"io.modelcontextprotocol/clientCapabilities": map[string]any{
			"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}}
		return postModernAs(t, srv.url, token, int(id.Add(1)), method, name, params)
	}
	// sleep calls greedy's sleep, long enough to become a task, as subject.
	sleep := func(subject string) map[string]any {
		return send(subject, "tools/call", "sleep", map[string]any{"name": "sleep", "arguments": map[string]any{"n": 20000}})
	}
	// taskOf returns the id of the task a call became, or "".
	taskOf := func(resp map[string]any) string {
		res, _ := resp["result"].(map[string]any)
		if res["resultType"] != "task" {
			return ""
		}
		return res["taskId"].(string)
	}
	status := func(subject, task string) any {
		res, _ := send(subject, "tasks/get", task, map[string]any{"taskId": task})["result"].(map[string]any)
		return res["status"]
	}
	const notFound = "Failed to retrieve task: Task not found"
	alices := taskOf(sleep("alice"))
	if alices == "" || status("alice", alices) != "working" {
		t.Fatalf("alice's call did not become a working task: %q", alices)
	}

	t.Run("another subject's task", func(t *testing.T) {
		s := besiege(t, srv, healthy)
		for method, params := range map[string]map[string]any{
			"tasks/get":    {},
			"tasks/cancel": {},
			"tasks/update": {"inputResponses": map[string]any{"x": map[string]any{"action": "accept"}}},
		} {
			params["taskId"] = alices
			if code, message, _ := rpcError(t, send("bob", method, alices, params)); code != -32602 || message != notFound {
				t.Errorf("bob's %s of alice's task: %v %q, want -32602 %q", method, code, message, notFound)
			}
		}
		if got := status("alice", alices); got != "working" {
			t.Errorf("alice's task is %v after bob's attempts, want working", got)
		}
		s.lift(t, ceilingMiB)
	})

	t.Run("guessed task ids", func(t *testing.T) {
		const guesses, workers = 3000, 16
		s := besiege(t, srv, healthy)
		methods := []string{"tasks/get", "tasks/cancel", "tasks/update"}
		var wrong atomic.Int64
		var firstWrong atomic.Value
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := w; i < guesses; i += workers {
					guess := base64.RawURLEncoding.EncodeToString([]byte(rand.Text())[:24])
					params := map[string]any{"taskId": guess}
					if methods[i%3] == "tasks/update" {
						params["inputResponses"] = map[string]any{}
					}
					resp := send("bob", methods[i%3], guess, params)
					if e, _ := resp["error"].(map[string]any); e == nil || e["code"] != float64(-32602) || e["message"] != notFound {
						wrong.Add(1)
						firstWrong.CompareAndSwap(nil, fmt.Sprint(resp))
					}
				}
			})
		}
		wg.Wait()
		if n := wrong.Load(); n > 0 {
			t.Errorf("%d of %d guesses not refused as unknown; first: %v", n, guesses, firstWrong.Load())
		}
		if got := status("alice", alices); got != "working" {
			t.Errorf("alice's task is %v after the guesses, want working", got)
		}
		s.lift(t, ceilingMiB)
	})

	// flood sends n task-creating calls at once, as subject(i) for the
	// i-th, and returns the tasks created and the refusals.
	flood := func(n int, subject func(int) string) (tasks, refusals []string) {
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				resp := sleep(subject(i))
				mu.Lock()
				defer mu.Unlock()
				if task := taskOf(resp); task != "" {
					tasks = append(tasks, task)
				} else {
					refusals = append(refusals, fmt.Sprint(resp["error"]))
				}
			})
		}
		wg.Wait()
		return tasks, refusals
	}

	t.Run("calls beyond max_tasks_per_user", func(t *testing.T) {
		s := besiege(t, srv, healthy)
		tasks, refusals := flood(perUser+8, func(int) string { return "carol" })
		want := fmt.Sprintf(`map[code:-32603 message:too many tasks: user "carol" holds %d tasks, the most [server] max_tasks_per_user allows; wait for some to end and expire]`, perUser)
		if len(tasks) != perUser || len(refusals) != 8 {
			t.Errorf("%d tasks, %d refused; want %d and 8", len(tasks), len(refusals), perUser)
		}
		for _, r := range refusals {
			if r != want {
				t.Errorf("refusal %s, want %s", r, want)
			}
		}
		s.lift(t, ceilingMiB)
	})

	t.Run("calls beyond max_tasks", func(t *testing.T) {
		// Alice's and carol's hold 5; three users of four calls each,
		// within max_tasks_per_user, fill the rest.
		s := besiege(t, srv, healthy)
		tasks, refusals := flood(3*perUser, func(i int) string { return fmt.Sprint("user", i%3) })
		want := fmt.Sprintf("map[code:-32603 message:server busy: the server holds %d tasks, the most [server] max_tasks allows; retry once some end and expire]", maxTasks)
		if len(tasks) != maxTasks-1-perUser {
			t.Errorf("%d tasks, want %d", len(tasks), maxTasks-1-perUser)
		}
		for _, r := range refusals {
			if r != want {
				t.Errorf("refusal %s, want %s", r, want)
			}
		}
		s.lift(t, ceilingMiB)
	})
}

// TestCredentialAttacks: the thief test plugin, granted one OAuth2 client
// and one keyring entry, asks get_access_token for the client granted to
// the victim plugin (another copy of it) at another provider, and
// get_keyring_secret for the victim's entries (one backed by its secret,
// one read from the OS keyring) and for an OS keyring entry granted to no
// plugin: it gets hyper-mcp's empty answers, the other provider hears
// nothing, the host logs why, and no value reaches any output or the log.
// A client_secret it sends is ignored: its provider takes only the
// operator's. Its own token reaches it but not its output, and neither
// its values nor its token reach the audit trail (which records its
// arguments), the metrics or the status page.
func TestCredentialAttacks(t *testing.T) {
	// Each attack is one small call: the ceiling is the heap's headroom.
	const ceilingMiB = 32
	const mine, victims, ops, root = "thief-own-value-0123", "victim-keyring-value-4567", "os-keyring-ops-value-89ab", "os-keyring-root-value-cdef"
	plugintest.SecretService(t, [3]string{"vault", "ops", ops}, [3]string{"vault", "root", root})
	own, others := newOAuthServer(t), newOAuthServer(t)
	t.Setenv("THIEF_KEYRING_VALUE", mine)
	t.Setenv("VICTIM_KEYRING_VALUE", victims)
	t.Setenv("CLIENT_SECRET", ccClientSecret)
	auditFile := filepath.Join(t.TempDir(), "audit.jsonl")
	f := newFixture(t, fmt.Sprintf(`
[telemetry]
audit = "file"
audit_file = %[4]q
[plugins.thief]
audit_arguments = true
host_functions = ["get_access_token", "get_keyring_secret"]
secrets = { mine = "env:THIEF_KEYRING_VALUE" }
keyring = [{ service = "thief", user = "me", secret = "mine" }]
[[plugins.thief.oauth2]]
token_url = "%[1]s/token"
client_id = %[3]q
client_secret = "env:CLIENT_SECRET"
scopes = ["read"]

[plugins.victim]
prefix = "victim_"
host_functions = ["get_access_token", "get_keyring_secret"]
secrets = { vault = "env:VICTIM_KEYRING_VALUE" }
keyring = [{ service = "vault", user = "victim", secret = "vault" }, { service = "vault", user = "ops" }]
[[plugins.victim.oauth2]]
token_url = "%[2]s/token"
client_id = %[3]q
client_secret = "env:CLIENT_SECRET"
scopes = ["read", "write"]
`, own.URL, others.URL, ccClientID, auditFile), "internal/testrig/testplugins/thief", "plugins/examples/tools")
	writePlugin(t, f, "victim.wasm", wasmOf(t, "internal/testrig/testplugins/thief"))
	srv := f.start(t)
	healthy, thief := srv.session(t, nil), srv.session(t, nil)
	ctx := ctxT(t)
	call := func(tool string, args map[string]any) string {
		t.Helper()
		got, isErr, err := hostileCall(ctx, thief, tool, args)
		if err != nil || isErr {
			t.Fatalf("%s %v: %v %v %q", tool, args, err, isErr, got)
		}
		return got
	}
	reversed := func(s string) string {
		b := []byte(s)
		slices.Reverse(b)
		return string(b)
	}
	othersClient := map[string]any{"client_id": ccClientID, "token_endpoint_url": others.URL + "/token"}

	// The victim uses its grants: a token of the other provider, cached
	// for it (redacted from its output), and its entries.
	if got := call("victim_token", othersClient); !strings.HasPrefix(got, `{"access_token":"[REDACTED]",`) {
		t.Fatalf("the victim's token: %s", got)
	}
	if got := call("victim_secret", map[string]any{"service": "vault", "user": "ops"}); got != fmt.Sprintf("%d bytes: %s", len(ops), reversed(ops)) {
		t.Fatalf("the victim's OS keyring entry: %q", got)
	}
	// The thief's own: its entry, and a token of its client, for which
	// the client_secret it sends is ignored (the provider refuses any but
	// the operator's).
	if got := call("secret", map[string]any{"service": "thief", "user": "me"}); got != fmt.Sprintf("%d bytes: %s", len(mine), reversed(mine)) {
		t.Fatalf("the thief's own entry: %q", got)
	}
	if got := call("token", map[string]any{"client_id": ccClientID, "token_endpoint_url": own.URL + "/token", "client_secret": "chosen-by-the-thief"}); !strings.HasPrefix(got, `{"access_token":"[REDACTED]",`) {
		t.Fatalf("the thief's own token, sending a client_secret of its own: %s", got)
	}

	for _, a := range []struct {
		name, tool string
		args       map[string]any
		want, log  string
	}{
		{"another plugin's OAuth2 client", "token", othersClient, "null",
			fmt.Sprintf(`get_access_token: the client \"%s\" of %s/token is not granted to plugin thief`, ccClientID, others.URL)},
		{"another plugin's OAuth2 client, with its secret", "token", map[string]any{"client_id": ccClientID, "token_endpoint_url": others.URL + "/token", "client_secret": ccClientSecret}, "null",
			fmt.Sprintf(`get_access_token: the client \"%s\" of %s/token is not granted to plugin thief`, ccClientID, others.URL)},
		{"credentials that do not decode", "token", map[string]any{"client_id": 7}, "null", "get_access_token: bad input"},
		{"another plugin's keyring entry backed by its secret", "secret", map[string]any{"service": "vault", "user": "victim"}, "0 bytes: ",
			`get_keyring_secret: the entry service \"vault\", user \"victim\" is not granted to plugin thief`},
		{"another plugin's OS keyring entry", "secret", map[string]any{"service": "vault", "user": "ops"}, "0 bytes: ",
			`get_keyring_secret: the entry service \"vault\", user \"ops\" is not granted to plugin thief`},
		{"an OS keyring entry granted to no plugin", "secret", map[string]any{"service": "vault", "user": "root"}, "0 bytes: ",
			`get_keyring_secret: the entry service \"vault\", user \"root\" is not granted to plugin thief`},
	} {
		t.Run(a.name, func(t *testing.T) {
			s := besiege(t, srv, healthy)
			if got := call(a.tool, a.args); got != a.want {
				t.Errorf("got %q, want %q", got, a.want)
			}
			poll.Until(t, 10*time.Second, "the refusal in the server log", func() bool {
				return logHas(srv.log.String(), `msg="host function failed"`, "plugin=thief", a.log)
			})
			s.lift(t, ceilingMiB)
		})
	}

	if got := others.tokenRequests(); len(got) != 1 {
		t.Errorf("the victim's provider got %d token requests %v, want the victim's one", len(got), got)
	}
	// A client that sends the token and the thief's keyring value back:
	// the audit trail records the arguments, redacted.
	call("secret", map[string]any{"service": "cc-1", "user": mine})
	var audit string
	poll.Until(t, 10*time.Second, "the audit record of the call with the token", func() bool {
		raw, _ := os.ReadFile(auditFile)
		audit = string(raw)
		return strings.Contains(audit, `"arguments":{"service":"[REDACTED]","user":"[REDACTED]"}`)
	})
	told := operatorViews(t, srv.url, "")
	told["the server log"], told["the audit trail"] = srv.log.String(), audit
	for where, text := range told {
		for _, value := range []string{ccClientSecret, "cc-1", mine, victims, ops, root} {
			if strings.Contains(text, value) || strings.Contains(text, reversed(value)) {
				t.Errorf("%s holds %q", where, value)
			}
		}
	}
}
