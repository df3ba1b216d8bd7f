package metrics

import (
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testrig/promtest"
	"github.com/mcphost/mcphost/pluginhost"
	"github.com/mcphost/mcphost/sandbox"
	dto "github.com/prometheus/client_model/go"
)

// scrape fetches /metrics from h with the bearer token (none when empty)
// and parses it with Prometheus's own text parser.
func scrape(t *testing.T, h http.Handler, token string) map[string]*dto.MetricFamily {
	t.Helper()
	req := httptest.NewRequest("GET", "/metrics", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	return promtest.Parse(t, rec.Body)
}

// series returns the sample count of each series of a histogram family,
// by its labels (promtest.Labels).
func series(t *testing.T, families map[string]*dto.MetricFamily, name string) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	for k, v := range promtest.Values(t, families, name, promtest.SampleCount) {
		out[k] = uint64(v)
	}
	return out
}

// The operation histogram is mcp.server.operation.duration as the MCP
// semantic conventions define it: a tool call is execute_tool; a tool
// error and a JSON-RPC error are error_type, except the client's mistakes
// (-32700, -32600, -32601, -32602, -32002), which are only
// rpc_response_status_code; stdio is the pipe transport, HTTP tcp with
// protocol http. Tool, prompt and resource names stay off unless asked
// for, and even then off a request that failed: a client may name what
// it likes.
func TestOperationDurationFollowsTheConventions(t *testing.T) {
	ops := []host.Operation{
		{Method: "tools/call", Tool: "greet", ProtocolVersion: "2025-11-25", Transport: host.TransportStdio, Duration: 3 * time.Millisecond},
		{Method: "tools/call", Tool: "greet", ProtocolVersion: "2025-11-25", Transport: host.TransportStdio, Duration: 40 * time.Millisecond},
		{Method: "tools/call", Tool: "greet", ProtocolVersion: "2025-11-25", Transport: host.TransportStdio, ToolError: true},
		{Method: "tools/call", Tool: "nope", ProtocolVersion: "2026-07-28", Transport: host.TransportHTTP, ErrorCode: host.CodeInvalidParams},
		{Method: "resources/read", ResourceURI: "memo://a", ProtocolVersion: "2025-06-18", Transport: host.TransportHTTP, ErrorCode: host.CodeResourceNotFound},
		{Method: "prompts/get", Prompt: "welcome", ProtocolVersion: "2025-06-18", Transport: host.TransportHTTP, ErrorCode: host.CodeInternalError},
	}
	for _, itemNames := range []bool{false, true} {
		m := New(Options{ItemNames: itemNames, Version: "v9.9.9"})
		for _, op := range ops {
			m.Served(op)
		}
		families := scrape(t, m.Handler(nil), "")
		got := series(t, families, "mcp_server_operation_duration_seconds")
		// key is a series' labels, pairs of name and value, as series
		// gives them; an item name only when asked for.
		key := func(item string, pairs ...string) string {
			if itemNames && item != "" {
				pairs = append(pairs, strings.SplitN(item, "=", 2)...)
			}
			var kv []string
			for i := 0; i < len(pairs); i += 2 {
				kv = append(kv, pairs[i]+"="+pairs[i+1])
			}
			slices.Sort(kv)
			return strings.Join(kv, ",")
		}
		overStdio := []string{"mcp_protocol_version", "2025-11-25", "network_transport", "pipe"}
		overHTTP := []string{"network_transport", "tcp", "network_protocol_name", "http"}
		want := map[string]uint64{
			key("gen_ai_tool_name=greet", append([]string{"mcp_method_name", "tools/call", "gen_ai_operation_name", "execute_tool"}, overStdio...)...):                                                      2,
			key("gen_ai_tool_name=greet", append([]string{"mcp_method_name", "tools/call", "gen_ai_operation_name", "execute_tool", "error_type", "tool_error"}, overStdio...)...):                          1,
			key("", append([]string{"mcp_method_name", "tools/call", "gen_ai_operation_name", "execute_tool", "rpc_response_status_code", "-32602", "mcp_protocol_version", "2026-07-28"}, overHTTP...)...): 1,
			key("", append([]string{"mcp_method_name", "resources/read", "rpc_response_status_code", "-32002", "mcp_protocol_version", "2025-06-18"}, overHTTP...)...):                                      1,
			key("", append([]string{"mcp_method_name", "prompts/get", "error_type", "-32603", "rpc_response_status_code", "-32603", "mcp_protocol_version", "2025-06-18"}, overHTTP...)...):                 1,
		}
		t.Logf("item names %v", itemNames)
		wantSeries(t, got, want)
		// The advised buckets, in seconds: the 3 ms call falls in the
		// first (10 ms), the 40 ms one in the third (50 ms).
		for _, s := range families["mcp_server_operation_duration_seconds"].GetMetric() {
			if s.GetHistogram().GetSampleCount() != 2 {
				continue
			}
			b := s.GetHistogram().GetBucket()
			var bounds []float64
			for _, x := range b {
				bounds = append(bounds, x.GetUpperBound())
			}
			if want := append(slices.Clone(durationBuckets), math.Inf(1)); !slices.Equal(bounds, want) {
				t.Fatalf("bucket bounds %v, want the conventions' %v", bounds, want)
			}
			if b[0].GetCumulativeCount() != 1 || b[2].GetCumulativeCount() != 2 {
				t.Errorf("3 ms and 40 ms: cumulative counts %d (<= 10 ms) and %d (<= 50 ms), want 1 and 2", b[0].GetCumulativeCount(), b[2].GetCumulativeCount())
			}
		}
		info := families["mcphost_build_info"]
		if info == nil || len(info.GetMetric()) != 1 || info.GetMetric()[0].GetGauge().GetValue() != 1 {
			t.Errorf("mcphost_build_info: %v", info)
		}
	}
}

// With a token, /metrics answers only requests that bear it.
func TestMetricsNeedTheTokenWhenOneIsSet(t *testing.T) {
	h := New(Options{}).Handler(func(r *http.Request) bool { return r.Header.Get("Authorization") == "Bearer s3cret" })
	for _, auth := range []string{"", "Bearer wrong", "s3cret", "Basic s3cret"} {
		req := httptest.NewRequest("GET", "/metrics", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized || !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("Authorization %q: %d %q, want 401 with a Bearer challenge", auth, rec.Code, rec.Header().Get("WWW-Authenticate"))
		}
	}
	if families := scrape(t, h, "s3cret"); families["mcphost_build_info"] == nil {
		t.Error("the scrape with the token lacks mcphost_build_info")
	}
}

// The session histogram is mcp.server.session.duration: by version and
// transport, in the conventions' buckets.
func TestSessionDurationFollowsTheConventions(t *testing.T) {
	m := New(Options{})
	m.SessionEnded(host.EndedSession{Transport: host.TransportHTTP, ProtocolVersion: "2025-11-25", Duration: 90 * time.Second})
	m.SessionEnded(host.EndedSession{Transport: host.TransportHTTP, ProtocolVersion: "2025-11-25", Duration: time.Second})
	m.SessionEnded(host.EndedSession{Transport: host.TransportStdio, ProtocolVersion: "2025-06-18", Duration: time.Hour})
	got := series(t, scrape(t, m.Handler(nil), ""), "mcp_server_session_duration_seconds")
	want := map[string]uint64{
		"mcp_protocol_version=2025-11-25,network_protocol_name=http,network_transport=tcp": 2,
		"mcp_protocol_version=2025-06-18,network_transport=pipe":                           1,
	}
	wantSeries(t, got, want)
}

// Plugin calls are counted by plugin, export and outcome.
func TestPluginCallsByOutcome(t *testing.T) {
	m := New(Options{})
	for _, c := range []host.PluginCall{
		{Plugin: "notes", Export: "call_tool", Outcome: host.OutcomeOK, Duration: time.Millisecond},
		{Plugin: "notes", Export: "call_tool", Outcome: host.OutcomeOK, Duration: 2 * time.Millisecond},
		{Plugin: "notes", Export: "call_tool", Outcome: "timeout", Duration: 30 * time.Second},
		{Plugin: "files", Export: "read_resource", Outcome: "memory_budget"},
	} {
		m.PluginCalled(c)
	}
	got := series(t, scrape(t, m.Handler(nil), ""), "mcphost_plugin_call_duration_seconds")
	want := map[string]uint64{
		"export=call_tool,outcome=ok,plugin=notes":                2,
		"export=call_tool,outcome=timeout,plugin=notes":           1,
		"export=read_resource,outcome=memory_budget,plugin=files": 1,
	}
	wantSeries(t, got, want)
}

// wantSeries fails unless got has exactly the series of want, with their
// sample counts.
func wantSeries(t *testing.T, got, want map[string]uint64) {
	t.Helper()
	if !maps.Equal(got, want) {
		t.Errorf("series (labels: samples)\n  %v\nwant\n  %v", got, want)
	}
}

// counters returns the value of each series of a counter family.
func counters(t *testing.T, families map[string]*dto.MetricFamily, name string) map[string]float64 {
	t.Helper()
	return promtest.Values(t, families, name, promtest.Counter)
}

// A plugin's sandbox reports each call's wait for an instance apart from
// its run, in buckets fine enough for calls of a fraction of a
// millisecond; its host function calls by function, allowed or denied;
// its HTTP requests by the allowed_hosts entry that granted them, or
// denied.
func TestSandboxReportsWaitRunHostCallsAndEgress(t *testing.T) {
	m := New(Options{})
	notes := m.Sandbox("notes")
	notes.Called(t.Context(), sandbox.CallReport{Export: "call_tool", Wait: 2 * time.Millisecond, Run: 300 * time.Microsecond})
	notes.Called(t.Context(), sandbox.CallReport{Export: "call_tool", Run: 50 * time.Millisecond, Kind: sandbox.KindTimeout})
	notes.Called(t.Context(), sandbox.CallReport{Export: "list_tools", Run: time.Millisecond})
	notes.HostCalled(t.Context(), "create_message", false)
	notes.HostCalled(t.Context(), "create_message", false)
	notes.HostCalled(t.Context(), "list_roots", true)
	notes.Requested(t.Context(), "*.example.com", false)
	notes.Requested(t.Context(), "", true)
	m.Sandbox("files").Requested(t.Context(), "*.example.com", false)

	families := scrape(t, m.Handler(nil), "")
	// A plugin's wait series exists from its load, before any call.
	wantSeries(t, series(t, families, "mcphost_plugin_call_wait_seconds"), map[string]uint64{"plugin=notes": 3, "plugin=files": 0})
	wantSeries(t, series(t, families, "mcphost_plugin_call_run_seconds"), map[string]uint64{
		"export=call_tool,plugin=notes":  2,
		"export=list_tools,plugin=notes": 1,
	})
	for _, s := range families["mcphost_plugin_call_run_seconds"].GetMetric() {
		if promtest.Label(s, "export") != "call_tool" {
			continue
		}
		for _, b := range s.GetHistogram().GetBucket() {
			if b.GetUpperBound() == 0.0005 && b.GetCumulativeCount() != 1 {
				t.Errorf("the 300µs run is not counted in the bucket up to 0.5 ms: %d", b.GetCumulativeCount())
			}
		}
	}
	gotHost := counters(t, families, "mcphost_plugin_host_function_calls_total")
	wantHost := map[string]float64{
		"function=create_message,outcome=allowed,plugin=notes": 2,
		"function=list_roots,outcome=denied,plugin=notes":      1,
	}
	if !maps.Equal(gotHost, wantHost) {
		t.Errorf("host function calls %v, want %v", gotHost, wantHost)
	}
	gotHTTP := counters(t, families, "mcphost_plugin_http_requests_total")
	wantHTTP := map[string]float64{
		"outcome=allowed,plugin=notes,rule=*.example.com": 1,
		"outcome=denied,plugin=notes":                     1,
		"outcome=allowed,plugin=files,rule=*.example.com": 1,
	}
	if !maps.Equal(gotHTTP, wantHTTP) {
		t.Errorf("HTTP requests %v, want %v", gotHTTP, wantHTTP)
	}
}

// gauges returns the value of each series of a gauge family.
func gauges(t *testing.T, families map[string]*dto.MetricFamily, name string) map[string]float64 {
	t.Helper()
	return promtest.Values(t, families, name, promtest.Gauge)
}

// What the server holds is read at each scrape: open sessions by
// transport and version, tasks by status, each plugin's instances, queue,
// memory and breaker (one series per state, 1 for the current one), and
// the memory budget.
func TestWatchedStateIsReadAtEachScrape(t *testing.T) {
	m := New(Options{})
	sessions := 2
	m.Watch(Sources{
		Server: func() host.Stats {
			return host.Stats{
				Sessions: map[host.SessionKind]int{
					{Transport: host.TransportHTTP, ProtocolVersion: "2025-11-25"}:  sessions,
					{Transport: host.TransportStdio, ProtocolVersion: "2025-06-18"}: 1,
				},
				Tasks: map[string]int{"working": 3, "completed": 1},
			}
		},
		Plugins: func() []pluginhost.PluginStats {
			return []pluginhost.PluginStats{
				{Name: "notes", Stats: sandbox.Stats{Busy: 2, Idle: 1, Waiting: 4, MemoryHeld: 64 << 20}, Breaker: pluginhost.BreakerOpen},
				{Name: "files", Stats: sandbox.Stats{Idle: 1, MemoryHeld: 32 << 20}},
			}
		},
		MemoryBudget: func() (limit, held uint64) { return 1 << 30, 96 << 20 },
	})
	families := scrape(t, m.Handler(nil), "")
	for name, want := range map[string]map[string]float64{
		"mcphost_sessions": {
			"mcp_protocol_version=2025-11-25,network_protocol_name=http,network_transport=tcp": 2,
			"mcp_protocol_version=2025-06-18,network_transport=pipe":                           1,
		},
		"mcphost_tasks": {"status=working": 3, "status=completed": 1},
		"mcphost_plugin_instances": {
			"plugin=notes,state=busy": 2, "plugin=notes,state=idle": 1,
			"plugin=files,state=busy": 0, "plugin=files,state=idle": 1,
		},
		"mcphost_plugin_queued_calls":      {"plugin=notes": 4, "plugin=files": 0},
		"mcphost_plugin_memory_held_bytes": {"plugin=notes": 64 << 20, "plugin=files": 32 << 20},
		"mcphost_plugin_breaker_state": {
			"plugin=notes,state=closed": 0, "plugin=notes,state=open": 1, "plugin=notes,state=half_open": 0,
		},
		"mcphost_memory_budget_bytes":      {"": 1 << 30},
		"mcphost_memory_budget_held_bytes": {"": 96 << 20},
	} {
		if got := gauges(t, families, name); !maps.Equal(got, want) {
			t.Errorf("%s %v, want %v", name, got, want)
		}
	}
	sessions = 5
	got := gauges(t, scrape(t, m.Handler(nil), ""), "mcphost_sessions")
	if n := got["mcp_protocol_version=2025-11-25,network_protocol_name=http,network_transport=tcp"]; n != 5 {
		t.Errorf("the next scrape reads 2025-11-25 sessions over HTTP as %v, want 5", n)
	}
}

// Denials are counted by plugin and reason.
func TestDenialsByPluginAndReason(t *testing.T) {
	m := New(Options{})
	m.Denied(host.Denial{Reason: host.DeniedEgress, Plugin: "attacker"})
	m.Denied(host.Denial{Reason: host.DeniedEgress, Plugin: "attacker"})
	m.Denied(host.Denial{Reason: host.DeniedHidden, Plugin: "admin", Subject: "bob"})
	got := counters(t, scrape(t, m.Handler(nil), ""), "mcphost_denials_total")
	if want := map[string]float64{"plugin=attacker,reason=egress": 2, "plugin=admin,reason=hidden": 1}; !maps.Equal(got, want) {
		t.Errorf("denials %v, want %v", got, want)
	}
}

// Each plugin's life events are counted.
func TestPluginEventsAreCounted(t *testing.T) {
	m := New(Options{})
	notes := m.Sandbox("notes")
	notes.Happened(sandbox.EventBuilt)
	notes.Happened(sandbox.EventInstantiated)
	notes.Happened(sandbox.EventInstantiated)
	notes.Happened(sandbox.EventUnloadedIdle)
	got := counters(t, scrape(t, m.Handler(nil), ""), "mcphost_plugin_events_total")
	want := map[string]float64{"event=built,plugin=notes": 1, "event=instantiated,plugin=notes": 2, "event=unloaded_idle,plugin=notes": 1}
	if !maps.Equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
}

// Plugin changes, failed loads and listing cache lookups are counted.
func TestLoadsAreCounted(t *testing.T) {
	m := New(Options{})
	m.Changed("notes", "added")
	m.Changed("notes", "replaced")
	m.LoadFailed("broken", "invalid_module")
	m.ListingCache(true)
	m.ListingCache(false)
	m.ListingCache(true)
	families := scrape(t, m.Handler(nil), "")
	for name, want := range map[string]map[string]float64{
		"mcphost_plugin_changes_total":        {"change=added,plugin=notes": 1, "change=replaced,plugin=notes": 1},
		"mcphost_plugin_load_failures_total":  {"plugin=broken,reason=invalid_module": 1},
		"mcphost_listing_cache_lookups_total": {"result=hit": 2, "result=miss": 1},
	} {
		if got := counters(t, families, name); !maps.Equal(got, want) {
			t.Errorf("%s %v, want %v", name, got, want)
		}
	}
}

// Builds that compiled or loaded their code are counted as compilation
// cache misses and hits, both from the start; entries pruned from the
// cache folder are counted by cache.
func TestCompilationCacheLookupsAndEvictionsAreCounted(t *testing.T) {
	m := New(Options{})
	families := scrape(t, m.Handler(nil), "")
	if got, want := counters(t, families, "mcphost_compilation_cache_lookups_total"), map[string]float64{"result=hit": 0, "result=miss": 0}; !maps.Equal(got, want) {
		t.Errorf("before any build: %v, want %v", got, want)
	}
	notes, memo := m.Sandbox("notes"), m.Sandbox("memo")
	notes.Happened(sandbox.EventBuilt)
	notes.Happened(sandbox.EventCompiled)
	memo.Happened(sandbox.EventBuilt)
	memo.Happened(sandbox.EventLoadedFromCache)
	notes.Happened(sandbox.EventBuilt)
	notes.Happened(sandbox.EventLoadedFromCache)
	m.CacheEvicted(CacheCompilation, 3)
	m.CacheEvicted(CacheListing, 1)
	families = scrape(t, m.Handler(nil), "")
	for name, want := range map[string]map[string]float64{
		"mcphost_compilation_cache_lookups_total": {"result=hit": 2, "result=miss": 1},
		"mcphost_cache_evictions_total":           {"cache=compilation": 3, "cache=listing": 1, "cache=validation": 0, "cache=other": 0},
	} {
		if got := counters(t, families, name); !maps.Equal(got, want) {
			t.Errorf("%s %v, want %v", name, got, want)
		}
	}
}

// Recording a request, its plugin call and the call's wait and run
// allocates nothing once their series exist: the metrics' part of a
// call's cost stays out of the garbage collector's way.
func TestRecordingAllocatesNothing(t *testing.T) {
	m := New(Options{})
	notes := m.Sandbox("notes")
	op := host.Operation{Method: "tools/call", Tool: "greet", ProtocolVersion: "2025-11-25", Transport: host.TransportStdio, Duration: time.Millisecond}
	pc := host.PluginCall{Plugin: "notes", Export: "call_tool", Outcome: host.OutcomeOK, Duration: time.Millisecond}
	report := sandbox.CallReport{Export: "call_tool", Wait: time.Microsecond, Run: time.Millisecond}
	ctx := t.Context()
	record := func() {
		m.Served(op)
		m.PluginCalled(pc)
		notes.Called(ctx, report)
	}
	record()
	if n := testing.AllocsPerRun(1000, record); n != 0 {
		t.Errorf("%v allocations a call, want 0", n)
	}
}

// The series cache gives each tuple of labels its own series, whether a
// sample repeats the last tuple (its fast path) or not, also when
// goroutines interleave samples of different tuples.
func TestSeriesCacheKeepsEachSeriesApart(t *testing.T) {
	m := New(Options{})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 500 {
				outcome := host.OutcomeOK
				if (i+g)%3 == 0 {
					outcome = host.OutcomeToolError
				}
				m.PluginCalled(host.PluginCall{Plugin: "p", Export: "call_tool", Outcome: outcome, Duration: time.Millisecond})
			}
		})
	}
	wg.Wait()
	got := series(t, scrape(t, m.Handler(nil), ""), "mcphost_plugin_call_duration_seconds")
	want := map[string]uint64{"export=call_tool,outcome=ok,plugin=p": 1333, "export=call_tool,outcome=tool_error,plugin=p": 667}
	if !maps.Equal(got, want) {
		t.Errorf("series %v, want %v", got, want)
	}
}
