package host

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/mcphost/mcphost/abi"
	"github.com/yosida95/uritemplate/v3"
)

// Catalog is the union of what the loaded plugins offer, as clients see it:
// names after prefixes and collision handling, with compiled schemas and
// templates. A Catalog is immutable once built, so a server can replace its
// catalog atomically.
//
// Naming rule: plugins are taken in order of name. A tool or prompt is
// exposed as its plugin's prefix plus its own name. When that name is taken
// already by an earlier plugin, it is exposed as "<plugin>.<name>" instead,
// and a warning names both plugins; if that is taken too, it is not exposed.
// A resource URI offered twice belongs to the earlier plugin. A URI that is
// no listed resource goes to the first template, in plugin order, that
// matches it.
type Catalog struct {
	plugins   []*Plugin
	tools     []*toolEntry
	toolIndex map[string]*toolEntry

	prompts     []*promptEntry
	promptIndex map[string]*promptEntry

	resources     []*resourceEntry
	resourceIndex map[string]*resourceEntry

	templates []*templateEntry

	// lists keeps what each plugin listed, so a refresh can reuse the lists
	// of plugins that did not change (see Server.Refresh).
	lists map[*Plugin]*pluginLists
}

type toolEntry struct {
	plugin       *Plugin
	tool         abi.Tool // as exposed: Name is the exposed name
	original     string   // the plugin's own name
	inputSchema  *schema
	outputSchema *schema
}

type promptEntry struct {
	plugin   *Plugin
	prompt   abi.Prompt
	original string
}

type resourceEntry struct {
	plugin   *Plugin
	resource abi.Resource
}

type templateEntry struct {
	plugin   *Plugin
	template abi.ResourceTemplate
	compiled *uritemplate.Template
}

// toolNamePattern is the MCP tool name rule (2025-11-25): 1 to 128 of
// letters, digits, '_', '-' and '.'.
var toolNamePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// BuildCatalog lists what every plugin offers and checks it. Items that break
// the rules are left out with a warning; a plugin whose list export fails
// contributes nothing of that kind.
func BuildCatalog(ctx context.Context, plugins []*Plugin, logger *slog.Logger) *Catalog {
	return buildCatalog(ctx, plugins, logger, nil, nil)
}

// buildCatalog builds a catalog of plugins. A plugin prev holds keeps the
// lists it had there unless relist says to list it again; a kind whose
// listing fails keeps its lists from prev, when prev has them.
func buildCatalog(ctx context.Context, plugins []*Plugin, logger *slog.Logger, prev *Catalog, relist func(*Plugin) bool) *Catalog {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	sorted := append([]*Plugin(nil), plugins...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	c := &Catalog{
		plugins:       sorted,
		toolIndex:     map[string]*toolEntry{},
		promptIndex:   map[string]*promptEntry{},
		resourceIndex: map[string]*resourceEntry{},
		lists:         map[*Plugin]*pluginLists{},
	}
	for _, p := range sorted {
		log := logger.With("plugin", p.Name)
		var old *pluginLists
		if prev != nil {
			old = prev.lists[p]
		}
		l := old
		if l == nil {
			l = p.listedAhead
		}
		if l == nil || relist != nil && relist(p) {
			l = p.list(ctx, old, log)
		}
		c.lists[p] = l
		c.addTools(p, l, log)
		c.addPrompts(p, l, log)
		c.addResources(p, l, log)
		c.addTemplates(p, l, log)
	}
	return c
}

// ListAhead lists everything p offers now, within ctx and p's list budget,
// as the catalog shows it, so that the first catalog with p (ReplacePlugins)
// need not list it: a slow plugin is then listed before it is published,
// not while the catalog is being swapped. Call it before p is handed to
// the server. It fails when ctx ended before the listing was done: the
// plugin's lists are incomplete (a listing that the plugin itself fails is
// not an error: p then offers nothing of that kind, as in BuildCatalog).
func (p *Plugin) ListAhead(ctx context.Context, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	l := p.list(ctx, nil, logger.With("plugin", p.Name))
	if ctx.Err() != nil {
		return fmt.Errorf("listing what it offers: %w", context.Cause(ctx))
	}
	p.listedAhead = l
	return nil
}

// pluginLists is what one plugin listed, as it returned it. A nil *list is
// a listing that failed.
type pluginLists struct {
	tools     *[]abi.Tool
	prompts   *[]abi.Prompt
	resources *[]abi.Resource
	templates *[]abi.ResourceTemplate
	failed    bool // some listing failed (and kept the previous list)
}

// list reads every list export of p. A listing that fails keeps the
// plugin's previous list of that kind (from old), if there is one, so a
// busy plugin does not lose its tools on a refresh.
func (p *Plugin) list(ctx context.Context, old *pluginLists, log *slog.Logger) *pluginLists {
	if old == nil {
		old = &pluginLists{}
	}
	budget := p.listBudget
	if budget <= 0 {
		budget = DefaultListBudget
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	l := &pluginLists{}
	l.tools = listed(l, log, "tools", old.tools)(p.listTools(ctx))
	l.prompts = listed(l, log, "prompts", old.prompts)(p.listPrompts(ctx))
	l.resources = listed(l, log, "resources", old.resources)(p.listResources(ctx))
	l.templates = listed(l, log, "resource templates", old.templates)(p.listResourceTemplates(ctx))
	p.exposure.apply(l, log) // allow-lists and max_list_items (exposure.go)
	return l
}

// listed returns what records the outcome of one listing: the items, or on
// failure the previous items (nil when there were none).
func listed[T any](l *pluginLists, log *slog.Logger, kind string, old *[]T) func([]T, error) *[]T {
	return func(items []T, err error) *[]T {
		if err == nil {
			return &items
		}
		l.failed = true
		if old != nil {
			log.Error("listing "+kind+" failed; keeping the previous list", "err", err)
			return old
		}
		log.Error("listing "+kind+" failed", "err", err)
		return nil
	}
}

// Plugins returns the catalog's plugins in order of name.
func (c *Catalog) Plugins() []*Plugin { return c.plugins }

// exposedName picks the name a tool or prompt is exposed under, following
// the naming rule. It returns "" when no name is free.
func exposedName(p *Plugin, name string, taken func(string) (string, bool), kind string, log *slog.Logger) string {
	exposed := p.Prefix + name
	owner, clash := taken(exposed)
	if !clash {
		return exposed
	}
	qualified := p.Name + "." + name
	if _, again := taken(qualified); again {
		log.Warn(kind+" left out: its name is taken", "name", exposed, "alsoTried", qualified, "ownedBy", owner)
		return ""
	}
	log.Warn(kind+" renamed to avoid a clash", "name", exposed, "exposedAs", qualified, "ownedBy", owner)
	return qualified
}

func (c *Catalog) addTools(p *Plugin, l *pluginLists, log *slog.Logger) {
	if l.tools == nil {
		return
	}
	tools := *l.tools
	taken := func(n string) (string, bool) {
		e, ok := c.toolIndex[n]
		if !ok {
			return "", false
		}
		return e.plugin.Name, true
	}
	for _, t := range tools {
		if !toolNamePattern.MatchString(t.Name) {
			log.Warn("tool left out: name must be 1-128 of A-Z a-z 0-9 _ - .", "name", t.Name)
			continue
		}
		in, err := compileSchema(t.InputSchema)
		if err != nil {
			log.Warn("tool left out: bad inputSchema", "tool", t.Name, "err", err)
			continue
		}
		var out *schema
		if len(t.OutputSchema) > 0 {
			if out, err = compileSchema(t.OutputSchema); err != nil {
				log.Warn("tool left out: bad outputSchema", "tool", t.Name, "err", err)
				continue
			}
		}
		name := exposedName(p, t.Name, taken, "tool", log)
		if name == "" {
			continue
		}
		e := &toolEntry{plugin: p, tool: t, original: t.Name, inputSchema: in, outputSchema: out}
		e.tool.Name = name
		c.tools = append(c.tools, e)
		c.toolIndex[name] = e
	}
}

func (c *Catalog) addPrompts(p *Plugin, l *pluginLists, log *slog.Logger) {
	if l.prompts == nil {
		return
	}
	prompts := *l.prompts
	taken := func(n string) (string, bool) {
		e, ok := c.promptIndex[n]
		if !ok {
			return "", false
		}
		return e.plugin.Name, true
	}
	for _, pr := range prompts {
		if pr.Name == "" || len(pr.Name) > 128 || strings.ContainsFunc(pr.Name, isControl) {
			log.Warn("prompt left out: name must be 1-128 printable characters", "name", pr.Name)
			continue
		}
		name := exposedName(p, pr.Name, taken, "prompt", log)
		if name == "" {
			continue
		}
		e := &promptEntry{plugin: p, prompt: pr, original: pr.Name}
		e.prompt.Name = name
		c.prompts = append(c.prompts, e)
		c.promptIndex[name] = e
	}
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// validURI reports whether s is an absolute URI without control characters.
func validURI(s string) bool {
	if s == "" || len(s) > 2048 || strings.ContainsFunc(s, isControl) {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme != ""
}

func (c *Catalog) addResources(p *Plugin, l *pluginLists, log *slog.Logger) {
	if l.resources == nil {
		return
	}
	resources := *l.resources
	for _, r := range resources {
		if !validURI(r.URI) {
			log.Warn("resource left out: uri must be an absolute URI", "uri", r.URI)
			continue
		}
		if r.Name == "" {
			r.Name = r.URI
		}
		if owner, ok := c.resourceIndex[r.URI]; ok {
			log.Warn("resource left out: uri already offered", "uri", r.URI, "ownedBy", owner.plugin.Name)
			continue
		}
		e := &resourceEntry{plugin: p, resource: r}
		c.resources = append(c.resources, e)
		c.resourceIndex[r.URI] = e
	}
}

func (c *Catalog) addTemplates(p *Plugin, l *pluginLists, log *slog.Logger) {
	if l.templates == nil {
		return
	}
	templates := *l.templates
	for _, t := range templates {
		compiled, err := uritemplate.New(t.URITemplate)
		if err != nil || t.URITemplate == "" || strings.ContainsFunc(t.URITemplate, isControl) {
			log.Warn("resource template left out: bad uriTemplate", "uriTemplate", t.URITemplate, "err", err)
			continue
		}
		if t.Name == "" {
			t.Name = t.URITemplate
		}
		c.templates = append(c.templates, &templateEntry{plugin: p, template: t, compiled: compiled})
	}
}

// resolveResource finds the plugin that serves uri: a listed resource first,
// then the first matching template.
func (c *Catalog) resolveResource(uri string) *Plugin {
	if e, ok := c.resourceIndex[uri]; ok {
		return e.plugin
	}
	for _, t := range c.templates {
		if t.compiled.Match(uri) != nil {
			return t.plugin
		}
	}
	return nil
}

// templateOwner finds the plugin offering the template with this exact
// uriTemplate.
func (c *Catalog) templateOwner(uriTemplate string) *Plugin {
	for _, t := range c.templates {
		if t.template.URITemplate == uriTemplate {
			return t.plugin
		}
	}
	return nil
}

// capabilities derives the server capabilities from what the catalog holds,
// for the negotiated version. While plugins are still loading, any of them
// may bring tools, prompts or resources: all three are declared.
func (c *Catalog) capabilities(version string, loading bool) map[string]any {
	caps := map[string]any{"logging": map[string]any{}}
	if loading || len(c.tools) > 0 || c.mayAnnounce(abi.HostNotifyToolListChanged, abi.ExportListTools) {
		caps["tools"] = map[string]any{"listChanged": true}
	}
	if loading || len(c.prompts) > 0 || c.mayAnnounce(abi.HostNotifyPromptListChanged, abi.ExportListPrompts) {
		caps["prompts"] = map[string]any{"listChanged": true}
	}
	if loading || len(c.resources) > 0 || len(c.templates) > 0 ||
		c.mayAnnounce(abi.HostNotifyResourceListChanged, abi.ExportListResources, abi.ExportListResourceTemplates) {
		caps["resources"] = map[string]any{"subscribe": true, "listChanged": true}
	}
	if atLeast(version, Version20250326) && c.completes() {
		caps["completions"] = map[string]any{}
	}
	if atLeast(version, Version20251125) && caps["tools"] != nil {
		caps["tasks"] = taskCapabilities()
	}
	return caps
}

// mayAnnounce reports whether a plugin that has one of the list exports was
// granted the host function that announces changes to that list: its list,
// empty today, may fill later, so the server declares the capability.
func (c *Catalog) mayAnnounce(hostFunction string, exports ...string) bool {
	for _, p := range c.plugins {
		if !p.legacy && slices.Contains(p.granted, hostFunction) && slices.ContainsFunc(exports, p.rt.HasExport) {
			return true
		}
	}
	return false
}

// completes reports whether any plugin with prompts or templates completes
// arguments.
func (c *Catalog) completes() bool {
	for _, p := range c.plugins {
		if p.rt.HasExport(abi.ExportComplete) && !p.legacy {
			return true
		}
	}
	return false
}
