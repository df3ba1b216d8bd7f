package host

import (
	"slices"
	"time"

	"github.com/mcphost/mcphost/abi"
)

// Caching hints of 2026-07-28 (ttlMs and cacheScope on lists and reads):
// each plugin has its own (config cache_ttl and cache_scope); a result
// carries those of the plugins behind it: the shortest ttl, and public only
// when every one is public. A result no plugin is behind (an empty list)
// gets the hints that are never wrong: stale at once, private.

// cacheHints are caching hints.
type cacheHints struct {
	ttl    time.Duration
	public bool
}

func (h cacheHints) scope() string {
	if h.public {
		return "public"
	}
	return "private"
}

// WithCacheHints sets the caching hints of what the plugin lists and
// reads: how long a client may reuse it, and whether it may share it
// between users.
func WithCacheHints(ttl time.Duration, public bool) PluginOption {
	return func(p *Plugin) { p.cache = cacheHints{ttl: max(ttl, 0), public: public} }
}

// owned is a catalog entry, which a plugin serves, and whose _meta may
// say what it requires of clients (requires.go).
type owned interface {
	owner() *Plugin
	meta() abi.Meta
}

func (e *toolEntry) owner() *Plugin     { return e.plugin }
func (e *promptEntry) owner() *Plugin   { return e.plugin }
func (e *resourceEntry) owner() *Plugin { return e.plugin }
func (e *templateEntry) owner() *Plugin { return e.plugin }

// cacheFrom sets the caching hints of r's result to those of the plugins
// behind it.
func (r *request) cacheFrom(plugins ...*Plugin) {
	plugins = slices.DeleteFunc(plugins, func(p *Plugin) bool { return p == nil })
	if len(plugins) == 0 {
		r.hints = &cacheHints{}
		return
	}
	h := plugins[0].cache
	for _, p := range plugins[1:] {
		h.ttl = min(h.ttl, p.cache.ttl)
		h.public = h.public && p.cache.public
	}
	r.hints = &h
}
