package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/clienv"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/pluginhost"
	"github.com/spf13/cobra"
)

// errCheckFailed is check's error once it has printed the problems.
var errCheckFailed = errors.New("check found problems")

type checkFlags struct {
	plugins string
	config  string
}

func newCheckCommand() *cobra.Command {
	var f checkFlags
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check the config and every plugin in the folder without serving",
		Long: `Check validates the config file and inspects every plugin in the plugins
folder, and every plugin a [plugins.NAME] source names (fetched and its
signature verified as serve does), as serve would load it, without
compiling or running any plugin code:
its sha256 pin, its secrets' sources, its embedded manifest and ABI version,
the grants its manifest asks for against those in the config, the host
functions it imports, and the mounts' host directories.

It prints one line per problem, then the config lines that would grant what
is missing, and exits with status 1 when there is a problem.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := pluginContext(cmd)
			defer stop()
			return check(ctx, f, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&f.plugins, "plugins", defaultPluginsDir, "folder of plugins to check")
	cmd.Flags().StringVar(&f.config, "config", "", configFlagHelp)
	return cmd
}

// check writes its report to w. It returns errCheckFailed after printing
// the problems, or the error that kept it from checking.
func check(ctx context.Context, f checkFlags, w io.Writer) error {
	cfg, err := clienv.LoadConfig(f.config, f.plugins)
	if err != nil {
		var errs config.Errors
		if !errors.As(err, &errs) {
			return err
		}
		for _, e := range errs {
			fmt.Fprintln(w, e.Error())
		}
		fmt.Fprintf(w, "%s in the config\n", plural(len(errs), "problem"))
		return errCheckFailed
	}
	log, err := clienv.NewLogger(os.Stderr, "warn", "text")
	if err != nil {
		return err
	}
	rep := pluginhost.CheckDir(ctx, f.plugins, cfg, log)
	var adds []string
	for _, p := range rep.Problems {
		fmt.Fprintln(w, p.String())
		if p.Add != "" {
			adds = append(adds, p.Add)
		}
	}
	if len(adds) > 0 {
		file := cfg.Path
		if file == "" {
			file = filepath.Join(f.plugins, clienv.ConfigFile)
		}
		fmt.Fprintf(w, "\nAdd to %s:\n", file)
		for _, a := range adds {
			fmt.Fprintln(w, a)
		}
	}
	if len(rep.Problems) > 0 {
		fmt.Fprintf(w, "%s in %s\n", plural(len(rep.Problems), "problem"), plural(len(rep.Plugins), "plugin"))
		return errCheckFailed
	}
	fmt.Fprintf(w, "ok: %s checked\n", plural(len(rep.Plugins), "plugin"))
	return nil
}

// plural formats n things.
func plural(n int, thing string) string { return count(n, thing, thing+"s") }
