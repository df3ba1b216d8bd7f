package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/mcphost/mcphost/internal/testrig/redistest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// replicaFixture returns a fixture of the examples whose config shares
// sessions through the Redis r, with a requestState key file of its own:
// the servers started from it are replicas of one service.
func replicaFixture(t *testing.T, r *redistest.Server) fixture {
	t.Helper()
	keys := filepath.Join(t.TempDir(), "state-keys")
	if err := os.WriteFile(keys, []byte(strings.Repeat("k", 40)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, fmt.Sprintf("\n[state]\nbackend = \"redis\"\nurl = %q\npassword_file = %q\nprefix = \"e2e:\"\n", r.URL(), r.PasswordFile), examples...)
	return f.withServerSetting(t, fmt.Sprintf("request_state_key_file = %q\n", keys))
}

// roundRobin sends each request to the next of its replicas' /mcp, as a
// load balancer without stickiness does, counting what each served.
type roundRobin struct {
	mu     sync.Mutex
	hosts  []string // host:port of each replica
	next   int
	served []int
}

func newRoundRobin(t *testing.T, endpoints ...string) *roundRobin {
	rr := &roundRobin{served: make([]int, len(endpoints))}
	for _, e := range endpoints {
		u, err := url.Parse(e)
		if err != nil {
			t.Fatal(err)
		}
		rr.hosts = append(rr.hosts, u.Host)
	}
	return rr
}

func (rr *roundRobin) RoundTrip(r *http.Request) (*http.Response, error) {
	rr.mu.Lock()
	i := rr.next % len(rr.hosts)
	rr.next++
	rr.served[i]++
	rr.mu.Unlock()
	r = r.Clone(r.Context())
	r.URL.Host, r.Host = rr.hosts[i], rr.hosts[i]
	return http.DefaultTransport.RoundTrip(r)
}

// TestTheExamplesThroughTwoReplicasSharingRedis runs the examples' checks
// (lists over pages, calls, prompts, reads, completions) with the Go SDK's
// client over Streamable HTTP, every request sent to the other of two
// `mcphost serve` replicas that share their sessions in a real Redis: each
// replica serves a session the other initialized. The session's DELETE on
// one ends it on both.
func TestTheExamplesThroughTwoReplicasSharingRedis(t *testing.T) {
	r := redistest.Start(t)
	f := replicaFixture(t, r)
	rr := newRoundRobin(t, f.serveHTTP(t), f.serveHTTP(t))
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-replicas", Version: "1"}, nil)
	cs, err := client.Connect(ctxT(t), &mcp.StreamableClientTransport{Endpoint: "http://" + rr.hosts[0] + "/mcp", HTTPClient: &http.Client{Transport: rr}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	checkExamples(t, cs, "2025-11-25")
	id := cs.ID()
	if err := cs.Close(); err != nil {
		t.Errorf("closing the session (DELETE): %v", err)
	}
	rr.mu.Lock()
	served := append([]int(nil), rr.served...)
	rr.mu.Unlock()
	if served[0] < 5 || served[1] < 5 {
		t.Errorf("the replicas served %v requests; want several each", served)
	}
	for i, host := range rr.hosts {
		req, _ := http.NewRequest(http.MethodPost, "http://"+host+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("tools/list on replica %d after the DELETE: %d, want 404", i, resp.StatusCode)
		}
	}
}

// TestReadyzReportsTheSharedStateBackend asks /readyz of a replica while
// its Redis answers, is stopped and is back: it says so each time, and
// stays ready throughout, as every replica shares the outage.
func TestReadyzReportsTheSharedStateBackend(t *testing.T) {
	r := redistest.Start(t)
	base := strings.TrimSuffix(replicaFixture(t, r).serveHTTP(t), "/mcp")
	var got readyzCounts
	ask := func() (int, bool) {
		t.Helper()
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body struct {
			readyzCounts
			State *struct {
				Backend   string `json:"backend"`
				Reachable bool   `json:"reachable"`
			} `json:"state"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.State == nil || body.State.Backend != "redis" {
			t.Fatalf("/readyz: %v, %+v; want a state report of the redis backend", err, body)
		}
		got = body.readyzCounts
		return resp.StatusCode, body.State.Reachable
	}
	poll.Until(t, 60*time.Second, "the load to end", func() bool { code, _ := ask(); return code == http.StatusOK })
	for _, step := range []struct {
		name      string
		do        func()
		reachable bool
	}{
		{"with Redis up", func() {}, true},
		{"with Redis stopped", r.Stop, false},
		{"with Redis back", r.Restart, true},
	} {
		step.do()
		if code, reachable := ask(); code != http.StatusOK || reachable != step.reachable || !got.Ready {
			t.Errorf("/readyz %s: %d, reachable %v (%+v); want 200, reachable %v", step.name, code, reachable, got, step.reachable)
		}
	}
}
