package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcphost/mcphost/auth"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/clienv"
	"github.com/mcphost/mcphost/pluginhost"
	"github.com/mcphost/mcphost/sandbox"
	"github.com/spf13/cobra"
)

// shutdownGrace is how long requests in flight at stdin EOF may run on.
const shutdownGrace = 10 * time.Second

type serveFlags struct {
	plugins   string
	config    string
	transport string
	listen    string // "" unless --listen was given
	logLevel  string
	watch     bool

	version string // mcphost's own, for the server's info
}

func newServeCommand(version string) *cobra.Command {
	f := serveFlags{version: version}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve MCP from the plugins in a folder",
		Long: `Serve loads every plugin in the plugins folder (.wasm modules, and .js files
run on the embedded JavaScript engine) into its own sandbox and serves the
union of their tools, prompts, resources and completions over MCP. With
--watch it follows changes to the folder and the config while serving.

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
	cmd.Flags().StringVar(&f.listen, "listen", "", "address to listen on with --transport http (default: [http] listen in the config, 127.0.0.1:8080)")
	cmd.Flags().StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	cmd.Flags().BoolVar(&f.watch, "watch", true, "watch the plugins folder and the config file, and swap in changed plugins while serving (SIGHUP reloads either way)")
	return cmd
}

func serve(ctx context.Context, f serveFlags, stdin io.Reader, stdout, stderr io.Writer) error {
	logger, err := clienv.NewLogger(stderr, f.logLevel)
	if err != nil {
		return err
	}
	if f.transport != "stdio" && f.transport != "http" {
		return fmt.Errorf("--transport %q: want stdio or http", f.transport)
	}
	cfg, err := clienv.LoadConfig(f.config)
	if err != nil {
		return err
	}
	var ln net.Listener
	if f.transport == "http" {
		// Listen before loading plugins, so a taken port fails fast.
		if ln, err = listen(cfg, f.listen); err != nil {
			return err
		}
		defer ln.Close()
	}
	cacheDir, err := cfg.CacheDir()
	if err != nil {
		return err
	}
	engine, err := sandbox.NewEngine(sandbox.EngineOptions{CacheDir: cacheDir, MemoryBudgetMiB: cfg.Server.MemoryBudgetMiB})
	if err != nil {
		return err
	}
	defer engine.Close()

	srv := host.NewServer(host.Options{
		Name: cfg.Server.Name, Title: cfg.Server.Title, Version: f.version,
		PageSize: cfg.Server.PageSize, Logger: logger, Subject: auth.Subject,
	}, nil)
	started := time.Now()
	reloader := pluginhost.NewReloader(&pluginhost.Loader{Engine: engine, Server: srv, Logger: logger}, f.plugins, cfg)
	loaded := reloader.Load(ctx)
	for _, err := range loaded.Errors {
		logger.Error("plugin not loaded", "err", err)
	}
	catalog := host.BuildCatalog(ctx, loaded.Plugins, logger)
	srv.SetCatalog(catalog)
	defer func() {
		for _, p := range srv.Catalog().Plugins() {
			_ = p.Close(context.Background())
		}
	}()
	defer startReloading(ctx, reloader, cfg.Path, f.watch, logger)() // stops before the plugins close
	logger.Info("serving", "transport", f.transport, "plugins", len(loaded.Plugins), "failed", len(loaded.Errors),
		"startup", time.Since(started).Round(time.Millisecond), "cache", cacheDir)
	if len(loaded.Plugins) == 0 {
		logger.Warn("no plugins loaded", "folder", f.plugins)
	}
	if f.transport == "http" {
		return serveHTTP(ctx, srv, ln, cfg, logger)
	}
	err = srv.ServeStdio(ctx, stdin, stdout, shutdownGrace)
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// listen opens the HTTP listener on --listen or [http] listen, and makes
// the config's address-derived defaults (the auth resource) follow the
// address really bound, e.g. for port 0.
func listen(cfg *config.Config, flagAddr string) (net.Listener, error) {
	if flagAddr != "" {
		if err := cfg.SetListen(flagAddr); err != nil {
			return nil, fmt.Errorf("--listen: %w", err)
		}
	}
	if err := cfg.CheckExposure(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.HTTP.Listen)
	if err != nil {
		return nil, err
	}
	if err := cfg.SetListen(ln.Addr().String()); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// serveHTTP serves Streamable HTTP (/mcp) and legacy HTTP+SSE (/sse) on ln,
// behind the authorization [auth] configures.
func serveHTTP(ctx context.Context, srv *host.Server, ln net.Listener, cfg *config.Config, logger *slog.Logger) error {
	authn, err := auth.New(cfg.Auth, logger)
	if err != nil {
		return err
	}
	public := map[string]http.Handler{}
	for _, p := range authn.MetadataPaths() {
		public[p] = authn.MetadataHandler()
	}
	logger.Info("listening", "url", "http://"+ln.Addr().String()+"/mcp", "auth", cfg.Auth.Mode)
	return srv.ServeHTTP(ctx, ln, host.HTTPOptions{
		AllowedHosts:       cfg.HTTP.AllowedHosts,
		AllowedOrigins:     cfg.HTTP.AllowedOrigins,
		SessionIdleTimeout: cfg.HTTP.SessionIdleTimeout,
		MaxSessions:        cfg.HTTP.MaxSessions,
		InitTimeout:        cfg.HTTP.InitTimeout,

		MaxSessionsPerClient: cfg.HTTP.MaxSessionsPerClient,
		MaxBodyBytes:         int64(cfg.HTTP.MaxBodyBytes),
		Middleware:           authn.Middleware,
		Public:               public,
	})
}
