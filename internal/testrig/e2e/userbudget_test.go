package e2e

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/poll"
)

// initialize is an initialize request at 2025-11-25.
const initialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`

// trickleReader gives its bytes chunk at a time, a chunk every pause: a
// request body sent slowly. It fails once ctx ends.
type trickleReader struct {
	ctx   context.Context
	rest  []byte
	chunk int
	pause time.Duration
}

func (r *trickleReader) Read(p []byte) (int, error) {
	if len(r.rest) == 0 {
		return 0, io.EOF
	}
	select {
	case <-r.ctx.Done():
		return 0, r.ctx.Err()
	case <-time.After(r.pause):
	}
	n := copy(p[:min(len(p), r.chunk)], r.rest)
	r.rest = r.rest[n:]
	return n, nil
}

// trickle starts a POST as p of a ping padded with spaces to n bytes,
// sent 1 KiB every 20 ms (50 KiB/s), until the test ends. The status of
// the answer, if one comes first, is sent on the channel returned.
func (p *httpPeer) trickle(t *testing.T, n int) <-chan int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	body := []byte(ping + strings.Repeat(" ", n-len(ping)))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, &trickleReader{ctx: ctx, rest: body, chunk: 1 << 10, pause: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(n)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	req.Header.Set("Mcp-Session-Id", p.session)
	req.Header.Set("Authorization", "Bearer "+p.token)
	answered := make(chan int, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return // the test ended
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	return answered
}

// refused posts body as p and checks that it is refused with 503 naming
// setting.
func (p *httpPeer) refused(t *testing.T, body, setting string) {
	t.Helper()
	resp := p.post(t, body)
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(answer), setting) {
		t.Fatalf("%s beyond %s: %s %s, want 503 naming it", body, setting, resp.Status, answer)
	}
}

// TestOneUserFloodingDoesNotRefuseAnotherBehindTheSameAddress: with
// [auth] mode = "jwt", the per-client caps on sessions and on request
// bodies in flight count each user, not the address: alice and bob share
// one loopback address (a team behind a NAT), alice opens sessions up to
// max_sessions_per_client and keeps slow 1 MiB bodies in flight up to
// max_body_bytes_in_flight_per_client, and is refused beyond each with a
// 503 naming it; bob initializes and calls a tool throughout. A request
// without a token gets 401 before any budget is spent on it.
func TestOneUserFloodingDoesNotRefuseAnotherBehindTheSameAddress(t *testing.T) {
	issuer := newJWTIssuer(t)
	f := newFixture(t, issuer.auth+`
[http]
max_sessions_per_client = 3
max_body_bytes = 1048576
max_body_bytes_in_flight_per_client = 2097152
`, "plugins/examples/tools")
	url := f.serveHTTP(t)
	const (
		initialized  = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
		ping         = `{"jsonrpc":"2.0","id":2,"method":"ping"}`
		sessionCap   = "[http] max_sessions_per_client (3)"
		bodiesCap    = "[http] max_body_bytes_in_flight_per_client (2097152 bytes)"
		bodyBytes    = 1 << 20
		bodiesToHold = 2
	)
	open := func(token string) *httpPeer {
		t.Helper()
		p := &httpPeer{url: url, token: token}
		resp := p.post(t, initialize)
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if p.session = resp.Header.Get("Mcp-Session-Id"); resp.StatusCode != http.StatusOK || p.session == "" {
			t.Fatalf("initialize: %s %s", resp.Status, answer)
		}
		p.send(t, initialized)
		return p
	}
	calls := 0
	bobCalls := func(bob *httpPeer) {
		t.Helper()
		calls++
		res := resultOf(t, bob.request(t, 10+calls, "tools/call", map[string]any{"name": "hash", "arguments": map[string]any{"text": "abc"}}))
		if res["isError"] == true {
			t.Fatalf("bob's call %d: %v", calls, res)
		}
	}

	aliceToken := issuer.token(t, "alice")
	var alice *httpPeer
	for range 3 {
		alice = open(aliceToken)
	}
	(&httpPeer{url: url, token: aliceToken}).refused(t, initialize, sessionCap)
	bob := open(issuer.token(t, "bob"))
	bobCalls(bob)

	var held []<-chan int
	for range bodiesToHold {
		held = append(held, alice.trickle(t, bodyBytes))
	}
	var status string
	var answer []byte
	if !poll.Within(5*time.Second, func() bool {
		resp := alice.post(t, ping)
		answer, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		status = resp.Status
		return resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(string(answer), bodiesCap)
	}) {
		t.Fatalf("alice, with %d bodies of %d bytes in flight: %s %s, want 503 naming %s", bodiesToHold, bodyBytes, status, answer, bodiesCap)
	}

	// Bob, from the same address, is served while alice's bodies trickle
	// in and her caps are full.
	for range 5 {
		bobCalls(bob)
		time.Sleep(100 * time.Millisecond) // kept: bob's calls spread over the half second alice's bodies trickle
	}
	open(issuer.token(t, "bob"))
	for i, answered := range held {
		select {
		case status := <-answered:
			t.Fatalf("alice's slow body %d was answered %d before its end", i, status)
		default:
		}
	}
	alice.refused(t, ping, bodiesCap)

	resp := (&httpPeer{url: url}).post(t, ping)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a request without a token while alice floods: %s, want 401", resp.Status)
	}
}

// TestHoldersOfTheStaticTokenShareTheirAddressCaps: with [auth] mode =
// "bearer" every holder of the token has the subject "bearer", which names
// no user, so the per-client caps still count the address: two holders
// behind one address share max_sessions_per_client.
func TestHoldersOfTheStaticTokenShareTheirAddressCaps(t *testing.T) {
	const token = "e2e-secret-token-0123456789"
	t.Setenv("MCPHOST_E2E_TOKEN", token) // inherited by the server process
	url := newFixture(t, "[auth]\nmode = \"bearer\"\ntoken_env = \"MCPHOST_E2E_TOKEN\"\n[http]\nmax_sessions_per_client = 1\n").serveHTTP(t)
	resp := (&httpPeer{url: url, token: token}).post(t, initialize)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the first holder's initialize: %s", resp.Status)
	}
	(&httpPeer{url: url, token: token}).refused(t, initialize, "[http] max_sessions_per_client (1)")
}
