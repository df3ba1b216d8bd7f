package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/auth"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/metrics"
	"github.com/mcphost/mcphost/sandbox"
	"github.com/mcphost/mcphost/status"
)

// servedMetrics is where serve serves /metrics ([telemetry]).
type servedMetrics struct {
	// metrics are told of what the server serves; nil when /metrics is
	// served nowhere, which then costs nothing.
	metrics *metrics.Metrics
	// handler serves /metrics, checking the token.
	handler http.Handler
	// own is metrics_listen's listener; nil: handler is served on the MCP
	// listener.
	own net.Listener
	// recorder keeps what the status page (/status, /status.json) shows,
	// served where /metrics is; nil with the metrics. statusToken checks
	// a request for status_token_file's token; nil for none.
	recorder    *status.Recorder
	statusToken func(*http.Request) bool
	statusSrc   status.Sources
}

// onMCPListener returns the handlers of /metrics and the status page on
// the MCP listener, by path; none when they are not served there. Behind
// [auth] mode "jwt", the status page opens to a token with status_scope.
func (s *servedMetrics) onMCPListener(cfg *config.Config, mcpLn net.Listener, authn *auth.Authenticator) map[string]http.Handler {
	if s.metrics == nil || s.own != nil {
		return nil
	}
	var page http.Handler
	if s.statusToken == nil && cfg.Auth.Mode == config.AuthJWT {
		scope := cfg.Telemetry.StatusScope
		page = authn.Middleware(status.Handler(s.recorder, s.statusSrc, func(r *http.Request) bool {
			return slices.Contains(auth.Scopes(r.Context()), scope)
		}))
	} else {
		page = s.statusPage(cfg, isLoopback(mcpLn.Addr()))
	}
	return map[string]http.Handler{"/metrics": s.handler, "/status": page, "/status.json": page}
}

// statusPage returns the handler of the status page on a listener: to
// requests with status_token_file's token; without one, to every request
// when the listener is a loopback address and [auth] mode is "none", else
// to none.
func (s *servedMetrics) statusPage(cfg *config.Config, loopback bool) http.Handler {
	allow := func(*http.Request) bool { return loopback && cfg.Auth.Mode == config.AuthNone }
	if s.statusToken != nil {
		allow = s.statusToken
	}
	return status.Handler(s.recorder, s.statusSrc, allow)
}

// setupMetrics decides where /metrics is served: on metrics_listen when
// set, else on the MCP listener mcpLn (nil over stdio) when metrics = "on",
// or "auto" and it is a loopback address. metrics_listen is listened on
// now, and the token file read, so that a taken port or a missing token
// fails before anything is served; a metrics_listen open to the network
// needs a token file, or metrics = "on" to serve them to anyone on purpose.
func setupMetrics(cfg *config.Config, mcpLn net.Listener, version string) (*servedMetrics, error) {
	tc := cfg.Telemetry
	if tc.Metrics == config.MetricsOff {
		return &servedMetrics{}, nil
	}
	token, err := tokenCheck("[telemetry] metrics_token_file", tc.MetricsTokenFile)
	if err != nil {
		return nil, err
	}
	statusToken, err := tokenCheck("[telemetry] status_token_file", tc.StatusTokenFile)
	if err != nil {
		return nil, err
	}
	s := &servedMetrics{statusToken: statusToken}
	switch {
	case tc.MetricsListen != "":
		ln, err := net.Listen("tcp", tc.MetricsListen)
		if err != nil {
			return nil, fmt.Errorf("[telemetry] metrics_listen: %w", err)
		}
		if token == nil && tc.Metrics != config.MetricsOn && !isLoopback(ln.Addr()) {
			ln.Close()
			return nil, fmt.Errorf("[telemetry] metrics_listen = %q is open to the network: set metrics_token_file, or metrics = %q to serve the metrics to anyone on purpose",
				tc.MetricsListen, config.MetricsOn)
		}
		s.own = ln
	case mcpLn == nil:
		return s, nil // stdio, and nowhere else to serve them
	case tc.Metrics == config.MetricsAuto && !isLoopback(mcpLn.Addr()):
		return s, nil
	}
	s.metrics = metrics.New(metrics.Options{ItemNames: tc.MetricsItemNames, Version: version})
	s.handler = s.metrics.Handler(token)
	s.recorder = status.NewRecorder()
	return s, nil
}

// tokenCheck returns the check of a request for the bearer token of file
// (readToken), nil when file is "".
func tokenCheck(from, file string) (func(*http.Request) bool, error) {
	token, err := readToken(from, file)
	if err != nil || token == "" {
		return nil, err
	}
	check, err := auth.BearerTokenIs(token)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", from, file, err)
	}
	return check, nil
}

// readToken reads the bearer token of file, "" when file is "", naming
// where the file was given (a setting or a flag) in its errors.
func readToken(from, file string) (string, error) {
	if file == "" {
		return "", nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("%s: %w", from, err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", fmt.Errorf("%s: %s is empty", from, file)
	}
	return token, nil
}

// watch gives the metrics and the status page what they read of the
// server at each scrape or view.
func (s *servedMetrics) watch(src status.Sources) {
	if s.metrics == nil {
		return
	}
	s.statusSrc = src
	s.metrics.Watch(metrics.Sources{Server: src.Server, Plugins: src.Plugins, MemoryBudget: src.MemoryBudget})
}

// isLoopback reports whether addr is a loopback TCP address.
func isLoopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// serveOwn serves /metrics and the status page on metrics_listen until
// ctx ends.
func (s *servedMetrics) serveOwn(ctx context.Context, cfg *config.Config, logger *slog.Logger) {
	if s.own == nil {
		return
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.handler)
	page := s.statusPage(cfg, isLoopback(s.own.Addr()))
	mux.Handle("GET /status", page)
	mux.Handle("GET /status.json", page)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	logger.Info("serving metrics", "url", "http://"+s.own.Addr().String()+"/metrics")
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = hs.Shutdown(shut)
	}()
	go func() {
		if err := hs.Serve(s.own); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("serving metrics", "err", err)
		}
	}()
}

// observe returns the engine's Observer, which tells m with the status
// page's recorder, and trail (each nil when off) of what the server serves, and the plugins' sandbox
// Observers; nil and nil when both are off, which then cost nothing.
func observe(m *metrics.Metrics, recorder *status.Recorder, trail *audit.Trail) (host.Observer, func(plugin string) sandbox.Observer) {
	var all observers
	if m != nil {
		all = append(all, m, recorder)
	}
	if trail != nil {
		all = append(all, trail)
	}
	var sandboxes func(string) sandbox.Observer
	switch {
	case m != nil:
		sandboxes = m.Sandbox
	case trail != nil:
		// Only for the plugin host to tell requests of their plugin
		// calls' times and denials (pluginhost.Loader.Observe).
		sandboxes = func(string) sandbox.Observer { return nil }
	}
	switch len(all) {
	case 0:
		return nil, nil
	case 1:
		return all[0], sandboxes
	}
	return all, sandboxes
}

// observers tells each of its Observers of everything.
type observers []host.Observer

func (o observers) Served(op host.Operation) {
	for _, x := range o {
		x.Served(op)
	}
}

func (o observers) SessionEnded(s host.EndedSession) {
	for _, x := range o {
		x.SessionEnded(s)
	}
}

func (o observers) PluginCalled(c host.PluginCall) {
	for _, x := range o {
		x.PluginCalled(c)
	}
}

func (o observers) Denied(d host.Denial) {
	for _, x := range o {
		x.Denied(d)
	}
}

// deniedHTTP returns what tells m and trail (each nil when off) of a
// request the HTTP layer refused (a bad token, another subject's
// session); nil when both are off.
func deniedHTTP(m *metrics.Metrics, trail *audit.Trail) func(r *http.Request, reason, detail, subject string) {
	if m == nil && trail == nil {
		return nil
	}
	return func(r *http.Request, reason, detail, subject string) {
		if m != nil {
			m.Denied(host.Denial{Reason: reason, Detail: detail, Subject: subject, Transport: host.TransportHTTP})
		}
		if trail != nil {
			trail.DeniedHTTP(reason, detail, subject, r.RemoteAddr)
		}
	}
}
