package pluginhost

import (
	"github.com/gobwas/glob"

	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
)

// exposure turns a plugin's allow-lists (config tools, prompts and
// resources: glob patterns of the tool and prompt names, the plugin's own,
// and of resource URIs and URI templates) and max_list_items into what
// the engine enforces. A list left out of the config allows everything.
func exposure(pc config.PluginConfig) host.Exposure {
	return host.Exposure{
		Tool:         globs(pc.Tools),
		Prompt:       globs(pc.Prompts),
		Resource:     globs(pc.Resources),
		MaxListItems: pc.Limits.MaxListItems,
	}
}

// globs returns whether a name matches one of patterns; nil patterns (not
// configured) give nil, which allows every name.
func globs(patterns []string) func(string) bool {
	if patterns == nil {
		return nil
	}
	gs := make([]glob.Glob, 0, len(patterns))
	for _, s := range patterns {
		if g, err := glob.Compile(s); err == nil { // config checked them
			gs = append(gs, g)
		}
	}
	return func(name string) bool {
		for _, g := range gs {
			if g.Match(name) {
				return true
			}
		}
		return false
	}
}
