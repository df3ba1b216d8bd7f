package cli

import (
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/auth"
	"github.com/mcphost/mcphost/cmd/mcphost/internal/certfile"
	"github.com/mcphost/mcphost/cmd/mcphost/internal/clienv"
	"github.com/mcphost/mcphost/cmd/mcphost/internal/diskcache"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/mcphttp"
	"github.com/mcphost/mcphost/metrics"
	"github.com/mcphost/mcphost/pluginhost"
	"github.com/mcphost/mcphost/sandbox"
	"github.com/mcphost/mcphost/status"
	"github.com/mcphost/mcphost/tracing"
	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel/trace"
)

// shutdownGrace is how long requests in flight at stdin EOF may run on.
const shutdownGrace = 10 * time.Second

type serveFlags struct {
	plugins   string
	config    string
	transport string
	listen    string // "" unless --listen was given
	logLevel  string
	logFormat string
	watch     bool
	// allowPartial serves the plugins that load when one the config
	// names does not: [server] on_load_error = "skip".
	allowPartial bool
	// cpuProfile is where to write a CPU profile of the whole serve, ""
	// for none.
	cpuProfile string

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
			if f.cpuProfile != "" {
				stopProfile, err := startCPUProfile(f.cpuProfile)
				if err != nil {
					return err
				}
				defer stopProfile()
			}
			var stdin io.Reader = os.Stdin
			if f.transport == "stdio" {
				in, restore := pollableStdin(os.Stdin)
				defer restore()
				stdin = in
			}
			return serve(ctx, f, stdin, mcpOut, os.Stderr)
		},
	}
	cmd.Flags().StringVar(&f.plugins, "plugins", defaultPluginsDir, "folder of plugins to load")
	cmd.Flags().StringVar(&f.config, "config", "", configFlagHelp)
	cmd.Flags().StringVar(&f.transport, "transport", "stdio", "transport: stdio or http")
	cmd.Flags().StringVar(&f.listen, "listen", "", "address to listen on with --transport http (default: [http] listen in the config, 127.0.0.1:8080)")
	cmd.Flags().StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	cmd.Flags().StringVar(&f.logFormat, "log-format", "text", "log format: text (key=value) or json (one object a line); a line logged for a request carries its trace_id")
	cmd.Flags().BoolVar(&f.allowPartial, "allow-partial", false, `serve the plugins that load when one named in the config does not (as [server] on_load_error = "skip"); without it, serve exits naming each`)
	cmd.Flags().BoolVar(&f.watch, "watch", true, "watch the plugins folder and the config file, and swap in changed plugins while serving (SIGHUP reloads either way)")
	cmd.Flags().StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the server, for go tool pprof, to this file when it stops (the host's Go code; a plugin's own code shows as _ExternalCode)")
	return cmd
}

// startCPUProfile starts profiling the process into the file path; the
// function it returns stops and writes the profile.
func startCPUProfile(path string) (stop func(), err error) {
	out, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		out.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := out.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "mcphost: --cpuprofile:", err)
		}
	}, nil
}

func serve(ctx context.Context, f serveFlags, stdin io.Reader, stdout, stderr io.Writer) error {
	logger, err := clienv.NewLogger(stderr, f.logLevel, f.logFormat)
	if err != nil {
		return err
	}
	if f.transport != "stdio" && f.transport != "http" {
		return fmt.Errorf("--transport %q: want stdio or http", f.transport)
	}
	cfg, err := clienv.LoadConfig(f.config, f.plugins)
	if err != nil {
		return err
	}
	logger.Info("config", "file", clienv.Source(cfg))
	if hint := clienv.UnreadWorkingDirConfig(cfg); hint != "" {
		logger.Warn(hint)
	}
	if f.allowPartial {
		cfg.Server.OnLoadError = config.OnLoadErrorSkip
	}
	var ln net.Listener
	var authn *auth.Authenticator
	var tlsConfig *tls.Config
	// Told to stop, an HTTP server drains first: everything it does
	// (loads, compiles, the shared state's feeds) goes on until the drain
	// ends, while /readyz fails.
	draining := new(atomic.Bool)
	if f.transport == "http" {
		ctx = drainFirst(ctx, cfg.HTTP.DrainDelay, draining, logger)
		// Listen and read the tokens' settings and the certificate before
		// loading plugins, so that a taken port, a bad token or a bad
		// certificate fails before anything is served.
		if ln, err = listen(cfg, f.listen); err != nil {
			return err
		}
		defer ln.Close()
		if authn, err = auth.New(cfg.Auth, logger); err != nil {
			return err
		}
		if tlsConfig, err = serverTLS(cfg, logger); err != nil {
			return err
		}
	}
	served, err := setupMetrics(cfg, ln, f.version)
	if err != nil {
		return err
	}
	if served.own != nil {
		defer served.own.Close()
	}
	cacheDir, err := cfg.CacheDir()
	if err != nil {
		return err
	}
	out, err := clienv.Egress(cfg, logger)
	if err != nil {
		return err
	}
	engine, err := sandbox.NewEngine(sandbox.EngineOptions{CacheDir: cacheDir, MemoryBudgetMiB: cfg.Server.MemoryBudgetMiB, UnloadIdleAfter: cfg.Server.UnloadIdleAfter, Egress: out})
	if err != nil {
		return err
	}
	defer engine.Close()

	stateKeys, err := cfg.RequestStateKeys()
	if err != nil {
		return err
	}
	shared, err := openState(ctx, cfg, f.transport, logger)
	if err != nil {
		return err
	}
	defer shared.close()
	traces, err := tracing.New(ctx, cfg.Telemetry, f.version)
	if err != nil {
		return err
	}
	var tracer trace.Tracer // nil: no traces cost nothing
	if traces != nil {
		tracer = traces.Tracer()
		defer func() { // sends the spans of the last requests
			shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := traces.Shutdown(shut); err != nil {
				logger.Warn("sending the last spans failed", "err", err)
			}
		}()
	}
	trail, err := audit.Open(cfg.Telemetry, stderr)
	if err != nil {
		return err
	}
	if trail != nil {
		defer trail.Close()
	}
	observer, observeSandbox := observe(served.metrics, served.recorder, trail)
	replica := replicaName(ln) // how the other replicas name this one
	srv := host.NewServer(host.Options{
		Name: cfg.Server.Name, Title: cfg.Server.Title, Version: f.version,
		PageSize: cfg.Server.PageSize, Logger: logger, Subject: auth.Subject, Scopes: auth.Scopes,
		RequestStateKeys: stateKeys, RequestStateTTL: cfg.Server.RequestStateTTL,
		SessionStore: sharedAs[host.SharedSessionStore](shared), SessionTTL: cfg.HTTP.SessionIdleTimeout,
		TaskStore: sharedAs[host.SharedTaskStore](shared), Changes: sharedAs[host.SharedChanges](shared),
		Inbox: sharedAs[host.SharedInbox](shared), StreamLog: sharedAs[host.SharedStreamLog](shared),
		Elicitations: sharedAs[host.SharedElicitations](shared), TaskLease: cfg.State.TaskLease, Replica: replica,
		Instructions: cfg.Server.Instructions,
		TaskAfter:    cfg.Server.TaskAfter, MaxTasks: cfg.Server.MaxTasks, MaxTasksPerUser: cfg.Server.MaxTasksPerUser,
		// The catalog changes while serve runs: plugins loaded late, the
		// watched folder, the config reloaded on SIGHUP (with or without
		// --watch).
		CatalogChanges: true,
		Observer:       observer,
		Tracer:         tracer,
	}, nil)
	go srv.FollowChanges(ctx) // the other replicas' list changes, with a shared backend
	go srv.FollowInbox(ctx)   // the clients' answers the other replicas pass here
	go srv.LogStreams(ctx)    // the SSE streams' events, for the other replicas
	loader := &pluginhost.Loader{Engine: engine, Server: srv, Logger: logger, Observe: observeSandbox, RateShares: sharedAs[pluginhost.RateShares](shared)}
	if served.metrics != nil {
		loader.Loads = served.metrics
	}
	if cacheDir != "" {
		// Plugins listed before are listed from there and compiled on their
		// first call.
		loader.ListingCacheDir = filepath.Join(cacheDir, listingCacheFolder)
	}
	reloader := pluginhost.NewReloader(loader, f.plugins, cfg)
	go shared.comparePlugins(ctx, replica, func() (bool, map[string]string) {
		done, _ := reloader.Status()
		digests := map[string]string{}
		for _, p := range reloader.PluginStats() {
			digests[p.Name] = p.SHA256
		}
		return done, digests
	})
	served.watch(status.Sources{Version: f.version, Started: time.Now(), Server: srv.Stats, Plugins: reloader.PluginStats, MemoryBudget: engine.MemoryBudget})
	defer func() {
		for _, p := range srv.Catalog().Plugins() {
			_ = p.Close(context.Background())
		}
	}()
	// A plugin the config names that does not load ends the serve with
	// a startError, unless on_load_error = "skip".
	ctx, failStart := context.WithCancelCause(ctx)
	defer failStart(nil)
	at := "stdin/stdout"
	if ln != nil {
		at = cfg.Scheme() + "://" + ln.Addr().String() + "/mcp (Streamable HTTP) and /sse (HTTP+SSE)"
	}
	stopLoading := loadInBackground(ctx, reloader, srv, cfg, f.transport, at, cacheDir, logger, served.metrics, failStart)
	stopReloading := startReloading(ctx, reloader, cfg.Path, f.watch, logger)
	defer func() { // before the plugins close; a reload may wait for the load
		stopLoading()
		stopReloading()
	}()
	served.serveOwn(ctx, cfg, logger)
	if f.transport == "http" {
		denied := deniedHTTP(served.metrics, trail)
		if denied != nil {
			authn.OnDenied(func(r *http.Request, reason, detail string) { denied(r, reason, detail, "") })
		}
		err = serveHTTP(ctx, srv, ln, authn, tlsConfig, cfg, reloader, shared, draining, served.onMCPListener(cfg, ln, authn), denied, logger)
	} else {
		warnStdioScopes(cfg, logger)
		err = srv.ServeStdio(ctx, stdin, stdout, shutdownGrace)
	}
	var failed startError
	if errors.As(context.Cause(ctx), &failed) {
		return failed
	}
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// startError ends a serve in which plugins that the config names did not
// load at start-up.
type startError struct {
	notLoaded []pluginhost.NotLoaded
	config    string
}

func (e startError) Error() string {
	names := make([]string, len(e.notLoaded))
	for i, n := range e.notLoaded {
		names[i] = n.Name
	}
	return fmt.Sprintf("%d plugin(s) named in %s did not load: %s (each is logged with why; set [server] on_load_error = %q or pass --allow-partial to serve the rest)",
		len(names), e.config, strings.Join(names, ", "), config.OnLoadErrorSkip)
}

// loadInBackground loads the plugins of reloader's folder into srv while
// the transport already serves (pluginhost.Reloader.Load publishes each as
// it is ready, and has srv's initialize wait for them as startup_wait
// says). It logs the serving line once every plugin is loaded or failed,
// or when startup_wait has passed: the transport and where it answers
// (at), what is served, the plugins still loading or failed; and a last
// line when those are done. When a plugin that cfg names did not
// load, it calls failStart with a startError, unless cfg's on_load_error
// is "skip". Then it prunes the cache folder, counting what it removes in
// m (nil for no metrics). The returned function stops the load and waits
// for it.
func loadInBackground(ctx context.Context, reloader *pluginhost.Reloader, srv *host.Server, cfg *config.Config,
	transport, at, cacheDir string, logger *slog.Logger, m *metrics.Metrics, failStart func(error)) (stop func()) {
	startupWait := cfg.Server.StartupWait
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
		size := srv.Catalog().Size()
		logger.Info("serving", "transport", transport, "at", at, "plugins", size.Plugins, "tools", size.Tools,
			"prompts", size.Prompts, "resources", size.Resources, "templates", size.Templates,
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
		notLoaded := pluginhost.NamedNotLoaded(cfg, reloader.Dir(), res)
		skip := cfg.Server.OnLoadError == config.OnLoadErrorSkip
		for _, n := range notLoaded {
			if _, failed := res.Failed[n.Name]; failed {
				continue // the reloader logged it as it failed
			}
			if skip {
				logger.Warn("plugin not loaded", "plugin", n.Name, "err", n.Err, "on_load_error", config.OnLoadErrorSkip)
			} else {
				logger.Error("plugin not loaded", "plugin", n.Name, "err", n.Err)
			}
		}
		if len(notLoaded) > 0 && !skip {
			failStart(startError{notLoaded: notLoaded, config: cmp.Or(cfg.Path, "the default config")})
			return
		}
		pruneCache(cacheDir, cfg.Server.CacheMaxMiB, logger, m)
		// Loading read every plugin file and module section, garbage now:
		// give its pages back at once rather than when the runtime's
		// scavenger gets to them, minutes later, so that an idle server's
		// memory is what its plugins in use hold.
		debug.FreeOSMemory()
	}()
	return func() {
		cancel()
		<-reported
		for range loaded {
		}
	}
}

// pruneCache keeps the compilation cache in dir ("" for none) within
// maxMiB, removing the least recently used entries, which serve has
// just not used, and counts them in m (nil for no metrics).
func pruneCache(dir string, maxMiB int, logger *slog.Logger, m *metrics.Metrics) {
	if dir == "" {
		return
	}
	removed, err := diskcache.Prune(dir, int64(maxMiB)<<20)
	if err != nil {
		logger.Warn("pruning the compilation cache", "dir", dir, "err", err)
	}
	if len(removed) > 0 {
		logger.Info("compilation cache pruned", "dir", dir, "removed", len(removed), "bytes", diskcache.Total(removed), "cache_max_mib", maxMiB)
	}
	if m != nil {
		byCache := map[string]int{}
		for _, e := range removed {
			byCache[cacheKind(e.Name)]++
		}
		for cache, n := range byCache {
			m.CacheEvicted(cache, n)
		}
	}
}

// listingCacheFolder is the listing cache's folder in the cache folder.
const listingCacheFolder = "mcphost-listings"

// cacheKind names the cache an entry of the cache folder belongs to, by its
// first folder: wazero's compiled code in wazero-VERSION-ARCH-OS, the
// listing cache, the validation records.
func cacheKind(entry string) string {
	first, _, _ := strings.Cut(entry, "/")
	switch {
	case strings.HasPrefix(first, "wazero-"):
		return metrics.CacheCompilation
	case first == listingCacheFolder:
		return metrics.CacheListing
	case first == sandbox.ValidationFolder:
		return metrics.CacheValidation
	}
	return metrics.CacheOther
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
// have all loaded or failed, 503 while some still load, with the number
// of plugins in each state as JSON: {"ready": bool, "plugins": {"ready":
// 3, "failed": 1}}, and with a shared state backend whether it answers:
// "state": {"backend": "redis", "reachable": bool}. A backend that does
// not answer does not make the replica unready: every replica shares it,
// and a load balancer that took them all out would refuse the requests
// that do not need it (2026-07-28 ones) too. It answers without
// authentication, so it names no plugin and no address: the log does,
// for the operator.
func readiness(reloader *pluginhost.Reloader, shared *sharedState, draining *atomic.Bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		done, states := reloader.Status()
		drain := draining.Load()
		done = done && !drain
		counts := map[string]int{}
		for _, state := range states {
			counts[state]++
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if !done {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_ = json.NewEncoder(w).Encode(struct {
			Ready    bool           `json:"ready"`
			Draining bool           `json:"draining,omitempty"`
			Plugins  map[string]int `json:"plugins"`
			State    *stateReport   `json:"state,omitempty"`
		}{done, drain, counts, shared.report()})
	})
}

// drainFirst returns a context that ends delay after ctx does; meanwhile
// draining is set, which fails /readyz, so that a load balancer takes the
// replica out before it stops taking requests. Without a delay it is ctx.
func drainFirst(ctx context.Context, delay time.Duration, draining *atomic.Bool, logger *slog.Logger) context.Context {
	if delay <= 0 {
		return ctx
	}
	serving, stop := context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		<-ctx.Done()
		draining.Store(true)
		logger.Info("draining: /readyz fails from now; requests are served until drain_delay has passed", "drain_delay", delay)
		time.Sleep(delay)
		stop()
	}()
	return serving
}

// liveness answers GET /livez and /healthz (the older name some probes
// use): 200 whenever the process serves HTTP at all, whatever its plugins do, for a liveness probe, which restarts a
// server that stops answering (SECURITY.md, "When the server stalls").
func liveness() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		_, _ = io.WriteString(w, "ok\n")
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

// serverTLS returns the TLS configuration [server.tls] sets, nil for
// plain HTTP.
func serverTLS(cfg *config.Config, logger *slog.Logger) (*tls.Config, error) {
	if cfg.Server.TLS.Cert == "" {
		return nil, nil
	}
	files, err := certfile.Load(cfg.Server.TLS.Cert, cfg.Server.TLS.Key, logger)
	if err != nil {
		return nil, err
	}
	return files.TLSConfig(), nil
}

// serveHTTP serves Streamable HTTP (/mcp) and legacy HTTP+SSE (/sse) on ln,
// over TLS with tlsConfig unless it is nil, behind authn, the authorization
// [auth] configures, and the readiness of the plugins (/readyz) and the
// liveness of the process (/livez), which need none, and telemetry's
// handlers by path (/metrics, the status page), which check their own
// tokens. /readyz fails while draining is set (drainFirst).
func serveHTTP(ctx context.Context, srv *host.Server, ln net.Listener, authn *auth.Authenticator, tlsConfig *tls.Config,
	cfg *config.Config, reloader *pluginhost.Reloader, shared *sharedState, draining *atomic.Bool, telemetry map[string]http.Handler,
	denied func(r *http.Request, reason, detail, subject string), logger *slog.Logger) error {
	probes := map[string]http.Handler{"/readyz": readiness(reloader, shared, draining), "/livez": liveness(), "/healthz": liveness()}
	public := map[string]http.Handler{}
	maps.Copy(public, telemetry)
	for _, p := range authn.MetadataPaths() {
		public[p] = authn.MetadataHandler()
	}
	logger.Info("listening", "url", cfg.Scheme()+"://"+ln.Addr().String()+"/mcp", "auth", cfg.Auth.Mode)
	return mcphttp.Serve(ctx, srv, ln, mcphttp.Options{
		TLS:                tlsConfig,
		AllowedHosts:       cfg.HTTP.AllowedHosts,
		AllowedOrigins:     cfg.HTTP.AllowedOrigins,
		SessionIdleTimeout: cfg.HTTP.SessionIdleTimeout,
		MaxSessions:        cfg.HTTP.MaxSessions,
		InitTimeout:        cfg.HTTP.InitTimeout,

		MaxSessionsPerClient: cfg.HTTP.MaxSessionsPerClient,
		MaxBodyBytes:         int64(cfg.HTTP.MaxBodyBytes),
		Middleware:           authn.Middleware,
		Denied: func(r *http.Request, reason, subject string) {
			if denied != nil {
				denied(r, reason, "the request used the session of another subject", subject)
			}
		},
		Public: public,
		Probes: probes,

		MaxBodyBytesInFlight:          int64(cfg.HTTP.MaxBodyBytesInFlight),
		MaxBodyBytesInFlightPerClient: int64(cfg.HTTP.MaxBodyBytesInFlightPerClient),
		MaxConnections:                cfg.HTTP.MaxConnections,
		MaxConnectionsPerClient:       cfg.HTTP.MaxConnectionsPerClient,
		TrustedProxies:                cfg.HTTP.TrustedProxies,
		MaxBatchResponseBytes:         int64(cfg.HTTP.MaxBatchResponseBytes),
		Endpoints:                     endpoints(cfg, logger),
		// A JWT's sub names a user; the static token's "bearer" names
		// whoever holds it, so its clients are counted by address.
		SubjectsAreUsers: cfg.Auth.Mode == config.AuthJWT,
	})
}

// endpoints returns the [[endpoints]] of cfg, logging where each serves.
func endpoints(cfg *config.Config, logger *slog.Logger) []mcphttp.Endpoint {
	out := make([]mcphttp.Endpoint, len(cfg.Endpoints))
	for i, e := range cfg.Endpoints {
		out[i] = mcphttp.Endpoint{Path: e.Path, Plugins: e.Plugins}
		logger.Info("endpoint", "path", e.Path, "plugins", strings.Join(e.Plugins, ","))
	}
	return out
}

// warnStdioScopes warns of each plugin whose table requires scopes: stdio
// has no token, so over stdio they are served to nobody.
func warnStdioScopes(cfg *config.Config, logger *slog.Logger) {
	for _, name := range slices.Sorted(maps.Keys(cfg.Plugins)) {
		if pc := cfg.Plugins[name]; len(pc.RequireScopes) > 0 && !pc.Disabled {
			logger.Warn("plugin not served over stdio: it requires scopes, and stdio has no token (serve it with --transport http)",
				"plugin", name, "require_scopes", strings.Join(pc.RequireScopes, ","))
		}
	}
}
