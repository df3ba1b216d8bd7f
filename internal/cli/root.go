// Package cli is the mcphost command line: the root command, serve, check,
// version, manifest and shell completion, with the developer commands of
// package devtool.
package cli

import (
	"fmt"
	"os"

	"github.com/mcphost/mcphost/internal/devtool"
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
	root := &cobra.Command{
		Use:           "mcphost",
		Short:         "Serve MCP tools, prompts and resources from sandboxed WebAssembly plugins",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newServeCommand(version), newCheckCommand(), newVersionCommand(version), newManifestCommand(), newPluginCommand())
	root.AddCommand(devtool.Commands(version)...) // plugin developer commands
	return root
}

func newVersionCommand(version string) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the mcphost version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			cmd.Printf("mcphost %s\n", version)
		},
	}
}
