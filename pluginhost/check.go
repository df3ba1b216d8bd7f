package pluginhost

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/config"
	js "github.com/mcphost/mcphost/internal/jsengine"
	"github.com/mcphost/mcphost/internal/pluginsource"
	"github.com/mcphost/mcphost/sandbox"
)

// Problem is one thing CheckDir found wrong.
type Problem struct {
	// File is the plugin file, or the config file for problems of the
	// configuration alone.
	File string
	// Msg describes the problem on one line.
	Msg string
	// Add holds the config lines that would fix it, when adding grants
	// would; "" otherwise.
	Add string
}

// String formats p as "file: message".
func (p Problem) String() string { return p.File + ": " + p.Msg }

// CheckReport is what CheckDir found.
type CheckReport struct {
	// Plugins are the names of the plugin files checked (disabled ones
	// included).
	Plugins []string
	// Problems has one entry per problem, in order of file.
	Problems []Problem
}

// CheckDir checks the plugins in dir against cfg as LoadDir would load
// them, without compiling or running any plugin code: file names, sha256
// pins, secrets and OAuth2 client secrets (their sources are read, their
// values never shown), embedded manifests and ABI versions, the grants
// each manifest asks for and the host functions each module imports
// against those granted, and the mounts' host directories. A plugin whose table has a source is
// fetched from it as serve fetches it (verified, its tag pinned; a file of
// its name in dir is not used, as by serve) and then checked. It also
// reports [plugins.NAME] tables that name no plugin file.
func CheckDir(ctx context.Context, dir string, cfg *config.Config, log *slog.Logger) CheckReport {
	var rep CheckReport
	files, err := listPluginFiles(dir)
	if err != nil {
		rep.Problems = append(rep.Problems, Problem{File: dir, Msg: fmt.Sprintf("reading plugins folder: %v", err)})
		return rep
	}
	seen := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(cfg.Plugins)) {
		if pc := cfg.Plugin(name); pc.Source != "" && !pc.Disabled {
			seen[name] = true
			rep.Plugins = append(rep.Plugins, name)
			rep.Problems = append(rep.Problems, checkSource(ctx, pc, cfg, log)...)
		}
	}
	for _, f := range files {
		path := filepath.Join(dir, f.File)
		if seen[f.Name] {
			continue // fetched from its source instead
		}
		if f.TakenBy != "" {
			rep.Problems = append(rep.Problems, Problem{File: path, Msg: fmt.Sprintf("plugin name %q is taken by %s", f.Name, f.TakenBy)})
			continue
		}
		seen[f.Name] = true
		rep.Plugins = append(rep.Plugins, f.Name)
		rep.Problems = append(rep.Problems, checkFile(path, f.Name, cfg)...)
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Plugins)) {
		if !seen[name] && !cfg.Plugins[name].Disabled {
			rep.Problems = append(rep.Problems, Problem{File: configName(cfg),
				Msg: fmt.Sprintf("[plugins.%s] names no plugin file in %s (a typo? add disabled = true to keep it)", name, dir)})
		}
	}
	return rep
}

// checkSource fetches the plugin of pc from its source into a temporary
// folder and checks it; its problems name the plugin and its source.
func checkSource(ctx context.Context, pc config.PluginConfig, cfg *config.Config, log *slog.Logger) []Problem {
	where := fmt.Sprintf("%s (%s)", pc.Name, pc.Source)
	tmp, err := os.MkdirTemp("", "mcphost-check-")
	if err != nil {
		return []Problem{{File: where, Msg: err.Error()}}
	}
	defer os.RemoveAll(tmp)
	path, _, err := pluginsource.FetchToDir(ctx, cfg, pc, tmp, log)
	if err != nil {
		return []Problem{{File: where, Msg: err.Error()}}
	}
	problems := checkFile(path, pc.Name, cfg)
	for i := range problems {
		problems[i].File = where
	}
	return problems
}

// checkFile checks one plugin file.
func checkFile(path, name string, cfg *config.Config) []Problem {
	var out []Problem
	problem := func(format string, args ...any) {
		out = append(out, Problem{File: path, Msg: fmt.Sprintf(format, args...)})
	}
	if !pluginFilePattern.MatchString(name) {
		problem("plugin name %q (from the file name) must be letters, digits, '-' and '_'", name)
		return out
	}
	pc := cfg.Plugin(name)
	if pc.Disabled {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		problem("%v", err)
		return out
	}
	if err := checkPin(pc, sha256.Sum256(data)); err != nil {
		problem("%v", err)
	}
	if _, err := pc.SecretValues(); err != nil {
		problem("%v", err)
	}
	if _, err := keyringValues(context.Background(), pc, nil); err != nil {
		problem("%v", err)
	}
	for i := range pc.OAuth2 {
		if _, err := pc.OAuth2Secret(i); err != nil {
			problem("%v", err)
		}
	}
	for _, m := range pc.Mounts {
		if st, err := os.Stat(m.Host); err != nil || !st.IsDir() {
			problem("mount %s (guest %s): host directory does not exist or is not a directory", m.Host, m.Guest)
		}
	}
	var manifest *abi.Manifest
	var imports []string
	if filepath.Ext(path) == js.Ext {
		if manifest, err = js.Manifest(data); err != nil {
			problem("%v", err)
			return out
		}
	} else {
		info, err := sandbox.Inspect(data)
		if err != nil {
			problem("not a valid wasm module: %v", err)
			return out
		}
		if manifest, err = info.Manifest(); err != nil {
			problem("%v", err)
			return out
		}
		imports = info.HostImports()
	}
	if manifest == nil {
		problem("no embedded manifest: the plugin declares neither its ABI version nor its needs (it may still load)")
	} else if manifest.ABI != abi.Version {
		problem("plugin is built for mcphost ABI %d; this mcphost speaks ABI %d", manifest.ABI, abi.Version)
	}
	if missing := missingGrants(name, manifest, pc); missing != "" {
		out = append(out, Problem{File: path, Msg: "plugin needs grants it does not have", Add: missing})
	}
	for _, f := range imports {
		switch {
		case !slices.Contains(abi.HostFunctionNames(), f):
			problem("imports unknown host function %q: it will not load", f)
		case !isGranted(pc.HostFunctions, f) &&
			(manifest == nil || !slices.Contains(manifest.Needs.HostFunctions, f)):
			problem("imports host function %s, which is not granted and not in its manifest's needs: calls to it will fail", f)
		}
	}
	return out
}
