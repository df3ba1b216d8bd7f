package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/mcphost/mcphost/audit"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/metrics"
	"github.com/mcphost/mcphost/sandbox"
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
}

// onMCPListener returns the handler of /metrics on the MCP listener, nil
// when it is not served there.
func (s *servedMetrics) onMCPListener() http.Handler {
	if s.metrics == nil || s.own != nil {
		return nil
	}
	return s.handler
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
	token := ""
	if tc.MetricsTokenFile != "" {
		b, err := os.ReadFile(tc.MetricsTokenFile)
		if err != nil {
			return nil, fmt.Errorf("[telemetry] metrics_token_file: %w", err)
		}
		if token = strings.TrimSpace(string(b)); token == "" {
			return nil, fmt.Errorf("[telemetry] metrics_token_file: %s is empty", tc.MetricsTokenFile)
		}
	}
	s := &servedMetrics{}
	switch {
	case tc.MetricsListen != "":
		ln, err := net.Listen("tcp", tc.MetricsListen)
		if err != nil {
			return nil, fmt.Errorf("[telemetry] metrics_listen: %w", err)
		}
		if token == "" && tc.Metrics != config.MetricsOn && !isLoopback(ln.Addr()) {
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
	return s, nil
}

// isLoopback reports whether addr is a loopback TCP address.
func isLoopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// serveOwn serves /metrics on metrics_listen until ctx ends.
func (s *servedMetrics) serveOwn(ctx context.Context, logger *slog.Logger) {
	if s.own == nil {
		return
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.handler)
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

// observe returns the engine's Observer, which tells m and trail (each
// nil when off) of what the server serves, and the plugins' sandbox
// Observers; nil and nil when both are off, which then cost nothing.
func observe(m *metrics.Metrics, trail *audit.Trail) (host.Observer, func(plugin string) sandbox.Observer) {
	var all observers
	if m != nil {
		all = append(all, m)
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
