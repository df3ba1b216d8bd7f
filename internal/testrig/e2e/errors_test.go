package e2e

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/otlptest"
	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/mcphost/mcphost/internal/testrig/promtest"
	sdkjsonrpc "github.com/modelcontextprotocol/go-sdk/jsonrpc"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/encoding/protojson"
)

// documentedErrors reads the table of docs/errors.md: each error's name
// and its example, as a client sees it.
func documentedErrors(t *testing.T) map[string]string {
	t.Helper()
	root, err := plugintest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(root, "docs", "errors.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cells := strings.Split(sc.Text(), "|")
		if len(cells) != 4 || !strings.HasPrefix(strings.TrimSpace(cells[2]), "`") {
			continue
		}
		rows[strings.TrimSpace(cells[1])] = strings.Trim(strings.TrimSpace(cells[2]), "`")
	}
	return rows
}

// matches reports whether got is example, whole, each "…" in example
// standing for any text.
func matches(got, example string) bool {
	parts := strings.Split(example, "…")
	for i, part := range parts {
		parts[i] = regexp.QuoteMeta(part)
	}
	return regexp.MustCompile(`(?s)^` + strings.Join(parts, ".*") + `$`).MatchString(got)
}

// TestErrorsAsDocumented runs each row of docs/errors.md against a real
// server and checks that the client sees the documented message.
func TestErrorsAsDocumented(t *testing.T) {
	hostile, err := os.ReadFile(plugintest.Build(t, "internal/testrig/testplugins/hostile"))
	if err != nil {
		t.Fatal(err)
	}
	attacker, err := os.ReadFile(plugintest.Build(t, "internal/testrig/testplugins/attacker"))
	if err != nil {
		t.Fatal(err)
	}
	auditFile := filepath.Join(t.TempDir(), "audit.jsonl")
	collector := otlptest.HTTP(t)
	f := newFixture(t, `
[telemetry]
audit = "file"
audit_file = "`+auditFile+`"
traces = "otlp"
otlp_endpoint = "`+collector.URL+`"
[plugins.attacker]
breaker_failures = 0
allowed_hosts = ["localhost:1"]
audit_arguments = true
secrets = { api_key = "env:MCPHOST_TEST_API_KEY" }
[plugins.hostile]
memory_mib = 32
timeout = "2s"
max_output_bytes = 65536
breaker_failures = 0
[plugins.flaky]
breaker_failures = 2
breaker_backoff = "1m"
[plugins.limited]
calls_per_second = 1
[plugins.worker]
timeout = "3s"
max_instances = 1
max_queue = 0
`)
	for name, wasm := range map[string][]byte{"attacker": attacker, "hostile": hostile, "flaky": hostile, "limited": attacker, "worker": attacker} {
		writePlugin(t, f, name+".wasm", wasm)
	}
	srv := f.start(t, "MCPHOST_TEST_API_KEY="+testAPIKey, "OTEL_BSP_SCHEDULE_DELAY=50")
	cs := srv.session(t, nil)
	ctx := ctxT(t)
	call := func(tool string, args map[string]any) string {
		got, isErr, err := hostileCall(ctx, cs, tool, args)
		var rpcErr *sdkjsonrpc.Error // a JSON-RPC error: the client sees its message
		switch {
		case errors.As(err, &rpcErr):
			return rpcErr.Message
		case err != nil:
			return err.Error()
		}
		if !isErr {
			t.Errorf("%s answered %q, not an error", tool, got)
		}
		return got
	}
	limitedOK := 0 // calls of limited_ok that went through before the limit
	scenarios := map[string]func() string{
		"out of memory":                        func() string { return call("hog", nil) },
		"timeout":                              func() string { return call("spin", nil) },
		"output too large":                     func() string { return call("flood", map[string]any{"bytes": 1 << 20}) },
		"crash":                                func() string { return call("crash", nil) },
		"trap with the plugin's panic message": func() string { return call("panic", nil) },
		"queue full": func() string {
			var held sync.WaitGroup
			from := srv.log.Len()
			held.Go(func() { call("worker_hold", nil) })
			defer held.Wait()
			waitStarted(t, srv.log, from, "worker", "hold", 1)
			return call("worker_ok", nil)
		},
		"rate limited": func() string {
			for range 5 {
				if got, isErr, err := hostileCall(ctx, cs, "limited_ok", nil); err == nil && isErr {
					return got
				}
				limitedOK++
			}
			return "never limited"
		},
		"breaker open": func() string {
			call("flaky_crash", nil)
			call("flaky_crash", nil)
			return call("flaky_ok", nil)
		},
		"denied egress: host not granted": func() string { return call("fetch", map[string]any{"url": "http://example.com/"}) },
		"denied egress: loopback address": func() string { return call("fetch", map[string]any{"url": "http://localhost:1/"}) },
		"host function not granted":       func() string { return call("roots", nil) },
		"denied file access":              func() string { return call("read", map[string]any{"path": "/etc/passwd"}) },
		"denied config value":             func() string { return call("leak", map[string]any{"key": "HOME"}) },
		"denied env access":               func() string { return call("getenv", map[string]any{"key": "HOME"}) },
		"unknown tool":                    func() string { return call("nope", nil) },
	}
	rows := documentedErrors(t)
	for name := range scenarios {
		if _, ok := rows[name]; !ok {
			t.Errorf("docs/errors.md has no row %q", name)
		}
	}
	for name, example := range rows {
		t.Run(name, func(t *testing.T) {
			run, ok := scenarios[name]
			if !ok {
				t.Fatalf("no scenario for the documented error %q", name)
			}
			if got := run(); !matches(got, example) {
				t.Errorf("the client saw\n  %s\ndocs/errors.md says\n  %s", got, example)
			}
		})
	}
	wantErrorMetrics(t, strings.TrimSuffix(srv.url, "/mcp")+"/metrics", limitedOK)
	// A call whose arguments hold the granted secret's value: the audit
	// trail records them, redacted.
	call("fetch", map[string]any{"url": "http://example.com/?key=" + testAPIKey})
	wantErrorAudit(t, auditFile, limitedOK)
	// With a 2025-11-25 session ended and one open, every metric the
	// Grafana dashboard and the docs query is in /metrics.
	endSession20251125(t, srv.url)
	open20251125(t, srv.url)
	families, status := scrapeMetrics(t, strings.TrimSuffix(srv.url, "/mcp")+"/metrics", "")
	if status != http.StatusOK {
		t.Fatalf("GET /metrics: %d", status)
	}
	wantDashboardQueries(t, families)
	wantNoSecret(t, srv, collector)
}

// wantNoSecret checks that the attacker's granted secret, which its last
// call's URL carried, appears in none of what the server tells the
// operator: /metrics, /status.json, its log, its spans.
func wantNoSecret(t *testing.T, srv *server, collector *otlptest.Receiver) {
	t.Helper()
	for path, body := range operatorViews(t, srv.url, "") {
		if strings.Contains(body, testAPIKey) {
			t.Errorf("GET %s: the granted secret is in it", path)
		}
	}
	if strings.Contains(srv.log.String(), testAPIKey) {
		t.Error("the server's log holds the granted secret")
	}
	var spans int
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, rs := range collector.Received() {
			raw, _ := protojson.Marshal(rs)
			if strings.Contains(string(raw), testAPIKey) {
				t.Errorf("a span holds the granted secret: %s", raw)
			}
			if strings.Contains(string(raw), "example.com/?key=") || strings.Contains(string(raw), "[REDACTED]") {
				spans++
			}
		}
		if spans > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if spans == 0 {
		t.Error("no span of the call that carried the secret reached the collector: the check saw nothing")
	}
}

// operatorViews returns what the server at mcpURL shows the operator, by
// path: /metrics, /status.json and /status, asked with the bearer token
// ("" for none); an answer but 200 fails t.
func operatorViews(t *testing.T, mcpURL, token string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, path := range []string{"/metrics", "/status.json", "/status"} {
		req, _ := http.NewRequest(http.MethodGet, strings.TrimSuffix(mcpURL, "/mcp")+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s", path, resp.Status)
		}
		out[path] = string(body)
	}
	return out
}

// testAPIKey is the value of the attacker's granted secret api_key.
const testAPIKey = "sk-test-5f0c2a9e"

// wantErrorAudit checks the audit trail of TestErrorsAsDocumented's
// scenarios: a record per tool call, with its plugin, outcome and times,
// and one per denial; the granted secret appears in none.
func wantErrorAudit(t *testing.T, path string, limitedOK int) {
	t.Helper()
	var raw []byte
	// A request's record is written once its response is out: wait for
	// the last one's.
	poll.Until(t, 10*time.Second, "the audit record of the last call", func() bool {
		raw, _ = os.ReadFile(path)
		return strings.Contains(string(raw), `"arguments":{"url":"http://example.com/?key=[REDACTED]"}`)
	})
	if strings.Contains(string(raw), testAPIKey) {
		t.Errorf("the audit trail holds the granted secret's value:\n%s", raw)
	}
	calls := map[string]int{}   // plugin/item/outcome
	denials := map[string]int{} // plugin/reason
	var spin map[string]any
	for line := range strings.Lines(string(raw)) {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("an audit record is not JSON: %q", line)
		}
		key := fmt.Sprintf("%v/%v/%v", r["plugin"], r["item"], r["outcome"])
		switch r["msg"] {
		case "call":
			calls[key]++
			if r["item"] == "spin" {
				spin = r
			}
			if r["era"] == "" || r["transport"] != "http" || r["client"] != "hostile-test" {
				t.Errorf("a call record without its era, transport or client: %v", r)
			}
		case "denied":
			denials[fmt.Sprintf("%v/%v", r["plugin"], r["reason"])]++
		}
	}
	for k, n := range map[string]int{
		"hostile/hog/out_of_memory": 1, "hostile/spin/timeout": 1, "hostile/crash/trap": 1, "worker/worker_ok/queue_full": 1,
		"flaky/flaky_ok/breaker_open": 1, "limited/limited_ok/rate_limited": 1, "limited/limited_ok/ok": limitedOK,
		"attacker/fetch/tool_error": 3, "attacker/roots/tool_error": 1, "/nope/error": 1,
	} {
		if calls[k] != n {
			t.Errorf("call records %s: %d, want %d (all: %v)", k, calls[k], n, calls)
		}
	}
	if spin == nil || spin["run_ms"].(float64) < 1900 || spin["queue_ms"] == nil {
		t.Errorf("the record of the call that timed out after 2s: %v; want its run_ms and queue_ms", spin)
	}
	for k, n := range map[string]int{"attacker/egress": 3, "attacker/host_function": 1, "limited/rate_limited": 1} {
		if denials[k] != n {
			t.Errorf("denial records %s: %d, want %d (all: %v)", k, denials[k], n, denials)
		}
	}
}

// wantErrorMetrics checks what /metrics at url counted of the scenarios of
// TestErrorsAsDocumented, each run once: every plugin call by its outcome;
// each call that ran in the sandbox (a refusal by the rate limit or the
// breaker never does) in the run histogram; the denied host function and
// HTTP requests by grant rule. limitedOK is how many calls the rate limit
// let through.
func wantErrorMetrics(t *testing.T, url string, limitedOK int) {
	t.Helper()
	families := settledMetrics(t, url, "")
	// counts returns the value of each series of the family name that
	// keep keeps (a histogram's sample count), as a whole number.
	counts := func(name string, value func(*dto.Metric) float64, keep func(*dto.Metric) bool) map[string]uint64 {
		out := map[string]uint64{}
		for k, v := range promtest.Values(t, families, name, func(m *dto.Metric) float64 {
			if keep(m) {
				return value(m)
			}
			return 0
		}) {
			if v != 0 {
				out[k] = uint64(v)
			}
		}
		return out
	}
	toolCalls := func(m *dto.Metric) bool { return promtest.Label(m, "export") == "call_tool" }
	outcome := func(plugin, outcome string) string {
		return "export=call_tool,outcome=" + outcome + ",plugin=" + plugin
	}
	wantCounts(t, "plugin calls", counts("mcphost_plugin_call_duration_seconds", promtest.SampleCount, toolCalls), map[string]uint64{
		outcome("hostile", "out_of_memory"):    1,
		outcome("hostile", "timeout"):          1,
		outcome("hostile", "output_too_large"): 1,
		outcome("hostile", "trap"):             2, // crash, panic
		outcome("worker", "timeout"):           1, // hold, which holds on until its 3s timeout
		outcome("worker", "queue_full"):        1,
		outcome("limited", "ok"):               uint64(limitedOK),
		outcome("limited", "rate_limited"):     1,
		outcome("flaky", "trap"):               2,
		outcome("flaky", "breaker_open"):       1,
		// The attacker's PDK hands it each refusal as an error value,
		// which it returns as a tool error.
		outcome("attacker", "tool_error"): 6, // fetch twice, roots, read, leak, getenv
	})
	run := func(plugin string) string { return "export=call_tool,plugin=" + plugin }
	wantCounts(t, "calls run in the sandbox", counts("mcphost_plugin_call_run_seconds", promtest.SampleCount, toolCalls), map[string]uint64{
		run("hostile"): 5, run("worker"): 2, run("limited"): uint64(limitedOK), run("flaky"): 2, run("attacker"): 6,
	})
	denied := func(m *dto.Metric) bool { return promtest.Label(m, "outcome") == "denied" }
	wantCounts(t, "denied host function calls", counts("mcphost_plugin_host_function_calls_total", promtest.Counter, denied), map[string]uint64{
		"function=list_roots,outcome=denied,plugin=attacker": 1,
	})
	// What each plugin holds is read at the scrape: flaky's breaker is
	// open; hostile has none (breaker_failures = 0).
	breakers := promtest.Values(t, families, "mcphost_plugin_breaker_state", promtest.Gauge)
	if breakers["plugin=flaky,state=open"] != 1 || breakers["plugin=flaky,state=closed"] != 0 || breakers["plugin=hostile,state=closed"] != 0 ||
		len(breakers) != 3*3 { // closed, open, half_open of flaky, limited and worker
		t.Errorf("breaker states %v: want flaky's open and a series for each state of the three plugins with a breaker", breakers)
	}
	instances := map[string]bool{}
	for _, m := range families["mcphost_plugin_instances"].GetMetric() {
		instances[promtest.Label(m, "plugin")] = true
	}
	if len(instances) != 5 {
		t.Errorf("instances reported of %v, want the 5 plugins", slices.Sorted(maps.Keys(instances)))
	}
	// Each of the five plugins was added once, and made instances: the
	// first at its load, and others for the calls that trapped.
	wantCounts(t, "plugin changes", counts("mcphost_plugin_changes_total", promtest.Counter, func(*dto.Metric) bool { return true }), map[string]uint64{
		"change=added,plugin=attacker": 1, "change=added,plugin=hostile": 1, "change=added,plugin=flaky": 1,
		"change=added,plugin=limited": 1, "change=added,plugin=worker": 1,
	})
	instantiated := counts("mcphost_plugin_events_total", promtest.Counter, func(m *dto.Metric) bool { return promtest.Label(m, "event") == "instantiated" })
	if instantiated["event=instantiated,plugin=hostile"] < 5 || instantiated["event=instantiated,plugin=attacker"] < 1 {
		t.Errorf("instances made %v: want at least 5 of hostile (one, then one after each of its 4 failed calls) and 1 of the attacker", instantiated)
	}
	// A build on the compiler either compiled its module or loaded its
	// code from the compilation cache (which the e2e tests share: either
	// may be the case), and says which; one on the interpreter (a listing)
	// neither.
	var built uint64
	for _, n := range counts("mcphost_plugin_events_total", promtest.Counter, func(m *dto.Metric) bool { return promtest.Label(m, "event") == "built" }) {
		built += n
	}
	lookups := counts("mcphost_compilation_cache_lookups_total", promtest.Counter, func(*dto.Metric) bool { return true })
	if n := lookups["result=hit"] + lookups["result=miss"]; n == 0 || n > built {
		t.Errorf("compilation cache lookups %v for %d builds: want one for each build on the compiler", lookups, built)
	}
	wantCounts(t, "HTTP requests", counts("mcphost_plugin_http_requests_total", promtest.Counter, func(*dto.Metric) bool { return true }), map[string]uint64{
		"outcome=denied,plugin=attacker":                  1, // example.com: no rule grants it
		"outcome=denied,plugin=attacker,rule=localhost:1": 1, // granted by name, refused at its loopback address
	})
}

// wantCounts fails unless got has exactly want's series and counts.
func wantCounts(t *testing.T, what string, got, want map[string]uint64) {
	t.Helper()
	for k, n := range want {
		if n == 0 {
			delete(want, k)
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("%s (labels: count)\n  %v\nwant\n  %v", what, got, want)
	}
}
