package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
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

	stateKeys, err := cfg.RequestStateKeys()
	if err != nil {
		return err
	}
	srv := host.NewServer(host.Options{
		Name: cfg.Server.Name, Title: cfg.Server.Title, Version: f.version,
		PageSize: cfg.Server.PageSize, Logger: logger, Subject: auth.Subject, Scopes: auth.Scopes,
		RequestStateKeys: stateKeys, RequestStateTTL: cfg.Server.RequestStateTTL,
		Instructions: cfg.Server.Instructions,
	}, nil)
	reloader := pluginhost.NewReloader(&pluginhost.Loader{Engine: engine, Server: srv, Logger: logger}, f.plugins, cfg)
	defer func() {
		for _, p := range srv.Catalog().Plugins() {
			_ = p.Close(context.Background())
		}
	}()
	stopLoading := loadInBackground(ctx, reloader, srv, cfg.Server.StartupWait, f.transport, cacheDir, logger)
	stopReloading := startReloading(ctx, reloader, cfg.Path, f.watch, logger)
	defer func() { // before the plugins close; a reload may wait for the load
		stopLoading()
		stopReloading()
	}()
	if f.transport == "http" {
		return serveHTTP(ctx, srv, ln, cfg, reloader, logger)
	}
	err = srv.ServeStdio(ctx, stdin, stdout, shutdownGrace)
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// loadInBackground loads the plugins of reloader's folder into srv while
// the transport already serves (pluginhost.Reloader.Load publishes each as
// it is ready, and has srv's initialize wait for them as startup_wait
// says). It
// logs the serving line once every plugin is loaded or failed, or when
// startupWait has passed, naming the plugins still loading, and a last line
// when those are done. The returned function stops the load and waits for
// it.
func loadInBackground(ctx context.Context, reloader *pluginhost.Reloader, srv *host.Server, startupWait time.Duration,
	transport, cacheDir string, logger *slog.Logger) (stop func()) {
	started := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	loaded := make(chan pluginhost.LoadResult, 1)
	wait := reloader.StartLoad(ctx) // before the transport serves: initialize waits for it
	go func() {
		defer close(loaded)
		loaded <- wait()
	}()
	reported := make(chan struct{})
	go func() {
		defer close(reported)
		timer := time.NewTimer(startupWait)
		defer timer.Stop()
		var res pluginhost.LoadResult
		var ok bool
		select {
		case res, ok = <-loaded:
		case <-timer.C:
		case <-ctx.Done():
			return
		}
		_, states := reloader.Status()
		logger.Info("serving", "transport", transport, "plugins", len(srv.Catalog().Plugins()),
			"loading", namesIn(states, pluginhost.StateLoading), "failed", namesIn(states, pluginhost.StateFailed),
			"startup", time.Since(started).Round(time.Millisecond), "cache", cacheDir)
		if !ok {
			if res, ok = <-loaded; !ok {
				return
			}
			_, states = reloader.Status()
			logger.Info("plugins loaded", "plugins", len(res.Plugins), "failed", namesIn(states, pluginhost.StateFailed),
				"took", time.Since(started).Round(time.Millisecond))
		}
		if len(res.Plugins) == 0 {
			logger.Warn("no plugins loaded", "folder", reloader.Dir())
		}
	}()
	return func() {
		cancel()
		<-reported
		for range loaded {
		}
	}
}

// namesIn returns the plugin names in state, in order, joined by commas.
func namesIn(states map[string]string, state string) string {
	var names []string
	for name, s := range states {
		if s == state {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}

// readiness answers GET /readyz: 200 once the plugins loaded at start-up
// have all loaded or failed, 503 while some still load, with the state of
// each plugin as JSON: {"ready": bool, "plugins": {"name": "ready", ...}}.
func readiness(reloader *pluginhost.Reloader) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		done, states := reloader.Status()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if !done {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_ = json.NewEncoder(w).Encode(struct {
			Ready   bool              `json:"ready"`
			Plugins map[string]string `json:"plugins"`
		}{done, states})
	})
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
// behind the authorization [auth] configures, and the readiness of the
// plugins (/readyz), which needs none.
func serveHTTP(ctx context.Context, srv *host.Server, ln net.Listener, cfg *config.Config, reloader *pluginhost.Reloader, logger *slog.Logger) error {
	authn, err := auth.New(cfg.Auth, logger)
	if err != nil {
		return err
	}
	public := map[string]http.Handler{"/readyz": readiness(reloader)}
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

		MaxBodyBytesInFlight:          int64(cfg.HTTP.MaxBodyBytesInFlight),
		MaxBodyBytesInFlightPerClient: int64(cfg.HTTP.MaxBodyBytesInFlightPerClient),
		MaxConnections:                cfg.HTTP.MaxConnections,
		MaxConnectionsPerClient:       cfg.HTTP.MaxConnectionsPerClient,
		TrustedProxies:                cfg.HTTP.TrustedProxies,
		MaxBatchResponseBytes:         int64(cfg.HTTP.MaxBatchResponseBytes),
	})
}
