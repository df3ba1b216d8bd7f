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
	// Rename gives tools and prompts, by the plugin's own name, the name
	// they are exposed under, instead of the plugin's prefix plus their
	// own name.
	Rename map[string]string
}

func allows(f func(string) bool, name string) bool { return f == nil || f(name) }

// tools, prompts, resources and templates leave out of a plugin's list
// what the exposure does not allow, and what goes beyond MaxListItems,
// logging what they leave out.
func (e Exposure) tools(items []abi.Tool, log *slog.Logger) []abi.Tool {
	return keep(items, "tools", e.MaxListItems, log, func(t abi.Tool) (string, bool) { return t.Name, allows(e.Tool, t.Name) })
}

func (e Exposure) prompts(items []abi.Prompt, log *slog.Logger) []abi.Prompt {
	return keep(items, "prompts", e.MaxListItems, log, func(pr abi.Prompt) (string, bool) { return pr.Name, allows(e.Prompt, pr.Name) })
}

func (e Exposure) resources(items []abi.Resource, log *slog.Logger) []abi.Resource {
	return keep(items, "resources", e.MaxListItems, log, func(r abi.Resource) (string, bool) { return r.URI, allows(e.Resource, r.URI) })
}

func (e Exposure) templates(items []abi.ResourceTemplate, log *slog.Logger) []abi.ResourceTemplate {
	return keep(items, "resource templates", e.MaxListItems, log, func(t abi.ResourceTemplate) (string, bool) {
		return t.URITemplate, allows(e.Resource, t.URITemplate)
	})
}

// keep returns the items allowed says to keep, at most max of them (0: no
// cap), logging what it leaves out.
func keep[T any](items []T, kind string, max int, log *slog.Logger, allowed func(T) (string, bool)) []T {
	out := make([]T, 0, len(items))
	for _, it := range items {
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
	return out
}
