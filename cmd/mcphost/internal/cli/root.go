// Package cli is the mcphost command line: the root command, serve, check,
// version, manifest and shell completion, with the developer commands of
// package devtool.
package cli

import (
	"fmt"
	"os"
	"runtime/debug"
	"strings"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/clienv"
	"github.com/mcphost/mcphost/cmd/mcphost/internal/devtool"
	"github.com/spf13/cobra"
)

// Main runs mcphost at version with args (without the program name) on the
// process's standard streams, and returns its exit status.
func Main(version string, args []string) int {
	root := newRootCommand(version)
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "mcphost:", err)
		return 1
	}
	return 0
}

func newRootCommand(version string) *cobra.Command {
	info, _ := debug.ReadBuildInfo()
	root := &cobra.Command{
		Version:       versionLine(version, info),
		Use:           "mcphost",
		Short:         "Serve MCP tools, prompts and resources from sandboxed WebAssembly plugins",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.AddCommand(newServeCommand(version), newCheckCommand(), newVersionCommand(version), newManifestCommand(), newCacheCommand(), newPluginCommand(), newStatusCommand(), newHealthcheckCommand())
	root.AddCommand(devtool.Commands(version)...) // plugin developer commands
	return root
}

func newVersionCommand(version string) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the mcphost version, its commit and the compilation cache in use",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			info, _ := debug.ReadBuildInfo()
			cmd.Println(versionLine(version, info))
			cache := "unknown"
			if cfg, err := clienv.LoadConfig("", defaultPluginsDir); err != nil {
				cache = err.Error()
			} else if dir, err := cfg.CacheDir(); err != nil {
				cache = err.Error()
			} else if dir == "" {
				cache = "off"
			} else {
				cache = dir
			}
			cmd.Println("compilation cache: " + cache)
		},
	}
}

// versionLine describes this build: version (set by make with -ldflags,
// else "dev", else the module version of a go install), the commit, its
// time and whether the tree was modified, the Go version and platform, as
// far as info knows them.
func versionLine(version string, info *debug.BuildInfo) string {
	if info == nil {
		return "mcphost " + version
	}
	if version == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		version = info.Main.Version
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	line := "mcphost " + version
	if rev := settings["vcs.revision"]; rev != "" {
		vcs := []string{"commit " + rev[:min(len(rev), 10)]}
		if t := settings["vcs.time"]; t != "" {
			vcs = append(vcs, t)
		}
		if settings["vcs.modified"] == "true" {
			vcs = append(vcs, "modified")
		}
		line += " (" + strings.Join(vcs, ", ") + ")"
	}
	line += " " + info.GoVersion
	if settings["GOOS"] != "" {
		line += " " + settings["GOOS"] + "/" + settings["GOARCH"]
	}
	return line
}

// configFlagHelp is the help of the --config flag of serve and check.
const configFlagHelp = "config file (default: $" + clienv.ConfigEnv + ", then " + clienv.ConfigFile +
	" in the plugins folder, then in the user's config directory, else built-in defaults; never the working directory's)"

// defaultPluginsDir is the --plugins default of serve and check.
const defaultPluginsDir = "./plugins"
