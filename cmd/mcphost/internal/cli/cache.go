package cli

import (
	"fmt"
	"io"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/clienv"
	"github.com/mcphost/mcphost/cmd/mcphost/internal/diskcache"
	"github.com/mcphost/mcphost/config"
	"github.com/spf13/cobra"
)

type cacheFlags struct {
	config  string
	plugins string
}

func newCacheCommand() *cobra.Command {
	var f cacheFlags
	cmd := &cobra.Command{
		Use:   "cache",
		Short: "List or prune the compilation cache",
		Long: `The compilation cache keeps plugins' compiled code between starts
([server] cache_dir). serve keeps it within [server] cache_max_mib, removing
the least recently used entries once plugins are loaded.`,
	}
	cmd.PersistentFlags().StringVar(&f.config, "config", "", configFlagHelp)
	cmd.PersistentFlags().StringVar(&f.plugins, "plugins", defaultPluginsDir, "plugins folder, where the config may be")
	ls := &cobra.Command{
		Use:   "ls",
		Short: "List the cache's entries, most recently used first, and their total against cache_max_mib",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, dir, err := cacheOf(f)
			if err != nil {
				return err
			}
			entries, total, err := diskcache.List(dir)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%s: %s, %s of %d MiB (cache_max_mib)\n", dir, count(len(entries), "entry", "entries"), mib(total), cfg.Server.CacheMaxMiB)
			for _, e := range entries {
				fmt.Fprintf(w, "%10s  %s  %s\n", mib(e.Bytes), e.Used.Format("2006-01-02 15:04"), e.Name)
			}
			return nil
		},
	}
	var all bool
	prune := &cobra.Command{
		Use:   "prune",
		Short: "Remove the least recently used entries beyond cache_max_mib (--all: every entry)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, dir, err := cacheOf(f)
			if err != nil {
				return err
			}
			limit := int64(cfg.Server.CacheMaxMiB) << 20
			if all {
				limit = 0
			}
			removed, err := diskcache.Prune(dir, limit)
			reportPruned(cmd.OutOrStdout(), dir, removed)
			return err
		},
	}
	prune.Flags().BoolVar(&all, "all", false, "remove every entry")
	cmd.AddCommand(ls, prune)
	return cmd
}

// cacheOf returns the config f names and its compilation cache folder.
func cacheOf(f cacheFlags) (*config.Config, string, error) {
	cfg, err := clienv.LoadConfig(f.config, f.plugins)
	if err != nil {
		return nil, "", err
	}
	dir, err := cfg.CacheDir()
	if err == nil && dir == "" {
		err = fmt.Errorf("the config turns the compilation cache off (cache_dir = \"off\")")
	}
	return cfg, dir, err
}

// reportPruned writes what Prune removed from the cache in dir.
func reportPruned(w io.Writer, dir string, removed []diskcache.Entry) {
	fmt.Fprintf(w, "%s: removed %s (%s)\n", dir, count(len(removed), "entry", "entries"), mib(diskcache.Total(removed)))
}

// count formats n things, singular or plural.
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// mib formats a size in MiB.
func mib(bytes int64) string { return fmt.Sprintf("%.1f MiB", float64(bytes)/(1<<20)) }
