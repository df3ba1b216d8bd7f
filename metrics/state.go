package metrics

import (
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/pluginhost"
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

// Watch reads src at each scrape.
func (m *Metrics) Watch(src Sources) {
}
