package host

import (
	"slices"
)

// Who sees what (RATIONALE.md, "Who sees which plugins"): a plugin may
// require OAuth scopes (WithRequiredScopes); a request sees it only when
// its token holds every one of them. The catalog stays one for all; each
// request looks at it through its view, which leaves out, in lists and
// lookups alike, the plugins it does not see, so that using a hidden item
// is answered exactly as using an item nobody offers. A request without a
// token (stdio, or a server without authentication) holds no scope and
// sees no plugin that requires one.

// WithRequiredScopes makes the plugin visible only to requests whose
// token holds every one of scopes: to the others its tools, prompts,
// resources, templates, completions and tasks do not exist. None: visible
// to every request.
func WithRequiredScopes(scopes []string) PluginOption {
	return func(p *Plugin) { p.scopes = slices.Clone(scopes) }
}

// view is what one client sees of the catalog.
type view struct {
	// all sees every plugin: the server's own lookups.
	all bool
	// plugins are those the client's endpoint serves; nil: every plugin.
	plugins *PluginSet
	// scopes are those of the client's token.
	scopes []string
}

// everything is the view of the server itself.
var everything = view{all: true}

// sees reports whether the view includes plugin p.
func (v view) sees(p *Plugin) bool { return v.seesPlugin(p.Name, p.scopes) }

// seesPlugin reports whether the view includes the plugin of this name
// that requires these scopes: what a task records of its plugin.
func (v view) seesPlugin(name string, scopes []string) bool {
	if v.all {
		return true
	}
	if !v.plugins.has(name) {
		return false
	}
	for _, s := range scopes {
		if !slices.Contains(v.scopes, s) {
			return false
		}
	}
	return true
}

// view returns what the request sees: the plugins of its session's
// endpoint whose scopes its token holds.
func (r *request) view() view {
	return view{plugins: r.conn.plugins, scopes: r.srv.scopes(r.ctx)}
}

// view returns what the session's notifications may speak of: the plugins
// of its endpoint whose scopes the token it initialized with holds.
func (sess *Session) view() view {
	rec, _ := sess.record()
	return view{plugins: sess.plugins, scopes: rec.Scopes}
}

// visible returns the entries of plugins the view sees.
func visible[E owned](v view, entries []E) []E {
	if v.all || !slices.ContainsFunc(entries, func(e E) bool { return !v.sees(e.owner()) }) {
		return entries
	}
	return slices.DeleteFunc(slices.Clone(entries), func(e E) bool { return !v.sees(e.owner()) })
}

// tool returns the tool exposed as name, if the view sees its plugin.
func (c *Catalog) tool(name string, v view) (*toolEntry, bool) {
	e, ok := c.toolIndex[name]
	return e, ok && v.sees(e.plugin)
}

// prompt returns the prompt exposed as name, if the view sees its plugin.
func (c *Catalog) prompt(name string, v view) (*promptEntry, bool) {
	e, ok := c.promptIndex[name]
	return e, ok && v.sees(e.plugin)
}

// restricted reports whether some plugin of c is hidden from some
// client.
func (c *Catalog) restricted() bool {
	return slices.ContainsFunc(c.plugins, func(p *Plugin) bool { return len(p.scopes) > 0 })
}

// viewChanges returns what each view sees change from catalog a to b, or
// nil when every client sees the same plugins of both: no plugin requires
// scopes, and no endpoint serves only some plugins (partial is false).
// Views that see the same plugins share one comparison.
func viewChanges(a, b *Catalog, partial bool) func(view) ListChanges {
	if !partial && !a.restricted() && !b.restricted() {
		return nil
	}
	plugins := slices.Concat(a.plugins, b.plugins)
	seen := map[string]ListChanges{}
	return func(v view) ListChanges {
		key := make([]byte, len(plugins))
		for i, p := range plugins {
			key[i] = '0'
			if v.sees(p) {
				key[i] = '1'
			}
		}
		changes, ok := seen[string(key)]
		if !ok {
			changes = diffCatalogsFor(a, b, v)
			seen[string(key)] = changes
		}
		return changes
	}
}
