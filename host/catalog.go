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
// Naming rule: plugins are taken in order of rank (WithRank: the order of
// their tables in the config), then of name. A tool or prompt is exposed
// under the name Exposure.Rename gives it, else as its plugin's prefix
// plus its own name. When that name is taken already by an earlier
// plugin, it is exposed as "<plugin>_<name>" instead, and a warning names
// both plugins; if that is taken too, it is not exposed. A tool's exposed
// name must follow its plugin's ToolNames rule, portable by default, or
// it is left out with a warning that says how to rename it. A resource
// URI offered twice belongs to the earlier plugin. A URI that is no listed
// resource goes to the first template, in plugin order, that matches it.
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
	headerParams []HeaderParam // marked x-mcp-header (xmcpheader.go)
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

// portableToolName is the function name rule of the major LLM APIs, which
// clients pass MCP tools to: 1 to 64 of letters, digits, '_' and '-'.
var portableToolName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

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
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].before(sorted[j]) })
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
		c.addTools(p, l.tools, log)
		c.addPrompts(p, l.prompts, log)
		c.addResources(l.resources, log)
		c.templates = append(c.templates, deref(l.templates)...)
	}
	return c
}

func deref[E any](list *[]E) []E {
	if list == nil {
		return nil
	}
	return *list
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

// pluginLists is what one plugin listed, as the operator exposes it
// (exposure.go) and checked: each entry obeys the rules of its kind, and a
// tool's schemas are compiled; entries carry the plugin's own names, which
// a catalog may qualify. A nil *list is a listing that failed.
type pluginLists struct {
	tools     *[]*toolEntry
	prompts   *[]*promptEntry
	resources *[]*resourceEntry
	templates *[]*templateEntry
	failed    bool // some listing failed (and kept the previous list)
}

// list reads every list export of p and checks what it lists. A listing
// that fails keeps the plugin's previous list of that kind (from old), if
// there is one, so a busy plugin does not lose its tools on a refresh.
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
	e := p.exposure
	tools, err := p.listTools(ctx)
	l.tools = listed(l, log, "tools", old.tools, tools, err, e.tools, p.checkTools)
	prompts, err := p.listPrompts(ctx)
	l.prompts = listed(l, log, "prompts", old.prompts, prompts, err, e.prompts, p.checkPrompts)
	resources, err := p.listResources(ctx)
	l.resources = listed(l, log, "resources", old.resources, resources, err, e.resources, p.checkResources)
	templates, err := p.listResourceTemplates(ctx)
	l.templates = listed(l, log, "resource templates", old.templates, templates, err, e.templates, p.checkTemplates)
	return l
}

// listed records the outcome of one listing: the items the exposure keeps
// (exposure.go), checked, or on failure (err) the previous entries (nil
// when there were none).
func listed[T, E any](l *pluginLists, log *slog.Logger, kind string, old *[]E, items []T, err error,
	expose func([]T, *slog.Logger) []T, check func([]T, *slog.Logger) []E) *[]E {
	if err == nil {
		entries := check(expose(items, log), log)
		return &entries
	}
	l.failed = true
	if old != nil {
		log.Error("listing "+kind+" failed; keeping the previous list", "err", err)
		return old
	}
	log.Error("listing "+kind+" failed", "err", err)
	return nil
}

// Plugins returns the catalog's plugins in the naming rule's order.
func (c *Catalog) Plugins() []*Plugin { return c.plugins }

// CatalogSize counts what a catalog serves, as clients see it.
type CatalogSize struct {
	Plugins, Tools, Prompts, Resources, Templates int
}

// Size counts what the catalog serves.
func (c *Catalog) Size() CatalogSize {
	return CatalogSize{Plugins: len(c.plugins), Tools: len(c.tools), Prompts: len(c.prompts),
		Resources: len(c.resources), Templates: len(c.templates)}
}

// before reports whether p comes before q in the naming rule's order.
func (p *Plugin) before(q *Plugin) bool {
	if (p.rank == 0) != (q.rank == 0) {
		return p.rank != 0
	}
	if p.rank != q.rank {
		return p.rank < q.rank
	}
	return p.Name < q.Name
}

// exposedName picks the name a tool or prompt is exposed under, following
// the naming rule; valid reports whether a name may be exposed. It returns
// "" when no name is free.
func exposedName(p *Plugin, name string, taken func(string) (string, bool), valid func(string) bool, kind string, log *slog.Logger) string {
	exposed, renamed := p.exposure.Rename[name]
	if !renamed {
		exposed = p.Prefix + name
	}
	owner, clash := taken(exposed)
	if clash {
		qualified := p.Name + "_" + name
		if _, again := taken(qualified); again {
			p.warnOnce(log, kind+" left out: its name is taken", "name", exposed, "alsoTried", qualified, "ownedBy", owner)
			return ""
		}
		p.warnOnce(log, kind+" renamed to avoid a clash", "name", exposed, "exposedAs", qualified, "ownedBy", owner,
			"fix", fmt.Sprintf("set prefix or rename = { %q = \"...\" } in [plugins.%s], or move its table before [plugins.%s]", name, p.Name, owner))
		exposed = qualified
	}
	if !valid(exposed) {
		p.warnOnce(log, kind+" left out: its name is not portable: LLM APIs take function names of 1-64 of A-Z a-z 0-9 _ -", "name", exposed,
			"fix", fmt.Sprintf(`rename = { %q = "..." } in [plugins.%s], or [server] tool_names = "mcp"`, name, p.Name))
		return ""
	}
	return exposed
}

// warnOnce logs a naming warning of p, unless p logged the same before.
func (p *Plugin) warnOnce(log *slog.Logger, msg string, args ...any) {
	key := fmt.Sprint(append([]any{msg}, args...)...)
	if _, logged := p.namingWarned.LoadOrStore(key, true); !logged {
		log.Warn(msg, args...)
	}
}

// exposable reports whether a tool may be exposed as name under p's rule.
func (p *Plugin) exposable(name string) bool {
	if p.toolNames == ToolNamesMCP {
		return toolNamePattern.MatchString(name)
	}
	return portableToolName.MatchString(name)
}

// checkTools returns the tools that obey the rules, with their schemas
// compiled, warning of the others.
func (p *Plugin) checkTools(tools []abi.Tool, log *slog.Logger) []*toolEntry {
	var entries []*toolEntry
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
		params, err := headerParams(t.InputSchema)
		if err != nil {
			log.Warn("tool left out: bad x-mcp-header", "tool", t.Name, "err", err)
			continue
		}
		entries = append(entries, &toolEntry{plugin: p, tool: t, original: t.Name, inputSchema: in, outputSchema: out, headerParams: params})
	}
	return entries
}

// addTools adds a plugin's checked tools under the names the naming rule
// gives them.
func (c *Catalog) addTools(p *Plugin, tools *[]*toolEntry, log *slog.Logger) {
	taken := func(n string) (string, bool) {
		e, ok := c.toolIndex[n]
		if !ok {
			return "", false
		}
		return e.plugin.Name, true
	}
	for _, t := range deref(tools) {
		name := exposedName(p, t.original, taken, p.exposable, "tool", log)
		if name == "" {
			continue
		}
		e := *t
		e.tool.Name = name
		c.tools = append(c.tools, &e)
		c.toolIndex[name] = &e
	}
}

// checkPrompts returns the prompts that obey the rules, warning of the
// others.
func (p *Plugin) checkPrompts(prompts []abi.Prompt, log *slog.Logger) []*promptEntry {
	var entries []*promptEntry
	for _, pr := range prompts {
		if !validPromptName(pr.Name) {
			log.Warn("prompt left out: name must be 1-128 printable characters", "name", pr.Name)
			continue
		}
		entries = append(entries, &promptEntry{plugin: p, prompt: pr, original: pr.Name})
	}
	return entries
}

// validPromptName reports whether name may be a prompt's: 1 to 128
// printable characters.
func validPromptName(name string) bool {
	return name != "" && len(name) <= 128 && !strings.ContainsFunc(name, isControl)
}

// addPrompts adds a plugin's checked prompts under the names the naming
// rule gives them.
func (c *Catalog) addPrompts(p *Plugin, prompts *[]*promptEntry, log *slog.Logger) {
	taken := func(n string) (string, bool) {
		e, ok := c.promptIndex[n]
		if !ok {
			return "", false
		}
		return e.plugin.Name, true
	}
	for _, pr := range deref(prompts) {
		name := exposedName(p, pr.original, taken, validPromptName, "prompt", log)
		if name == "" {
			continue
		}
		e := *pr
		e.prompt.Name = name
		c.prompts = append(c.prompts, &e)
		c.promptIndex[name] = &e
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

// checkResources returns the resources that obey the rules, warning of
// the others.
func (p *Plugin) checkResources(resources []abi.Resource, log *slog.Logger) []*resourceEntry {
	var entries []*resourceEntry
	for _, r := range resources {
		if !validURI(r.URI) {
			log.Warn("resource left out: uri must be an absolute URI", "uri", r.URI)
			continue
		}
		if r.Name == "" {
			r.Name = r.URI
		}
		entries = append(entries, &resourceEntry{plugin: p, resource: r})
	}
	return entries
}

// addResources adds a plugin's checked resources whose URI no earlier
// plugin offers.
func (c *Catalog) addResources(resources *[]*resourceEntry, log *slog.Logger) {
	for _, e := range deref(resources) {
		if owner, ok := c.resourceIndex[e.resource.URI]; ok {
			log.Warn("resource left out: uri already offered", "uri", e.resource.URI, "ownedBy", owner.plugin.Name)
			continue
		}
		c.resources = append(c.resources, e)
		c.resourceIndex[e.resource.URI] = e
	}
}

// checkTemplates returns the resource templates that obey the rules,
// compiled, warning of the others.
func (p *Plugin) checkTemplates(templates []abi.ResourceTemplate, log *slog.Logger) []*templateEntry {
	var entries []*templateEntry
	for _, t := range templates {
		compiled, err := uritemplate.New(t.URITemplate)
		if err != nil || t.URITemplate == "" || strings.ContainsFunc(t.URITemplate, isControl) {
			log.Warn("resource template left out: bad uriTemplate", "uriTemplate", t.URITemplate, "err", err)
			continue
		}
		if t.Name == "" {
			t.Name = t.URITemplate
		}
		entries = append(entries, &templateEntry{plugin: p, template: t, compiled: compiled})
	}
	return entries
}

// resolveResource finds the plugin that serves uri among those v sees: a
// listed resource first, then the first matching template.
func (c *Catalog) resolveResource(uri string, v view) *Plugin {
	owner, _ := c.resourceRoute(uri, v)
	return owner
}

// resourceRoute returns the plugin among those v sees that serves uri, and
// the _meta of the listed resource or the template that routes uri to it
// (whose requirement a read must meet).
func (c *Catalog) resourceRoute(uri string, v view) (*Plugin, abi.Meta) {
	if e, ok := c.resourceIndex[uri]; ok && v.sees(e.plugin) {
		return e.plugin, e.resource.Meta
	}
	for _, t := range c.templates {
		if v.sees(t.plugin) && t.compiled.Match(uri) != nil {
			return t.plugin, t.template.Meta
		}
	}
	return nil, nil
}

// serves reports whether the plugin named plugin serves uri to some client:
// it lists uri, or one of its templates matches it.
func (c *Catalog) serves(plugin, uri string) bool {
	if e, ok := c.resourceIndex[uri]; ok && e.plugin.Name == plugin {
		return true
	}
	return slices.ContainsFunc(c.templates, func(t *templateEntry) bool {
		return t.plugin.Name == plugin && t.compiled.Match(uri) != nil
	})
}

// templateOwner finds the plugin offering the template with this exact
// uriTemplate among those v sees.
func (c *Catalog) templateOwner(uriTemplate string, v view) *Plugin {
	for _, t := range c.templates {
		if t.template.URITemplate == uriTemplate && v.sees(t.plugin) {
			return t.plugin
		}
	}
	return nil
}

// capabilities derives the server capabilities from what the catalog holds
// of the plugins v sees, for the negotiated version. While plugins are
// still loading, any of them may bring tools, prompts, resources or
// completions: all are declared. A legacy session is told every list may change;
// 2026-07-28, whose clients open subscriptions/listen for it, is told so
// of a list only when it can: the catalog may be replaced (reloads:
// Options.CatalogChanges, or plugins still loading) or a plugin may
// announce changes to that list. 2026-07-28 declares tasks as an
// extension.
func (c *Catalog) capabilities(version string, loading, reloads bool, v view) map[string]any {
	legacy := !atLeast(version, Version20260728)
	changes := func(announced bool, features ...string) map[string]any {
		m := map[string]any{}
		if legacy || loading || reloads || announced {
			for _, f := range features {
				m[f] = true
			}
		}
		return m
	}
	caps := map[string]any{"logging": map[string]any{}}
	if announced := c.mayAnnounce(v, abi.HostNotifyToolListChanged, abi.ExportListTools); loading || len(visible(v, c.tools)) > 0 || announced {
		caps["tools"] = changes(announced, "listChanged")
	}
	if announced := c.mayAnnounce(v, abi.HostNotifyPromptListChanged, abi.ExportListPrompts); loading || len(visible(v, c.prompts)) > 0 || announced {
		caps["prompts"] = changes(announced, "listChanged")
	}
	announced := c.mayAnnounce(v, abi.HostNotifyResourceListChanged, abi.ExportListResources, abi.ExportListResourceTemplates)
	if loading || len(visible(v, c.resources)) > 0 || len(visible(v, c.templates)) > 0 || announced {
		caps["resources"] = changes(announced, "listChanged")
		if legacy {
			caps["resources"].(map[string]any)["subscribe"] = true
		}
	}
	if atLeast(version, Version20250326) && (loading || c.completes(v)) {
		caps["completions"] = map[string]any{}
	}
	switch {
	case legacy && atLeast(version, Version20251125) && caps["tools"] != nil:
		caps["tasks"] = taskCapabilities()
	case !legacy && caps["tools"] != nil:
		caps["extensions"] = map[string]any{extTasks: map[string]any{}}
	}
	return caps
}

// mayAnnounce reports whether a plugin v sees that has one of the list
// exports was granted the host function that announces changes to that
// list: its list, empty today, may fill later, so the server declares the
// capability.
func (c *Catalog) mayAnnounce(v view, hostFunction string, exports ...string) bool {
	for _, p := range c.plugins {
		if v.sees(p) && !p.legacy && slices.Contains(p.granted, hostFunction) && slices.ContainsFunc(exports, p.rt.HasExport) {
			return true
		}
	}
	return false
}

// completes reports whether any plugin v sees completes arguments.
func (c *Catalog) completes(v view) bool {
	for _, p := range c.plugins {
		if v.sees(p) && p.rt.HasExport(abi.ExportComplete) && !p.legacy {
			return true
		}
	}
	return false
}
