package pluginhost

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"maps"
	"slices"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/sandbox"
)

// PluginStats is what a plugin that serves holds at a moment
// (Reloader.PluginStats).
type PluginStats struct {
	Name string
	PluginAbout
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
			s := PluginStats{Name: d.name, PluginAbout: d.about}
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

// PluginAbout is what a plugin version was loaded from and with: what the
// operator needs to know of it, never a secret's value.
type PluginAbout struct {
	// Source is the file it was loaded from; SHA256 its digest, in hex.
	Source, SHA256 string
	// ABI is the mcphost ABI its manifest names; 0 for a plugin without
	// one (written for hyper-mcp).
	ABI int
	// Language is what it was written in, as far as its module tells
	// (languageOf): Go, TinyGo, Rust, JavaScript, or "" when unknown.
	Language string
	// Isolation is whose calls share an instance (config.Isolation*).
	Isolation string
	// Grants are what the operator granted it: hosts, host functions,
	// mounts (guest path and mode), and the names (not the values) of its
	// config keys and secrets.
	AllowedHosts, HostFunctions, Mounts, ConfigKeys, Secrets []string
}

// about returns what a version of the plugin loaded from path, with
// digest sum, manifest (nil for none), language and settings pc, is.
func about(path string, sum [32]byte, manifest *abi.Manifest, language string, pc config.PluginConfig) PluginAbout {
	a := PluginAbout{Source: path, SHA256: hex.EncodeToString(sum[:]), Language: language, Isolation: pc.Isolation,
		AllowedHosts: slices.Clone(pc.AllowedHosts), HostFunctions: slices.Clone(pc.HostFunctions),
		ConfigKeys: slices.Sorted(maps.Keys(pc.Config)), Secrets: slices.Sorted(maps.Keys(pc.Secrets))}
	if manifest != nil {
		a.ABI = manifest.ABI
	}
	for _, m := range pc.Mounts {
		mode := "rw"
		if m.ReadOnly {
			mode = "ro"
		}
		a.Mounts = append(a.Mounts, m.Guest+":"+mode)
	}
	return a
}

// languageOf says what a module was written in, from what its toolchain
// left in it: Go's build id section, or the toolchain named in the
// producers section (TinyGo, Rust); "" when neither tells. The module is
// untrusted: this only looks for names, and the result is a hint.
func languageOf(info *sandbox.Info) string {
	if _, ok := info.CustomSections["go:buildid"]; ok {
		return "Go"
	}
	producers := info.CustomSections["producers"]
	switch {
	case bytes.Contains(producers, []byte("TinyGo")):
		return "TinyGo"
	case bytes.Contains(producers, []byte("rustc")):
		return "Rust"
	}
	return ""
}
