package main

import (
	"github.com/spf13/cobra"
)

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "mcphost",
		Short:         "Serve MCP tools, prompts and resources from sandboxed WebAssembly plugins",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newServeCommand(), newCheckCommand(), newVersionCommand(), newManifestCommand())
	root.AddCommand(newNewCommand(), newBuildCommand(), newInspectCommand(), newCallCommand(), newGetPromptCommand(), newReadCommand(), newCompleteCommand()) // plugin developer commands
	return root
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the mcphost version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			cmd.Printf("mcphost %s\n", version)
		},
	}
}
