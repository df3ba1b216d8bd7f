package host

import (
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/gobwas/glob"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/sandbox"
)

// itemFilter holds a plugin's allow-lists (config tools, prompts and
// resources): glob patterns of the tool and prompt names (the plugin's
// own), resource URIs and resource template URI templates it may expose.
// A nil list allows everything.
type itemFilter struct {
	tools, prompts, resources []glob.Glob
	set                       [3]bool // whether each list is configured
}

func newItemFilter(pc config.PluginConfig) itemFilter {
	var f itemFilter
	for i, src := range [][]string{pc.Tools, pc.Prompts, pc.Resources} {
		if src == nil {
			continue
		}
		f.set[i] = true
		gs := make([]glob.Glob, 0, len(src))
		for _, s := range src {
			if g, err := glob.Compile(s); err == nil { // config checked them
				gs = append(gs, g)
			}
		}
		switch i {
		case 0:
			f.tools = gs
		case 1:
			f.prompts = gs
		case 2:
			f.resources = gs
		}
	}
	return f
}

func matchAny(gs []glob.Glob, s string) bool {
	for _, g := range gs {
		if g.Match(s) {
			return true
		}
	}
	return false
}

func (f itemFilter) tool(name string) bool     { return !f.set[0] || matchAny(f.tools, name) }
func (f itemFilter) prompt(name string) bool   { return !f.set[1] || matchAny(f.prompts, name) }
func (f itemFilter) resource(uri string) bool  { return !f.set[2] || matchAny(f.resources, uri) }
func (f itemFilter) template(tmpl string) bool { return !f.set[2] || matchAny(f.resources, tmpl) }

// checkCall refuses a call of an item the allow-lists leave out. The
// catalog never routes one here (the item is not listed), except a read
// of a URI that an allowed template matches but the allow-list does not;
// this check is the last line either way.
func (f itemFilter) checkCall(plugin, export string, input []byte) error {
	var what, name string
	switch export {
	case abi.ExportCallTool, abi.ExportGetPrompt, abi.ExportReadResource:
		var in struct {
			Request struct {
				Name string `json:"name"`
				URI  string `json:"uri"`
			} `json:"request"`
		}
		if json.Unmarshal(input, &in) != nil {
			return nil
		}
		switch export {
		case abi.ExportCallTool:
			if f.tool(in.Request.Name) {
				return nil
			}
			what, name = "tool", in.Request.Name
		case abi.ExportGetPrompt:
			if f.prompt(in.Request.Name) {
				return nil
			}
			what, name = "prompt", in.Request.Name
		default:
			if f.resource(in.Request.URI) {
				return nil
			}
			what, name = "resource", in.Request.URI
		}
	case abi.ExportV1Call:
		var in abi.V1CallInput
		if json.Unmarshal(input, &in) != nil || f.tool(in.Params.Name) {
			return nil
		}
		what, name = "tool", in.Params.Name
	default:
		return nil
	}
	return &sandbox.CallError{Plugin: plugin, Export: export, Kind: sandbox.KindPlugin, Message: fmt.Sprintf(
		"%s %q is not exposed: it is not in the %ss allow-list of [plugins.%s]", what, name, what, plugin)}
}

// guardLists applies the plugin's allow-lists and max_list_items to what
// it listed.
func guardLists(p *Plugin, l *pluginLists, log *slog.Logger) {
	g, ok := p.rt.(*guardedRuntime)
	if !ok {
		return
	}
	l.tools = keep(l.tools, "tools", g.maxItems, log, func(t abi.Tool) (string, bool) { return t.Name, g.filter.tool(t.Name) })
	l.prompts = keep(l.prompts, "prompts", g.maxItems, log, func(pr abi.Prompt) (string, bool) { return pr.Name, g.filter.prompt(pr.Name) })
	l.resources = keep(l.resources, "resources", g.maxItems, log, func(r abi.Resource) (string, bool) { return r.URI, g.filter.resource(r.URI) })
	l.templates = keep(l.templates, "resource templates", g.maxItems, log, func(t abi.ResourceTemplate) (string, bool) {
		return t.URITemplate, g.filter.template(t.URITemplate)
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
