package main

import (
	"encoding/json"
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

// embedManifest validates the manifest file and appends it to the plugin.
func embedManifest(wasmPath, manifestPath string) error {
	raw, err := os.ReadFile(manifestPath)
	if err != nil {
		return err
	}
	var m abi.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("%s: %w", manifestPath, err)
	}
	if m.ABI != abi.Version {
		return fmt.Errorf("%s: \"abi\" is %d, want %d", manifestPath, m.ABI, abi.Version)
	}
	compact, err := json.Marshal(m)
	if err != nil {
		return err
	}
	wasm, err := os.ReadFile(wasmPath)
	if err != nil {
		return err
	}
	return os.WriteFile(wasmPath, abi.AppendCustomSection(wasm, abi.ManifestSection, compact), 0o644)
}
