package pluginhost

import (
	"cmp"
	"slices"

	"github.com/mcphost/mcphost/sandbox"
)

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
	var out []PluginStats
	r.serving.Range(func(_, v any) bool {
		if d, _ := v.(*drain); d != nil {
			s := PluginStats{Name: d.name}
			if d.sandbox != nil {
				s.Stats = d.sandbox.Stats()
			}
			if d.breaker != nil {
				s.Breaker = d.breaker.stateName()
			}
			out = append(out, s)
		}
		return true
	})
	slices.SortFunc(out, func(a, b PluginStats) int { return cmp.Compare(a.Name, b.Name) })
	return out
}
