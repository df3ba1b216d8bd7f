package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sandbox"
	"github.com/spf13/cobra"
)

// defaultConfigPath is read when --config is not given and the file exists.
const defaultConfigPath = "mcphost.toml"

// shutdownGrace is how long requests in flight at stdin EOF may run on.
const shutdownGrace = 10 * time.Second

type serveFlags struct {
	plugins   string
	config    string
	transport string
	listen    string
	logLevel  string
}

func newServeCommand() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve MCP from the plugins in a folder",
		Long: `Serve loads every .wasm plugin in the plugins folder into its own sandbox and
serves the union of their tools, prompts, resources and completions over MCP.

On stdio, stdout carries only MCP messages; logs go to stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			// stdout carries MCP messages only: keep it for the transport and
			// send anything else that would print to stdout to stderr.
			mcpOut := os.Stdout
			os.Stdout = os.Stderr
			return serve(ctx, f, os.Stdin, mcpOut, os.Stderr)
		},
	}
	cmd.Flags().StringVar(&f.plugins, "plugins", "./plugins", "folder of plugins to load")
	cmd.Flags().StringVar(&f.config, "config", "", "config file (default ./mcphost.toml when present)")
	cmd.Flags().StringVar(&f.transport, "transport", "stdio", "transport: stdio or http")
	cmd.Flags().StringVar(&f.listen, "listen", "127.0.0.1:8080", "address to listen on with --transport http")
	cmd.Flags().StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	return cmd
}

// newLogger returns a text logger on w at the named level.
func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %q is not one of debug, info, warn, error", level)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lvl})), nil
}

// loadConfig reads the config named by path, or the default file when path
// is empty and it exists, or the built-in defaults.
func loadConfig(path string) (*config.Config, error) {
	if path == "" {
		if _, err := os.Stat(defaultConfigPath); err != nil {
			return config.Default(), nil
		}
		path = defaultConfigPath
	}
	return config.Load(path)
}

func serve(ctx context.Context, f serveFlags, stdin io.Reader, stdout, stderr io.Writer) error {
	logger, err := newLogger(stderr, f.logLevel)
	if err != nil {
		return err
	}
	if f.transport != "stdio" {
		return fmt.Errorf("--transport %q is not available in this build: only stdio is", f.transport)
	}
	cfg, err := loadConfig(f.config)
	if err != nil {
		return err
	}
	cacheDir, err := cfg.CacheDir()
	if err != nil {
		return err
	}
	engine, err := sandbox.NewEngine(sandbox.EngineOptions{CacheDir: cacheDir})
	if err != nil {
		return err
	}
	defer engine.Close()

	srv := host.NewServer(host.Options{
		Name: cfg.Server.Name, Title: cfg.Server.Title, Version: version,
		PageSize: cfg.Server.PageSize, Logger: logger,
	}, nil)
	started := time.Now()
	loaded := srv.LoadDir(ctx, engine, f.plugins, cfg)
	for _, err := range loaded.Errors {
		logger.Error("plugin not loaded", "err", err)
	}
	catalog := host.BuildCatalog(ctx, loaded.Plugins, logger)
	srv.SetCatalog(catalog)
	defer func() {
		for _, p := range catalog.Plugins() {
			_ = p.Close(context.Background())
		}
	}()
	logger.Info("serving", "transport", f.transport, "plugins", len(loaded.Plugins), "failed", len(loaded.Errors),
		"startup", time.Since(started).Round(time.Millisecond), "cache", cacheDir)
	if len(loaded.Plugins) == 0 {
		logger.Warn("no plugins loaded", "folder", f.plugins)
	}
	err = srv.ServeStdio(ctx, stdin, stdout, shutdownGrace)
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}
