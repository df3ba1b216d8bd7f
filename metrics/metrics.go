// Package metrics holds mcphost's Prometheus metrics and serves them at
// /metrics in the Prometheus text format. The MCP ones are those of
// OpenTelemetry's semantic conventions for MCP (docs/observability.md names
// the version), named and labelled as OpenTelemetry's Prometheus
// compatibility rules turn them into Prometheus names: dots become
// underscores and the unit a suffix, so mcp.server.operation.duration is
// mcp_server_operation_duration_seconds and mcp.method.name the label
// mcp_method_name.
package metrics

import (
	"context"
	"net/http"
	"runtime/debug"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sandbox"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Options configure Metrics.
type Options struct {
	// ItemNames puts the tool, prompt and resource a request named on the
	// operation metric (gen_ai.tool.name, gen_ai.prompt.name,
	// mcp.resource.uri). Off, they are left empty: a plugin can invent
	// names without end, and every name is a new series.
	ItemNames bool
	// Version is mcphost's version, for mcphost_build_info.
	Version string
}

// Metrics are mcphost's metrics, in a registry of their own. It is a
// host.Observer.
type Metrics struct {
	reg       *prometheus.Registry
	operation *prometheus.HistogramVec
	session   *prometheus.HistogramVec
	calls     *prometheus.HistogramVec
	wait      *prometheus.HistogramVec
	run       *prometheus.HistogramVec
	hostCalls *prometheus.CounterVec
	requests  *prometheus.CounterVec
	denials   *prometheus.CounterVec
	lifecycle *prometheus.CounterVec
	changes   *prometheus.CounterVec
	failures  *prometheus.CounterVec
	listings  *prometheus.CounterVec
	compiles  *prometheus.CounterVec
	evictions *prometheus.CounterVec
	itemNames bool
	// operations and callSeries are the series of operation and calls
	// seen so far (cache.go).
	operations seriesCache[[10]string]
	callSeries seriesCache[[3]string]
}

// durationBuckets are the bucket boundaries, in seconds, that the MCP
// semantic conventions advise for their duration histograms.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// callBuckets are the bucket boundaries, in seconds, of mcphost's own
// histograms of plugin calls, which often take a fraction of a
// millisecond: from 0.1 ms to the conventions' 300 s.
var callBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}

// operationLabels are the labels of mcp_server_operation_duration_seconds,
// the attributes of mcp.server.operation.duration.
var operationLabels = []string{
	"mcp_method_name", "error_type", "rpc_response_status_code", "gen_ai_operation_name",
	"mcp_protocol_version", "network_transport", "network_protocol_name",
	"gen_ai_tool_name", "gen_ai_prompt_name", "mcp_resource_uri",
}

// New returns the metrics, with the Go runtime's and the process's.
func New(opts Options) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), itemNames: opts.ItemNames}
	m.operation = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "mcp_server_operation_duration_seconds",
		Help:    "MCP request duration as observed on the server, from the time it was received until the result was sent (mcp.server.operation.duration).",
		Buckets: durationBuckets,
	}, operationLabels)
	m.session = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "mcp_server_session_duration_seconds",
		Help:    "The duration of the MCP session as observed on the MCP server (mcp.server.session.duration); sessions of 2026-07-28, which has none, are not counted.",
		Buckets: durationBuckets,
	}, []string{"mcp_protocol_version", "network_transport", "network_protocol_name"})
	m.calls = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "mcphost_plugin_call_duration_seconds",
		Help:    "Calls of a plugin's exports made for clients' requests, by plugin, export and outcome (ok, tool_error, timeout, trap, out_of_memory, output_too_large, queue_full, memory_budget, rate_limited, breaker_open, denied, ...), from the call to its answer.",
		Buckets: callBuckets,
	}, []string{"plugin", "export", "outcome"})
	m.wait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "mcphost_plugin_call_wait_seconds",
		Help:    "How long each call the sandbox ran waited before running: for the plugin's build, room in the memory budget, an instance.",
		Buckets: callBuckets,
	}, []string{"plugin"})
	m.run = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "mcphost_plugin_call_run_seconds",
		Help:    "How long each call the sandbox ran took on its instance, by plugin and export.",
		Buckets: callBuckets,
	}, []string{"plugin", "export"})
	m.hostCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcphost_plugin_host_function_calls_total",
		Help: "Calls plugins made of mcphost's host functions, by plugin, function and outcome: allowed, or denied when the plugin is not granted the function.",
	}, []string{"plugin", "function", "outcome"})
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcphost_plugin_http_requests_total",
		Help: "HTTP requests plugins made, by plugin, the allowed_hosts entry that granted the URL (empty when none did) and outcome: allowed, or denied by the plugin's grants.",
	}, []string{"plugin", "rule", "outcome"})
	m.lifecycle = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcphost_plugin_events_total",
		Help: "Events of each plugin's life: built (compiled, or loaded from the compilation cache), and with a cache folder compiled or loaded_from_cache, instantiated, unloaded_idle and unloaded_for_room (its compiled code and instances given back).",
	}, []string{"plugin", "event"})
	m.changes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcphost_plugin_changes_total",
		Help: "Changes of the plugins that serve: added, replaced (a hot swap), reconfigured, removed.",
	}, []string{"plugin", "change"})
	m.failures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcphost_plugin_load_failures_total",
		Help: "Versions of plugins that did not load, by reason: source, invalid_module, load_budget, start, other.",
	}, []string{"plugin", "reason"})
	m.listings = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcphost_listing_cache_lookups_total",
		Help: "Loads that looked for what a plugin listed in the listing cache, by result: hit (listed without running it) or miss.",
	}, []string{"result"})
	m.compiles = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcphost_compilation_cache_lookups_total",
		Help: "Builds of plugins that looked for their compiled code in the compilation cache (with a cache folder), by result: hit (loaded, from memory or the folder) or miss (compiled).",
	}, []string{"result"})
	m.evictions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcphost_cache_evictions_total",
		Help: "Entries removed from the cache folder, the least recently used, to keep it within [server] cache_max_mib, by cache: compilation, listing, validation, other.",
	}, []string{"cache"})
	for _, result := range []string{"hit", "miss"} {
		m.compiles.WithLabelValues(result)
	}
	for _, cache := range cacheKinds {
		m.evictions.WithLabelValues(cache)
	}
	m.denials = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mcphost_denials_total",
		Help: "What the server refused requests, by plugin and reason: hidden (an item the request's scopes or endpoint do not see), rate_limited, egress, host_function.",
	}, []string{"plugin", "reason"})
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "mcphost_build_info",
		Help: "Always 1: the version of mcphost and of the Go toolchain that built it.",
	}, []string{"version", "goversion"})
	goVersion := "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		goVersion = info.GoVersion
	}
	build.WithLabelValues(opts.Version, goVersion).Set(1)
	m.reg.MustRegister(m.operation, m.session, m.calls, m.wait, m.run, m.hostCalls, m.requests, m.denials, m.lifecycle, m.changes, m.failures, m.listings, m.compiles, m.evictions, build,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Served records a request the server answered (host.Observer).
func (m *Metrics) Served(op host.Operation) {
	var operation string
	if op.Method == "tools/call" {
		operation = "execute_tool"
	}
	transport, protocol := host.Network(op.Transport)
	var tool, prompt, uri string
	if m.itemNames && op.ErrorCode == 0 { // a refused name may be any the client invented
		tool, prompt, uri = op.Tool, op.Prompt, op.ResourceURI
	}
	key := [10]string{op.Method, op.ErrorType(), op.StatusCode(), operation, op.ProtocolVersion, transport, protocol, tool, prompt, uri}
	m.operations.observer(key, m.operation, operationSeriesLabels).Observe(op.Duration.Seconds())
}

// SessionEnded records a session that ended (host.Observer).
func (m *Metrics) SessionEnded(s host.EndedSession) {
	transport, protocol := host.Network(s.Transport)
	m.session.WithLabelValues(s.ProtocolVersion, transport, protocol).Observe(s.Duration.Seconds())
}

// PluginCalled records a plugin call made for a request (host.Observer).
// The plugin's name is a label: the operator installs plugins, a plugin
// cannot make more of them.
func (m *Metrics) PluginCalled(c host.PluginCall) {
	key := [3]string{c.Plugin, c.Export, c.Outcome}
	m.callSeries.observer(key, m.calls, callLabels).Observe(c.Duration.Seconds())
}

// Handler serves the metrics in the Prometheus text format: to every
// request when allow is nil, else to those it allows (a bearer token's
// check, auth.BearerTokenIs); others get 401 with a Bearer challenge.
func (m *Metrics) Handler(allow func(*http.Request) bool) http.Handler {
	h := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
	if allow == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !allow(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcphost metrics"`)
			http.Error(w, "a bearer token is required for /metrics", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Denied records something the server refused a request (host.Observer).
func (m *Metrics) Denied(d host.Denial) {
	m.denials.WithLabelValues(d.Plugin, d.Reason).Inc()
}

// Changed records a change of the plugins that serve
// (pluginhost.LoadObserver).
func (m *Metrics) Changed(plugin, change string) {
	m.changes.WithLabelValues(plugin, change).Inc()
}

// LoadFailed records a version of a plugin that did not load
// (pluginhost.LoadObserver).
func (m *Metrics) LoadFailed(plugin, reason string) {
	m.failures.WithLabelValues(plugin, reason).Inc()
}

// ListingCache records a look in the listing cache
// (pluginhost.LoadObserver).
func (m *Metrics) ListingCache(hit bool) {
	result := "miss"
	if hit {
		result = "hit"
	}
	m.listings.WithLabelValues(result).Inc()
}

// The caches of the cache folder, as CacheEvicted names them.
const (
	CacheCompilation = "compilation" // wazero's compiled code
	CacheListing     = "listing"     // what plugins listed, and copies of their modules
	CacheValidation  = "validation"  // the modules found valid
	CacheOther       = "other"
)

// cacheKinds are the caches CacheEvicted counts, each from the start.
var cacheKinds = []string{CacheCompilation, CacheListing, CacheValidation, CacheOther}

// CacheEvicted records entries removed from the cache folder's cache
// (CacheCompilation, ...) to keep it within its size.
func (m *Metrics) CacheEvicted(cache string, entries int) {
	m.evictions.WithLabelValues(cache).Add(float64(entries))
}

// Sandbox returns the sandbox Observer of the plugin name
// (sandbox.Options.Observer), which counts every call the sandbox runs,
// the plugin host's own (listings) included.
func (m *Metrics) Sandbox(plugin string) sandbox.Observer {
	this := prometheus.Labels{"plugin": plugin}
	return &pluginSandbox{
		wait:     m.wait.With(this),
		run:      m.run.MustCurryWith(this),
		hostCall: m.hostCalls.MustCurryWith(this),
		request:  m.requests.MustCurryWith(this),
		events:   m.lifecycle.MustCurryWith(this),
		compiles: m.compiles,
	}
}

// pluginSandbox records what one plugin's sandbox reports.
type pluginSandbox struct {
	wait                      prometheus.Observer
	run                       prometheus.ObserverVec
	runs                      seriesCache[string] // of run, by export
	hostCall, request, events *prometheus.CounterVec
	compiles                  *prometheus.CounterVec // Metrics.compiles
}

func (s *pluginSandbox) Happened(event string) {
	s.events.WithLabelValues(event).Inc()
	switch event {
	case sandbox.EventCompiled:
		s.compiles.WithLabelValues("miss").Inc()
	case sandbox.EventLoadedFromCache:
		s.compiles.WithLabelValues("hit").Inc()
	}
}

func (s *pluginSandbox) Called(_ context.Context, c sandbox.CallReport) {
	s.wait.Observe(c.Wait.Seconds())
	s.runs.observer(c.Export, s.run, exportLabels).Observe(c.Run.Seconds())
}

func (s *pluginSandbox) HostCalled(_ context.Context, function string, denied bool) {
	s.hostCall.WithLabelValues(function, allowedOrDenied(denied)).Inc()
}

func (s *pluginSandbox) Requested(_ context.Context, rule string, denied bool) {
	s.request.WithLabelValues(rule, allowedOrDenied(denied)).Inc()
}

// allowedOrDenied is the outcome label of a grant's check.
func allowedOrDenied(denied bool) string {
	if denied {
		return "denied"
	}
	return "allowed"
}
