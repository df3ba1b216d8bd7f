package metrics

import (
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/pluginhost"
	"github.com/prometheus/client_golang/prometheus"
)

// Sources are what the metrics read at each scrape (Metrics.Watch): what
// the server holds at that moment. A nil source is not read.
type Sources struct {
	// Server gives the open sessions and the tasks.
	Server func() host.Stats
	// Plugins gives what each plugin that serves holds.
	Plugins func() []pluginhost.PluginStats
	// MemoryBudget gives the sandbox's memory budget and what is held of
	// it, in bytes.
	MemoryBudget func() (limit, held uint64)
}

// Watch reads src at each scrape. Call it once.
func (m *Metrics) Watch(src Sources) {
	m.reg.MustRegister(stateCollector{src})
}

// The gauges of what the server holds.
var (
	sessionsDesc = prometheus.NewDesc("mcphost_sessions",
		"Open sessions, by transport and the protocol version they negotiated (empty before initialize); a 2026-07-28 request over HTTP opens none.",
		[]string{"mcp_protocol_version", "network_transport", "network_protocol_name"}, nil)
	tasksDesc = prometheus.NewDesc("mcphost_tasks",
		"Tasks the server holds, by status (working, input_required, completed, failed, cancelled).",
		[]string{"status"}, nil)
	instancesDesc = prometheus.NewDesc("mcphost_plugin_instances",
		"Instances of each plugin, by state: busy running a call, or idle.",
		[]string{"plugin", "state"}, nil)
	queuedDesc = prometheus.NewDesc("mcphost_plugin_queued_calls",
		"Calls of each plugin waiting in its queue for an instance.",
		[]string{"plugin"}, nil)
	heldDesc = prometheus.NewDesc("mcphost_plugin_memory_held_bytes",
		"Bytes of the memory budget each plugin holds: its instances' worst case and its compiled code.",
		[]string{"plugin"}, nil)
	breakerDesc = prometheus.NewDesc("mcphost_plugin_breaker_state",
		"The state of each plugin's circuit breaker: 1 for the state it is in (closed, open, half_open), 0 for the others; no series for a plugin without one.",
		[]string{"plugin", "state"}, nil)
	budgetDesc = prometheus.NewDesc("mcphost_memory_budget_bytes",
		"The memory budget all plugins' instances share ([server] memory_budget_mib).", nil, nil)
	budgetHeldDesc = prometheus.NewDesc("mcphost_memory_budget_held_bytes",
		"Bytes of the memory budget held by plugins' instances and compiled code.", nil, nil)
)

// breakerStates are the states a breaker reports, each a series.
var breakerStates = []string{pluginhost.BreakerClosed, pluginhost.BreakerOpen, pluginhost.BreakerHalfOpen}

// stateCollector reads its sources at each scrape.
type stateCollector struct{ src Sources }

func (c stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{sessionsDesc, tasksDesc, instancesDesc, queuedDesc, heldDesc, breakerDesc, budgetDesc, budgetHeldDesc} {
		ch <- d
	}
}

func (c stateCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	if c.src.Server != nil {
		s := c.src.Server()
		for kind, n := range s.Sessions {
			transport, protocol := host.Network(kind.Transport)
			gauge(sessionsDesc, float64(n), kind.ProtocolVersion, transport, protocol)
		}
		for status, n := range s.Tasks {
			gauge(tasksDesc, float64(n), status)
		}
	}
	if c.src.Plugins != nil {
		for _, p := range c.src.Plugins() {
			gauge(instancesDesc, float64(p.Busy), p.Name, "busy")
			gauge(instancesDesc, float64(p.Idle), p.Name, "idle")
			gauge(queuedDesc, float64(p.Waiting), p.Name)
			gauge(heldDesc, float64(p.MemoryHeld), p.Name)
			if p.Breaker == "" {
				continue
			}
			for _, state := range breakerStates {
				v := 0.0
				if state == p.Breaker {
					v = 1
				}
				gauge(breakerDesc, v, p.Name, state)
			}
		}
	}
	if c.src.MemoryBudget != nil {
		limit, held := c.src.MemoryBudget()
		gauge(budgetDesc, float64(limit))
		gauge(budgetHeldDesc, float64(held))
	}
}
