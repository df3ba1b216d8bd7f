package pluginhost

import "github.com/mcphost/mcphost/sandbox"

// PluginStats is what a plugin that serves holds at a moment
// (Reloader.PluginStats).
type PluginStats struct {
	Name string
	// Stats are its sandbox's: instances, queue, memory held.
	sandbox.Stats
	// Breaker is the state of its circuit breaker (BreakerClosed,
	// BreakerOpen, BreakerHalfOpen); "" when it has none.
	Breaker string
}

// PluginStats returns what each plugin that serves holds now, by name.
func (r *Reloader) PluginStats() []PluginStats {
	return nil
}
