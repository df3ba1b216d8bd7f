package cli

import (
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/metrics"
	"github.com/mcphost/mcphost/sandbox"
)

// listenOn listens on addr for the test.
func listenOn(t *testing.T, addr string) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// /metrics is served where [telemetry] says, and by default only where
// nobody else can reach it: on a loopback MCP listener, not on one open to
// the network, and over stdio only on a metrics_listen of its own; off
// turns it off everywhere.
func TestMetricsAreServedWhereTelemetrySays(t *testing.T) {
	loopback, open := listenOn(t, "127.0.0.1:0"), listenOn(t, "0.0.0.0:0")
	for _, c := range []struct {
		name         string
		telemetry    config.TelemetryConfig
		mcp          net.Listener
		onMCP, onOwn bool
	}{
		{"auto on loopback", config.TelemetryConfig{Metrics: config.MetricsAuto}, loopback, true, false},
		{"auto open to the network", config.TelemetryConfig{Metrics: config.MetricsAuto}, open, false, false},
		{"on, open to the network", config.TelemetryConfig{Metrics: config.MetricsOn}, open, true, false},
		{"auto over stdio", config.TelemetryConfig{Metrics: config.MetricsAuto}, nil, false, false},
		{"stdio with metrics_listen", config.TelemetryConfig{Metrics: config.MetricsAuto, MetricsListen: "127.0.0.1:0"}, nil, false, true},
		{"metrics_listen beside HTTP", config.TelemetryConfig{Metrics: config.MetricsAuto, MetricsListen: "127.0.0.1:0"}, loopback, false, true},
		{"off", config.TelemetryConfig{Metrics: config.MetricsOff}, loopback, false, false},
	} {
		cfg := config.Default()
		cfg.Telemetry = c.telemetry
		s, err := setupMetrics(cfg, c.mcp, "test")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if s.own != nil {
			s.own.Close()
		}
		if got := s.onMCPListener(cfg, c.mcp, nil) != nil; got != c.onMCP {
			t.Errorf("%s: on the MCP listener %v, want %v", c.name, got, c.onMCP)
		}
		if got := s.own != nil; got != c.onOwn {
			t.Errorf("%s: on a listener of its own %v, want %v", c.name, got, c.onOwn)
		}
		if served := c.onMCP || c.onOwn; (s.metrics != nil) != served {
			t.Errorf("%s: metrics kept %v, want %v (none when served nowhere)", c.name, s.metrics != nil, served)
		}
	}
}

// A token file that is missing or empty stops serve before it serves.
func TestMetricsTokenFileMustHoldAToken(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte(" \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{filepath.Join(dir, "missing"): "no such file", empty: "is empty"} {
		cfg := config.Default()
		cfg.Telemetry.MetricsTokenFile = file
		if _, err := setupMetrics(cfg, listenOn(t, "127.0.0.1:0"), "test"); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "metrics_token_file") {
			t.Errorf("token file %s: %v, want an error naming metrics_token_file that says %q", file, err, want)
		}
	}
}

// A metrics_listen open to the network is refused without a token, unless
// metrics = "on" says to serve the metrics to anyone.
func TestOpenMetricsListenNeedsATokenOrOn(t *testing.T) {
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("t0ken"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		telemetry config.TelemetryConfig
		refused   bool
	}{
		{"auto, no token", config.TelemetryConfig{Metrics: config.MetricsAuto, MetricsListen: "0.0.0.0:0"}, true},
		{"auto, a token", config.TelemetryConfig{Metrics: config.MetricsAuto, MetricsListen: "0.0.0.0:0", MetricsTokenFile: token}, false},
		{"on, no token", config.TelemetryConfig{Metrics: config.MetricsOn, MetricsListen: "0.0.0.0:0"}, false},
	} {
		cfg := config.Default()
		cfg.Telemetry = c.telemetry
		s, err := setupMetrics(cfg, nil, "test")
		if s != nil && s.own != nil {
			s.own.Close()
		}
		if refused := err != nil; refused != c.refused {
			t.Errorf("%s: error %v, want refused %v", c.name, err, c.refused)
		} else if refused && !strings.Contains(err.Error(), "metrics_token_file") {
			t.Errorf("%s: %v does not say how to serve them", c.name, err)
		}
	}
}

// The status page shows every grant and other users' denials: it opens on
// a loopback listener without auth, to nobody on one open to the network,
// and to the bearer of status_token_file's token wherever it is set.
func TestStatusPageOpensOnlyToTheOperator(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "status-token")
	if err := os.WriteFile(tokenFile, []byte("operator-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		listen    string
		tokenFile string
		bearer    string
		want      int
	}{
		{"loopback without auth", "127.0.0.1:0", "", "", http.StatusOK},
		{"open to the network", "0.0.0.0:0", "", "", http.StatusForbidden},
		{"with a token file, no token", "127.0.0.1:0", tokenFile, "", http.StatusForbidden},
		{"with a token file, another token", "0.0.0.0:0", tokenFile, "guess", http.StatusForbidden},
		{"with a token file and its token", "0.0.0.0:0", tokenFile, "operator-token", http.StatusOK},
	} {
		cfg := config.Default()
		cfg.Telemetry.Metrics = config.MetricsOn
		cfg.Telemetry.StatusTokenFile = c.tokenFile
		ln := listenOn(t, c.listen)
		s, err := setupMetrics(cfg, ln, "test")
		if err != nil {
			t.Fatal(err)
		}
		handlers := s.onMCPListener(cfg, ln, nil)
		for _, path := range []string{"/status", "/status.json"} {
			req := httptest.NewRequest("GET", path, nil)
			if c.bearer != "" {
				req.Header.Set("Authorization", "Bearer "+c.bearer)
			}
			rec := httptest.NewRecorder()
			handlers[path].ServeHTTP(rec, req)
			if rec.Code != c.want {
				t.Errorf("%s: GET %s: %d, want %d", c.name, path, rec.Code, c.want)
			}
		}
	}
}

// What pruning removes from the cache folder is counted in
// mcphost_cache_evictions_total by the cache it belonged to.
func TestPrunedCacheEntriesAreCountedByCache(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"wazero-1.12.0-amd64-linux/a1", "wazero-1.12.0-amd64-linux/b2", listingCacheFolder + "/k.json",
		sandbox.ValidationFolder + "/v", "stray"} {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, make([]byte, 1<<10), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m := metrics.New(metrics.Options{})
	pruneCache(dir, 0, slog.New(slog.DiscardHandler), m)
	rec := httptest.NewRecorder()
	m.Handler(nil).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, want := range []string{`mcphost_cache_evictions_total{cache="compilation"} 2`, `mcphost_cache_evictions_total{cache="listing"} 1`,
		`mcphost_cache_evictions_total{cache="validation"} 1`, `mcphost_cache_evictions_total{cache="other"} 1`} {
		if !strings.Contains(rec.Body.String(), want+"\n") {
			t.Errorf("no %s in\n%s", want, rec.Body.String())
		}
	}
}
