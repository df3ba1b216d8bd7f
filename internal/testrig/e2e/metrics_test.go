package e2e

import (
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/mcphost/mcphost/internal/testrig/promtest"
	dto "github.com/prometheus/client_model/go"
)

// scrapeMetrics GETs url (a /metrics) with the bearer token and parses the
// answer with Prometheus's own text parser; it returns the status when it
// is not 200.
func scrapeMetrics(t *testing.T, url, token string) (map[string]*dto.MetricFamily, int) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctxT(t), "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, resp.StatusCode
	}
	return promtest.Parse(t, resp.Body), http.StatusOK
}

// settledMetrics scrapes url until two scrapes 100 ms apart give the same
// text: a request is counted once its response is sent, so a scrape just
// after a response may come before it is.
func settledMetrics(t *testing.T, url, token string) map[string]*dto.MetricFamily {
	t.Helper()
	var families map[string]*dto.MetricFamily
	last := ""
	poll.Within(5*time.Second, func() bool {
		var status int
		if families, status = scrapeMetrics(t, url, token); status != http.StatusOK {
			t.Fatalf("GET %s: %d", url, status)
		}
		now := fmt.Sprint(families["mcp_server_operation_duration_seconds"], families["mcphost_plugin_call_duration_seconds"])
		settled := now == last
		last = now
		if !settled {
			time.Sleep(100 * time.Millisecond)
		}
		return settled
	})
	return families
}

// toolCallSeries returns the sample count of each tools/call series of
// mcp_server_operation_duration_seconds, keyed by its sorted non-empty
// labels other than mcp_method_name.
func toolCallSeries(t *testing.T, families map[string]*dto.MetricFamily) map[string]uint64 {
	t.Helper()
	f := families["mcp_server_operation_duration_seconds"]
	if f == nil {
		t.Fatal("no mcp_server_operation_duration_seconds in /metrics")
	}
	out := map[string]uint64{}
	for _, m := range f.GetMetric() {
		if promtest.Label(m, "mcp_method_name") == "tools/call" {
			out[promtest.Labels(m, "mcp_method_name")] += m.GetHistogram().GetSampleCount()
		}
	}
	return out
}

// A server on a loopback address serves /metrics beside /mcp, behind the
// token of [telemetry] metrics_token_file; a scrape after a tool call that
// succeeds, one whose arguments fail the tool's schema (a tool error) and
// one of a tool that does not exist (the client's mistake, -32602) counts
// each once, labelled as the MCP semantic conventions say, and the one
// that reached the plugin as its call, ok; a 2025-11-25
// session ended with DELETE is counted in the session histogram.
func TestMetricsCountToolCallsByOutcome(t *testing.T) {
	token := filepath.Join(t.TempDir(), "metrics-token")
	if err := os.WriteFile(token, []byte("scrape-me\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, "[telemetry]\nmetrics_token_file = \""+token+"\"\n", "plugins/examples/tools")
	srv := f.start(t)
	metricsURL := strings.TrimSuffix(srv.url, "/mcp") + "/metrics"
	if _, status := scrapeMetrics(t, metricsURL, ""); status != http.StatusUnauthorized {
		t.Errorf("GET /metrics without the token: %d, want 401", status)
	}
	cs := srv.session(t, nil)
	ctx := ctxT(t)
	if got, isErr, err := hostileCall(ctx, cs, "hash", map[string]any{"text": "abc"}); err != nil || isErr || !strings.Contains(got, sha256abc) {
		t.Fatalf("hash: %q %v %v", got, isErr, err)
	}
	if _, isErr, err := hostileCall(ctx, cs, "hash", map[string]any{"text": 7}); err != nil || !isErr {
		t.Fatalf("hash with a number for text: isError %v, %v; want a tool error", isErr, err)
	}
	if _, _, err := hostileCall(ctx, cs, "no_such_tool", nil); err == nil {
		t.Fatal("calling a tool that does not exist succeeded")
	}
	version := cs.InitializeResult().ProtocolVersion
	common := []string{"gen_ai_operation_name=execute_tool", "mcp_protocol_version=" + version, "network_protocol_name=http", "network_transport=tcp"}
	key := func(more ...string) string {
		labels := append(slices.Clone(common), more...)
		slices.Sort(labels)
		return strings.Join(labels, ",")
	}
	want := map[string]uint64{
		key():                                  1,
		key("error_type=tool_error"):           1,
		key("rpc_response_status_code=-32602"): 1,
	}
	// A request is counted once its response is sent: the scrape may
	// come first.
	var families map[string]*dto.MetricFamily
	var got map[string]uint64
	poll.Within(5*time.Second, func() bool {
		var status int
		if families, status = scrapeMetrics(t, metricsURL, "scrape-me"); status != http.StatusOK {
			t.Fatalf("GET /metrics with the token: %d", status)
		}
		got = toolCallSeries(t, families)
		return maps.Equal(got, want)
	})
	if len(got) != len(want) {
		t.Errorf("tools/call series %v, want %v", got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("tools/call {%s}: %d, want %d (all: %v)", k, got[k], n, got)
		}
	}
	// Of the three, one reached the plugin: the host refused the others.
	calls := map[string]uint64{}
	for _, m := range families["mcphost_plugin_call_duration_seconds"].GetMetric() {
		calls[promtest.Labels(m)] += m.GetHistogram().GetSampleCount()
	}
	if want := map[string]uint64{"export=call_tool,outcome=ok,plugin=tools": 1}; !maps.Equal(calls, want) {
		t.Errorf("plugin calls %v, want %v", calls, want)
	}
	// A 2025-11-25 session (the client above is session-less, on
	// 2026-07-28) that ends with DELETE: mcp.server.session.duration counts
	// it, by its version, over tcp.
	endSession20251125(t, srv.url)
	sessionKey := "mcp_protocol_version=2025-11-25,network_protocol_name=http,network_transport=tcp"
	defer func() {
		if t.Failed() {
			families, _ := scrapeMetrics(t, metricsURL, "scrape-me")
			t.Logf("session series: %v", families["mcp_server_session_duration_seconds"])
		}
	}()
	poll.Until(t, 10*time.Second, "the ended session counted", func() bool {
		families, _ := scrapeMetrics(t, metricsURL, "scrape-me")
		f := families["mcp_server_session_duration_seconds"]
		for _, m := range f.GetMetric() {
			if promtest.Labels(m) == sessionKey && m.GetHistogram().GetSampleCount() == 1 {
				return true
			}
		}
		return false
	})
}

// endSession20251125 opens a 2025-11-25 session at url with raw requests
// and ends it with DELETE.
func endSession20251125(t *testing.T, url string) {
	t.Helper()
	session := open20251125(t, url)
	req, err := http.NewRequestWithContext(ctxT(t), "DELETE", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	del, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	del.Body.Close()
	if del.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE of the session: %d", del.StatusCode)
	}
}

// open20251125 opens a 2025-11-25 session at url with raw requests and
// returns its id.
func open20251125(t *testing.T, url string) string {
	t.Helper()
	post := func(body, session string) *http.Response {
		req, err := http.NewRequestWithContext(ctxT(t), "POST", url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	resp := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"metrics-test","version":"1"}}}`, "")
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize at 2025-11-25: %d, session %q", resp.StatusCode, session)
	}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, session)
	return session
}
