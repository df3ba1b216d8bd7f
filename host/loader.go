package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/config"
	js "github.com/mcphost/mcphost/internal/jsengine"
	"github.com/mcphost/mcphost/sandbox"
)

// pluginFilePattern is the rule for plugin names taken from file names.
var pluginFilePattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// LoadResult is the outcome of loading a plugins folder.
type LoadResult struct {
	// Plugins are the plugins that loaded.
	Plugins []*Plugin
	// Errors has one entry per plugin file that did not load.
	Errors []error
}

// LoadDir loads every .wasm and .js file in dir, in order of name. Each
// plugin is checked before any of its code runs: its manifest's needs must
// be within the grants of cfg, and its ABI version must be known. A plugin
// that fails does not stop the others. A .js file is a JavaScript plugin,
// run by the engine of package pdk/js; a .js and a .wasm file of the same
// name are one plugin name: the first in order of name loads.
func (s *Server) LoadDir(ctx context.Context, engine *sandbox.Engine, dir string, cfg *config.Config) LoadResult {
	var res LoadResult
	files, err := listPluginFiles(dir)
	if err != nil {
		res.Errors = append(res.Errors, fmt.Errorf("reading plugins folder: %w", err))
		return res
	}
	for _, f := range files {
		if f.TakenBy != "" {
			res.Errors = append(res.Errors, fmt.Errorf("%s: plugin name %q is taken by %s", f.File, f.Name, f.TakenBy))
			continue
		}
		p, err := s.loadFile(ctx, engine, filepath.Join(dir, f.File), cfg)
		switch {
		case err != nil:
			res.Errors = append(res.Errors, fmt.Errorf("%s: %w", f.File, err))
		case p != nil:
			res.Plugins = append(res.Plugins, p)
		}
	}
	return res
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

// loadFile validates and provisions one plugin file. It returns nil, nil for
// a plugin the config disables.
func (s *Server) loadFile(ctx context.Context, engine *sandbox.Engine, path string, cfg *config.Config) (*Plugin, error) {
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	if !pluginFilePattern.MatchString(name) {
		return nil, fmt.Errorf("plugin name %q (from the file name) must be letters, digits, '-' and '_'", name)
	}
	pc := cfg.Plugin(name)
	if pc.Disabled {
		s.logger.Info("plugin disabled by config", "plugin", name)
		return nil, nil
	}
	wasm, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if err := checkPin(pc, wasm); err != nil {
		return nil, err
	}
	module, grants, isJS := wasm, grantsOf(pc), filepath.Ext(path) == js.Ext
	if grants.Secrets, err = pc.SecretValues(); err != nil {
		return nil, err
	}
	var manifest *abi.Manifest
	if isJS {
		// The plugin is the embedded JavaScript engine; the source reaches
		// it as reserved config values, the manifest is a leading comment.
		if manifest, err = js.Manifest(wasm); err != nil {
			return nil, err
		}
		if grants.Config, err = js.Config(filepath.Base(path), wasm, grants.Config); err != nil {
			return nil, err
		}
		module = js.Engine()
	} else {
		info, err := sandbox.Inspect(wasm)
		if err != nil {
			return nil, fmt.Errorf("not a valid wasm module: %w", err)
		}
		if manifest, err = info.Manifest(); err != nil {
			return nil, err
		}
	}
	if manifest != nil && manifest.ABI != abi.Version {
		return nil, fmt.Errorf("plugin is built for mcphost ABI %d; this mcphost speaks ABI %d", manifest.ABI, abi.Version)
	}
	if missing := missingGrants(name, manifest, pc); missing != "" {
		return nil, fmt.Errorf("plugin needs grants it does not have; add to %s:\n%s", configName(cfg), missing)
	}
	rt, err := engine.Load(ctx, name, module, sandbox.Options{
		Limits: sandbox.Limits{
			MemoryMiB:      uint32(pc.Limits.MemoryMiB),
			Timeout:        pc.Limits.Timeout,
			MaxOutputBytes: pc.Limits.MaxOutputBytes,
			MaxInstances:   pc.Limits.MaxInstances,
			MaxQueue:       queueLimit(pc.Limits.MaxQueue),

			HostCallsPerSecond: pc.Limits.HostCallsPerSecond,
		},
		Grants:        grants,
		HostFunctions: s.HostFunctions(name, pc.HostFunctions),
		Logger:        s.logger,
	})
	if err != nil {
		return nil, err
	}
	if isJS {
		if err := js.Check(ctx, rt); err != nil {
			_ = rt.Close(ctx) // the load error says more
			return nil, err
		}
	}
	sum := sha256.Sum256(wasm)
	s.logger.Info("plugin loaded", "plugin", name, "sha256", hex.EncodeToString(sum[:]), "bytes", len(wasm))
	p := NewPlugin(name, pc.Prefix, guardRuntime(name, pc, rt, s.logger))
	p.granted = slices.Clone(pc.HostFunctions)
	p.taskSupport = pc.TaskSupport
	return p, nil
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
		if !slices.Contains(pc.HostFunctions, f) && !slices.Contains(pc.HostFunctions, hostAliases[f]) {
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

// SetCatalog makes the server serve c from now on, and tells initialized
// sessions which of its lists differ from the previous catalog's (see
// ReplacePlugins).
func (s *Server) SetCatalog(c *Catalog) {
	s.replaceCatalog(func(*Catalog) *Catalog { return c })
}

// Logger returns the server's logger.
func (s *Server) Logger() *slog.Logger { return s.logger }
