package host

import (
	"log/slog"

	"github.com/mcphost/mcphost/abi"
)

// Exposure limits what a plugin may expose to clients: the operator's
// allow-lists and cap on listed items. The zero value exposes everything.
type Exposure struct {
	// Tool, Prompt and Resource report whether an item may be exposed: a
	// tool or prompt by the plugin's own name, a resource by its URI and a
	// resource template by its URI template. Nil allows every item.
	Tool, Prompt, Resource func(name string) bool
	// MaxListItems caps the items of each kind the plugin may list; 0
	// sets no cap.
	MaxListItems int
}

func allows(f func(string) bool, name string) bool { return f == nil || f(name) }

// apply leaves out of a plugin's lists what the exposure does not allow,
// and what goes beyond MaxListItems, logging what it leaves out.
func (e Exposure) apply(l *pluginLists, log *slog.Logger) {
	l.tools = keep(l.tools, "tools", e.MaxListItems, log, func(t abi.Tool) (string, bool) { return t.Name, allows(e.Tool, t.Name) })
	l.prompts = keep(l.prompts, "prompts", e.MaxListItems, log, func(pr abi.Prompt) (string, bool) { return pr.Name, allows(e.Prompt, pr.Name) })
	l.resources = keep(l.resources, "resources", e.MaxListItems, log, func(r abi.Resource) (string, bool) { return r.URI, allows(e.Resource, r.URI) })
	l.templates = keep(l.templates, "resource templates", e.MaxListItems, log, func(t abi.ResourceTemplate) (string, bool) {
		return t.URITemplate, allows(e.Resource, t.URITemplate)
	})
}

// keep returns the items allowed says to keep, at most max of them (0: no
// cap), logging what it leaves out.
func keep[T any](items *[]T, kind string, max int, log *slog.Logger, allowed func(T) (string, bool)) *[]T {
	if items == nil {
		return nil
	}
	out := make([]T, 0, len(*items))
	for _, it := range *items {
		if name, ok := allowed(it); !ok {
			log.Debug("left out of "+kind+": not in the allow-list", "name", name)
			continue
		}
		out = append(out, it)
	}
	if max > 0 && len(out) > max {
		log.Warn("plugin lists too many "+kind+"; the rest are left out", "listed", len(out), "kept", max, "max_list_items", max)
		out = out[:max]
	}
	return &out
}
