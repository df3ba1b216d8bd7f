package cli

import (
	"fmt"
	"os"

	"github.com/mcphost/mcphost/abi"
	"github.com/spf13/cobra"
)

func newManifestCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "manifest",
		Short: "Work with the manifest a plugin embeds (its ABI version and declared needs)",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "embed PLUGIN.wasm MANIFEST.json",
		Short: "Append MANIFEST.json to PLUGIN.wasm as the " + abi.ManifestSection + " custom section",
		Args:  cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			return embedManifest(args[0], args[1])
		},
	})
	return cmd
}

// embedManifest appends the manifest file to the plugin, in place.
func embedManifest(wasmPath, manifestPath string) error {
	manifest, err := os.ReadFile(manifestPath)
	if err != nil {
		return err
	}
	wasm, err := os.ReadFile(wasmPath)
	if err != nil {
		return err
	}
	out, err := abi.EmbedManifest(wasm, manifest)
	if err != nil {
		return fmt.Errorf("%s: %w", manifestPath, err)
	}
	return os.WriteFile(wasmPath, out, 0o644)
}
