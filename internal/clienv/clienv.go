// Package clienv holds what the mcphost commands that run plugins (serve,
// check and the developer commands) read the same way: the config file and
// the level of mcphost's own logs.
package clienv

import (
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/mcphost/mcphost/config"
)

// DefaultConfigPath is read when --config is not given and the file exists.
const DefaultConfigPath = "mcphost.toml"

// NewLogger returns a text logger on w at the named level (--log-level).
func NewLogger(w io.Writer, level string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %q is not one of debug, info, warn, error", level)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lvl})), nil
}

// LoadConfig reads the config named by path (--config), or the default
// file when path is empty and it exists, or the built-in defaults.
func LoadConfig(path string) (*config.Config, error) {
	if path == "" {
		if _, err := os.Stat(DefaultConfigPath); err != nil {
			return config.Default(), nil
		}
		path = DefaultConfigPath
	}
	return config.Load(path)
}
