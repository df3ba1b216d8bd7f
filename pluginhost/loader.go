// Package pluginhost loads plugins into the MCP engine of package host:
// plugin files (wasm modules, or JavaScript run on internal/jsengine) are
// checked against the operator's config before any of their code runs (sha256
// pins, manifests and ABI versions, requested against granted capabilities),
// sandboxed (package sandbox) with their limits and grants, and wrapped in
// the one middleware chain of the operator's call policy (chain.go: drain,
// rate limit, circuit breaker). CheckDir checks a folder without running
// anything, and a Reloader keeps a server's plugins in step with a folder
// and a config (hot swap).
package pluginhost

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
	js "github.com/mcphost/mcphost/internal/jsengine"
	"github.com/mcphost/mcphost/internal/pluginsource"
	"github.com/mcphost/mcphost/sandbox"
)

// pluginFilePattern is the rule for plugin names taken from file names.
var pluginFilePattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Loader loads plugin files into the plugins of an MCP engine.
type Loader struct {
	// Engine compiles and runs the plugins.
	Engine *sandbox.Engine
	// Server is the engine the plugins serve; it implements their host
	// functions.
	Server *host.Server
	// Logger receives the loader's and the plugins' logs. Nil discards
	// them.
	Logger *slog.Logger
	// ListingCacheDir keeps what plugins listed (listingcache.go), so
	// that a plugin loaded again with the same bytes and configuration is
	// listed without running it, and one loaded for the first time is
	// listed on wazero's interpreter; either is compiled on its first
	// call. Empty: every plugin is compiled, started and listed as it
	// loads.
	ListingCacheDir string
	// Observe, when set, returns the sandbox Observer of the plugin name
	// (metrics; nil for none), and the requests a plugin's calls serve
	// learn how long each waited and ran and what the plugin was denied
	// (host.Operation, host.Denial); nil observes nothing.
	Observe func(plugin string) sandbox.Observer
	// Loads, when set, is told of the plugins loaded, swapped and failed,
	// and of the listing cache's hits and misses.
	Loads LoadObserver
	// RateShares, when set, divides each plugin's calls_per_second
	// between the replicas that share it (ratelimit.go); nil: this
	// process admits the whole limit.
	RateShares RateShares
}

func (l *Loader) logger() *slog.Logger {
	if l.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l.Logger
}

// LoadResult is the outcome of loading a plugins folder.
type LoadResult struct {
	// Plugins are the plugins that loaded.
	Plugins []*host.Plugin
	// Errors has one entry per plugin file that did not load.
	Errors []error
	// Failed holds, by plugin name, why each plugin that did not load
	// failed (Reloader.Load sets it; LoadDir leaves it nil).
	Failed map[string]error
}

// NamedNotLoaded returns, in order of name, why each plugin that cfg names
// ([plugins.NAME], not disabled) is not among the plugins res loaded from
// dir: its load error, or that dir holds no file of its name.
func NamedNotLoaded(cfg *config.Config, dir string, res LoadResult) []NotLoaded {
	loaded := map[string]bool{}
	for _, p := range res.Plugins {
		loaded[p.Name] = true
	}
	var out []NotLoaded
	for _, name := range slices.Sorted(maps.Keys(cfg.Plugins)) {
		if !cfg.Named(name) || loaded[name] {
			continue
		}
		err := res.Failed[name]
		if err == nil {
			err = fmt.Errorf("no plugin file %s.wasm or %s%s in %s", name, name, js.Ext, dir)
		}
		out = append(out, NotLoaded{Name: name, Err: err})
	}
	return out
}

// NotLoaded is a plugin that did not load, and why.
type NotLoaded struct {
	Name string
	Err  error
}

// LoadDir loads every .wasm and .js file in dir, in order of name. Each
// plugin is checked before any of its code runs: its manifest's needs must
// be within the grants of cfg, and its ABI version must be known. A plugin
// that fails does not stop the others. A .js file is a JavaScript plugin,
// run by the engine of package pdk/js; a .js and a .wasm file of the same
// name are one plugin name: the first in order of name loads.
func (l *Loader) LoadDir(ctx context.Context, dir string, cfg *config.Config) LoadResult {
	res, _ := l.loadDir(ctx, dir, cfg, nil)
	return res
}

// loadDir is LoadDir, also returning the drain of each plugin loaded, and
// calling compiled (unless nil) each time a plugin's code is compiled.
func (l *Loader) loadDir(ctx context.Context, dir string, cfg *config.Config, compiled func()) (LoadResult, map[*host.Plugin]*drain) {
	var res LoadResult
	files, err := listPluginFiles(dir)
	if err != nil {
		res.Errors = append(res.Errors, fmt.Errorf("reading plugins folder: %w", err))
		return res, nil
	}
	drains := map[*host.Plugin]*drain{}
	for _, f := range files {
		if f.TakenBy != "" {
			res.Errors = append(res.Errors, nameTaken(f.File, f.Name, f.TakenBy))
			continue
		}
		p, d, err := l.load(ctx, filepath.Join(dir, f.File), nil, cfg, compiled)
		switch {
		case err != nil:
			res.Errors = append(res.Errors, fmt.Errorf("%s: %w", f.File, err))
		case p != nil:
			res.Plugins = append(res.Plugins, p)
			drains[p] = d
		}
	}
	return res, drains
}

// nameTaken is the error of a plugin file whose plugin name an earlier
// file (in order of name) gives.
func nameTaken(file, name, by string) error {
	return fmt.Errorf("%s: plugin name %q is taken by %s", file, name, by)
}

// pluginFile is one plugin file of a folder: File, its file name, and Name,
// the plugin name it gives. TakenBy is the file before it (in order of name)
// that gives the same plugin name, if any: that one is the plugin.
type pluginFile struct{ File, Name, TakenBy string }

// listPluginFiles lists the plugin files (see IsPluginFile) in dir, in order
// of name.
func listPluginFiles(dir string) ([]pluginFile, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && IsPluginFile(e.Name()) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	taken := map[string]string{} // plugin name -> file
	files := make([]pluginFile, 0, len(names))
	for _, f := range names {
		name := strings.TrimSuffix(f, filepath.Ext(f))
		other, ok := taken[name]
		if !ok {
			taken[name] = f
		}
		files = append(files, pluginFile{File: f, Name: name, TakenBy: other})
	}
	return files, nil
}

// LoadFile loads one plugin file, a .wasm module or a .js source, exactly as
// LoadDir loads each file of a plugins folder: named after the file, checked
// against its [plugins.NAME] table in cfg (pin, manifest, ABI version,
// grants) before any of its code runs, and sandboxed with those grants and
// limits. It returns nil and no error when cfg disables the plugin. The
// developer commands (call, get-prompt, read, complete) use it to run one
// plugin as serve would.
func (l *Loader) LoadFile(ctx context.Context, path string, cfg *config.Config) (*host.Plugin, error) {
	p, _, err := l.load(ctx, path, nil, cfg, nil)
	return p, err
}

// heldFile is a plugin file read already: its bytes (up to one beyond the
// largest the plugin may have) and their SHA-256.
type heldFile struct {
	data   []byte
	sha256 [sha256.Size]byte
}

// load validates and provisions one plugin file, path, and returns it with
// the drain of its call chain; it calls compiled (unless nil) once the
// plugin's code is compiled, and runs none of the plugin's code before
// compiled returns: its load budget starts then. It returns nil, nil, nil
// for a plugin the config disables. The file is read from path, unless
// held gives it.
func (l *Loader) load(ctx context.Context, path string, held *heldFile, cfg *config.Config, compiled func()) (*host.Plugin, *drain, error) {
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	if !pluginFilePattern.MatchString(name) {
		return nil, nil, fmt.Errorf("plugin name %q (from the file name) must be letters, digits, '-' and '_'", name)
	}
	pc := cfg.Plugin(name)
	if pc.Disabled {
		l.logger().Info("plugin disabled by config", "plugin", name)
		return nil, nil, nil
	}
	if held == nil {
		b, err := readAtMost(path, pluginsource.MaxFileBytes(pc)+1)
		if err != nil {
			return nil, nil, err
		}
		held = &heldFile{data: b, sha256: sha256.Sum256(b)}
	}
	wasm := held.data
	var err error
	if int64(len(wasm)) > pluginsource.MaxFileBytes(pc) {
		return nil, nil, fmt.Errorf("the plugin file is larger than the %d MiB max_module_mib allows (raise max_module_mib in [plugins.%s] or [defaults])",
			pluginsource.MaxFileBytes(pc)>>20, pc.Name)
	}
	if err := checkPin(pc, held.sha256); err != nil {
		return nil, nil, err
	}
	module, grants, isJS := wasm, grantsOf(pc), filepath.Ext(path) == js.Ext
	if grants.Secrets, err = pc.SecretValues(); err != nil {
		return nil, nil, err
	}
	var manifest *abi.Manifest
	language := "JavaScript"
	if isJS {
		// The plugin is the embedded JavaScript engine; the source reaches
		// it as reserved config values, the manifest is a leading comment.
		if manifest, err = js.Manifest(wasm); err != nil {
			return nil, nil, err
		}
		if grants.Config, err = js.Config(filepath.Base(path), wasm, grants.Config); err != nil {
			return nil, nil, err
		}
		module = js.Engine()
	} else {
		info, err := sandbox.Inspect(wasm)
		if err != nil {
			return nil, nil, fmt.Errorf("not a valid wasm module: %w", err)
		}
		if manifest, err = info.Manifest(); err != nil {
			return nil, nil, err
		}
		language = languageOf(info)
	}
	if manifest != nil && manifest.ABI != abi.Version {
		return nil, nil, fmt.Errorf("plugin is built for mcphost ABI %d; this mcphost speaks ABI %d", manifest.ABI, abi.Version)
	}
	if missing := missingGrants(name, manifest, pc); missing != "" {
		return nil, nil, fmt.Errorf("plugin needs grants it does not have; add to %s:\n%s", configName(cfg), missing)
	}
	keyring, err := keyringValues(ctx, pc, grants.Secrets)
	if err != nil {
		return nil, nil, err
	}
	grants.Redacted = slices.Collect(maps.Values(keyring))
	clients, err := oauth2Clients(pc)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range clients { // the plugin never sees their secrets, but nothing it or its callers send may show them
		grants.Redacted = append(grants.Redacted, c.ClientSecret)
	}
	var tokens *sandbox.Redactions // the access tokens get_access_token hands the plugin
	if len(clients) > 0 {
		tokens = new(sandbox.Redactions)
	}
	impl := l.withHyperMCP(name, clients, keyring, tokens, l.Server.HostFunctions(name))
	sopts := sandbox.Options{
		Limits:        pc.Limits.Sandbox(),
		Grants:        grants,
		Redactions:    tokens,
		HostFunctions: hostFunctions(name, pc.HostFunctions, impl),
		Logger:        l.Logger,
		CheckOutput:   checkOutput,
	}
	if l.Observe != nil {
		sopts.Observer = requestReporter{plugin: name, next: l.Observe(name)}
	}
	sum := held.sha256
	cache := listingCache(l.ListingCacheDir)
	key := ""
	if cache != "" {
		key = listingKey(name, sum, cfg, pc, grants)
	}
	cached := cache.read(key)
	if key != "" && l.Loads != nil {
		l.Loads.ListingCache(cached != nil)
	}
	if cached != nil && !isJS && cache.module(sum) == nil {
		cached = nil // its copy is gone: load it as if new
	}
	fromCache := cached != nil // not listed at this start
	// The plugin reads its module again at each build (its first call
	// after an idle unload, sandbox.EngineOptions.UnloadIdleAfter): from
	// the copy in the cache, which holds nothing in memory, or else as held
	// here (JavaScript's engine is in the binary anyway).
	sopts.Reread = func() ([]byte, error) { return module, nil }
	if !isJS {
		if reread := cache.keepModule(sum, wasm); reread != nil {
			sopts.Reread = reread
		}
	}
	budget := cmp.Or(pc.Limits.LoadBudget, host.DefaultListBudget)
	opts := pluginOptions(cfg, pc, budget, manifest == nil, func(s string) string { return tokens.Replace(grants.Redact(s)) })
	if compiled != nil {
		compiled = sync.OnceFunc(compiled) // the interpreter's compile, or the compiler's
	}
	listedBy := "cache (compiled on its first call)"
	if cached == nil && key != "" && !isJS && !mayListTheOutside(pc, grants) {
		// Not listed before: listed on wazero's interpreter, which compiles
		// a module in a fraction of the compiler's time, and compiled on
		// its first call. A plugin the interpreter cannot list in
		// time (or at all) is loaded as before, compiled, which says why.
		// JavaScript plugins are not: their engine is one module, compiled
		// once for them all, and too slow on the interpreter. Nor are
		// plugins granted host calls: after attacks on one listed on the
		// interpreter, the e2e hostile test found 40 MB more resident than
		// before them (RATIONALE.md, "Why do installed plugins cost
		// nothing until they are called?").
		entry, err := l.listInterpreted(ctx, name, module, sopts, budget, opts, compiled)
		switch {
		case err != nil:
			l.logger().Debug("listing on the interpreter failed; loading compiled", "plugin", name, "err", err)
		case cache.write(key, sum, wasm, entry) != nil:
			l.logger().Warn("keeping what the plugin listed failed; it is loaded compiled", "plugin", name)
		default:
			cached, listedBy = entry, "the interpreter (compiled on its first call)"
		}
	}
	var rt *sandbox.Plugin
	if cached != nil {
		rt, err = l.Engine.Defer(ctx, name, module, sopts)
	} else {
		rt, err = l.Engine.Compile(ctx, name, module, sopts)
		listedBy = "running it"
	}
	if compiled != nil {
		compiled()
	}
	if err != nil {
		return nil, nil, err
	}
	started := time.Now()
	ctx, cancel := withLoadBudget(ctx, name, budget)
	defer cancel()
	if cached == nil {
		if err := start(ctx, rt, isJS); err != nil {
			return nil, nil, err
		}
	}
	listing := &listingRuntime{Runtime: isolated(rt, pc.Isolation), built: rt.Built, served: cached}
	if cached == nil && key != "" {
		listing.startRecording()
	}
	rtChain, d := chain(name, pc, listing, l.RateShares, l.logger())
	d.sandbox = rt
	d.about = about(path, held.sha256, manifest, language, pc)
	if fromCache && mayListTheOutside(pc, grants) {
		listedBy = "cache (listed again once served: it is granted host calls)"
		d.refreshListing = l.listingRefresh(name, rt, listing, budget, func(e *listingEntry) error { return cache.write(key, sum, wasm, e) })
	}
	p := host.NewPlugin(name, pc.Prefix, rtChain, opts...)
	if err := p.ListAhead(ctx, l.Logger); err != nil {
		_ = p.Close(context.Background()) // ctx has ended
		return nil, nil, err
	}
	if e := listing.recorded(); e != nil {
		if err := cache.write(key, sum, wasm, e); err != nil {
			l.logger().Warn("keeping what the plugin listed failed; it is listed by running it at the next start too", "plugin", name, "err", err)
		}
	}
	l.logger().Info("plugin loaded", "plugin", name, "sha256", hex.EncodeToString(sum[:]), "bytes", len(wasm),
		"took", time.Since(started).Round(time.Millisecond), "listed", listedBy)
	return p, d, nil
}

// listingRefresh returns the refresh of plugin rt, listed from a cache
// entry that its grants may have made stale (mayListTheOutside), to run
// once the server serves it: the plugin is built, then, within its load
// budget (which starts after the compile, as at a load), its listing
// exports run again through the server (Refresh), which sends clients
// list_changed for what changed; what they answered becomes the entry,
// written with write. A listing that fails keeps the cached lists.
func (l *Loader) listingRefresh(name string, rt *sandbox.Plugin, listing *listingRuntime, budget time.Duration, write func(*listingEntry) error) func(context.Context) {
	return func(ctx context.Context) {
		if err := rt.Build(ctx); err != nil {
			l.logger().Warn("listing the plugin again after its start from the listing cache failed; its cached lists stay", "plugin", name, "err", err)
			return
		}
		ctx, cancel := withLoadBudget(ctx, name, budget)
		defer cancel()
		listing.mu.Lock()
		cached := listing.served
		listing.served = nil // the listing calls build the plugin and run
		listing.mu.Unlock()
		listing.startRecording()
		changes := l.Server.Refresh(ctx, name)
		e := listing.recorded()
		if e == nil || len(e.Calls) == 0 {
			listing.serve(cached)
			l.logger().Warn("listing the plugin again after its start from the listing cache failed; its cached lists stay", "plugin", name)
			return
		}
		listing.serve(e)
		if err := write(e); err != nil {
			l.logger().Warn("keeping what the plugin listed failed", "plugin", name, "err", err)
		}
		l.logger().Info("plugin listed again after its start from the listing cache", "plugin", name,
			"tools_changed", changes.Tools, "prompts_changed", changes.Prompts, "resources_changed", changes.Resources)
	}
}

// withLoadBudget bounds a load's running of the plugin by its load budget;
// it runs from when the plugin is compiled: compiling is not
// interruptible, and package sandbox bounds it by the module's size and
// structure.
func withLoadBudget(ctx context.Context, name string, budget time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, budget, fmt.Errorf(
		"the plugin did not finish loading within its load budget of %v (load_budget in [plugins.%s] or [defaults])", budget, name))
}

// start makes a loading plugin's first instance and, for a JavaScript
// plugin, checks its source.
func start(ctx context.Context, rt *sandbox.Plugin, isJS bool) error {
	if err := rt.Start(ctx); err != nil {
		return err
	}
	if isJS {
		if err := js.Check(ctx, rt); err != nil {
			_ = rt.Close(ctx) // the load error says more
			return err
		}
	}
	return nil
}

// pluginOptions are the engine's settings of a plugin loaded with pc under
// cfg, listed within budget; hyperMCP for a plugin without a manifest.
// redact removes the plugin's secret values from the arguments the audit
// trail records (audit_arguments).
func pluginOptions(cfg *config.Config, pc config.PluginConfig, budget time.Duration, hyperMCP bool, redact func(string) string) []host.PluginOption {
	opts := []host.PluginOption{
		host.WithGrantedHostFunctions(pc.HostFunctions),
		host.WithTaskSupport(pc.TaskSupport),
		host.WithCacheHints(pc.CacheTTL, pc.CacheScope == config.CacheScopePublic),
		host.WithExposure(exposure(pc)),
		host.WithRank(pc.Rank),
		host.WithToolNames(toolNames(cfg)),
		host.WithListBudget(budget),
		host.WithRequiredScopes(pc.RequireScopes),
	}
	if hyperMCP { // written for hyper-mcp (or mcp.run): its envelope, exactly
		opts = append(opts, host.WithExactHyperMCPContext())
	}
	if pc.AuditArguments {
		opts = append(opts, host.WithAuditArguments(redact))
	}
	return opts
}

// listInterpreted loads the plugin on wazero's interpreter, with the same
// checks, rewrite, limits and load budget as a compiled load, lists it as
// the engine would, and returns what its listing exports answered. The
// interpreted plugin is closed then: calls go to the compiled one.
func (l *Loader) listInterpreted(ctx context.Context, name string, module []byte, sopts sandbox.Options, budget time.Duration,
	opts []host.PluginOption, compiled func()) (*listingEntry, error) {
	sopts.Interpret = true
	rt, err := l.Engine.Compile(ctx, name, module, sopts)
	if compiled != nil {
		compiled()
	}
	if err != nil {
		return nil, err
	}
	defer rt.Close(context.Background())
	ctx, cancel := withLoadBudget(ctx, name, budget)
	defer cancel()
	if err := rt.Start(ctx); err != nil {
		return nil, err
	}
	rec := &listingRuntime{Runtime: rt, built: func() bool { return true }, record: &listingEntry{Version: listingCacheVersion}}
	if err := host.NewPlugin(name, "", rec, opts...).ListAhead(ctx, l.Logger); err != nil {
		return nil, err
	}
	return rec.recorded(), nil
}

// toolNames is the host's rule for exposed tool names that cfg sets.
func toolNames(cfg *config.Config) host.ToolNames {
	if cfg.Server.ToolNames == config.ToolNamesMCP {
		return host.ToolNamesMCP
	}
	return host.ToolNamesPortable
}

func configName(cfg *config.Config) string {
	if cfg.Path == "" {
		return "mcphost.toml"
	}
	return cfg.Path
}

func grantsOf(pc config.PluginConfig) sandbox.Grants {
	g := sandbox.Grants{AllowedHosts: pc.AllowedHosts, AllowPrivateNetwork: pc.AllowPrivateNetwork, Config: pc.Config}
	for _, m := range pc.Mounts {
		g.Mounts = append(g.Mounts, sandbox.Mount{HostPath: m.Host, GuestPath: m.Guest, ReadOnly: m.ReadOnly})
	}
	return g
}

// missingGrants compares what a plugin's manifest asks for with what the
// operator granted. It returns the config lines that would grant the rest,
// or "" when nothing is missing.
func missingGrants(name string, m *abi.Manifest, pc config.PluginConfig) string {
	if m == nil {
		return ""
	}
	var fns, hosts, keys, paths []string
	for _, f := range m.Needs.HostFunctions {
		if !isGranted(pc.HostFunctions, f) {
			fns = append(fns, f)
		}
	}
	for _, h := range m.Needs.Hosts {
		if !slices.Contains(pc.AllowedHosts, h) && !sandbox.HostGranted(pc.AllowedHosts, h) {
			hosts = append(hosts, h)
		}
	}
	for _, k := range m.Needs.Config {
		if _, ok := pc.Config[k]; !ok && pc.Secrets[k] == (config.Secret{}) {
			keys = append(keys, k)
		}
	}
	for _, p := range m.Needs.Paths {
		if !slices.ContainsFunc(pc.Mounts, func(mt config.Mount) bool { return mt.Guest == p }) {
			paths = append(paths, p)
		}
	}
	if len(fns)+len(hosts)+len(keys)+len(paths) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  [plugins.%s]\n", name)
	if len(fns) > 0 {
		fmt.Fprintf(&b, "  host_functions = %s\n", tomlList(append(slices.Clone(pc.HostFunctions), fns...)))
	}
	if len(hosts) > 0 {
		fmt.Fprintf(&b, "  allowed_hosts = %s\n", tomlList(append(slices.Clone(pc.AllowedHosts), hosts...)))
	}
	if len(keys) > 0 {
		fmt.Fprintf(&b, "  config = { %s }\n", strings.Join(mapList(keys, func(k string) string { return fmt.Sprintf("%s = \"...\"", k) }), ", "))
	}
	for _, p := range paths {
		fmt.Fprintf(&b, "  [[plugins.%s.mounts]]\n  host = \"/a/host/directory\"\n  guest = %q\n  mode = \"ro\"\n", name, p)
	}
	return strings.TrimRight(b.String(), "\n")
}

func tomlList(items []string) string {
	return "[" + strings.Join(mapList(items, func(s string) string { return fmt.Sprintf("%q", s) }), ", ") + "]"
}

func mapList(items []string, f func(string) string) []string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = f(s)
	}
	return out
}

// readAtMost reads at most n bytes of the file at path, into a buffer of
// the size the file has (or n).
func readAtMost(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	b := make([]byte, min(st.Size(), n))
	read, err := io.ReadFull(f, b)
	if err == io.ErrUnexpectedEOF { // the file shrank: the caller sees the sizes differ
		err = nil
	}
	return b[:read], err
}

// checkPin returns an error when pc pins the plugin file to a SHA-256
// other than sum, the file's.
func checkPin(pc config.PluginConfig, sum [sha256.Size]byte) error {
	if pc.SHA256 == "" {
		return nil
	}
	if actual := hex.EncodeToString(sum[:]); actual != pc.SHA256 {
		return fmt.Errorf("plugin file does not match its sha256 pin: expected %s, actual %s "+
			"(replace the file, or update sha256 in [plugins.%s] if the change is expected)", pc.SHA256, actual, pc.Name)
	}
	return nil
}
