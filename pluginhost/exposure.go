package pluginhost

import (
	"github.com/gobwas/glob"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
)

// exposure turns a plugin's allow-lists (config tools, prompts and
// resources: glob patterns of the tool and prompt names, the plugin's own,
// and of resource URIs and URI templates), its deny-lists (skip_tools,
// skip_prompts, skip_resources, of the same form), its renames and
// max_list_items into what the engine enforces. An allow-list left out of
// the config allows everything.
func exposure(pc config.PluginConfig) host.Exposure {
	return host.Exposure{
		Tool:         allowedNotSkipped(pc.Tools, pc.SkipTools),
		Prompt:       allowedNotSkipped(pc.Prompts, pc.SkipPrompts),
		Resource:     allowedNotSkipped(pc.Resources, pc.SkipResources),
		MaxListItems: pc.Limits.MaxListItems,
		Rename:       pc.Rename,
	}
}

// allowedNotSkipped returns whether a name matches allow (nil: any name)
// and none of skip; nil when neither list is configured.
func allowedNotSkipped(allow, skip []string) func(string) bool {
	allowed, skipped := globs(allow), globs(skip)
	switch {
	case skipped == nil:
		return allowed
	case allowed == nil:
		return func(name string) bool { return !skipped(name) }
	}
	return func(name string) bool { return allowed(name) && !skipped(name) }
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
