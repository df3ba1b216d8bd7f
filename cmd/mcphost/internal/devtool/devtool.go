// Package devtool is mcphost's plugin developer commands: new (a plugin
// from a template), build, inspect, and call, get-prompt, read and complete,
// which run one request against one plugin file through the protocol
// engine in process, without an MCP client.
package devtool

import "github.com/spf13/cobra"

// Commands returns the developer commands of mcphost at version.
func Commands(version string) []*cobra.Command {
	return []*cobra.Command{
		newNewCommand(), newBuildCommand(), newInspectCommand(version),
		newCallCommand(version), newGetPromptCommand(version), newReadCommand(version), newCompleteCommand(version),
	}
}
