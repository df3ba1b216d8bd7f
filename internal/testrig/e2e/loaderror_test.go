package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/poll"
)

// The start-up contract: a plugin the config names ([plugins.NAME]) that
// does not load stops `serve` with a non-zero exit and a line naming it and
// why, unless [server] on_load_error = "skip" or --allow-partial, which
// serve the rest with a warning; a broken plugin that is only in the folder
// is a warning.

// notWasm is a plugin file that is not a wasm module.
var notWasm = []byte("this is not wasm")

// serveUntilExit runs `mcphost serve` over stdio on f with extra
// arguments, stdin left open, and returns its exit error and stderr once
// it exits, or fails the test if it still runs after limit.
func serveUntilExit(t *testing.T, f fixture, limit time.Duration, args ...string) (error, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, mcphostBin, append(append([]string{"serve", "--plugins", f.plugins, "--config", f.config}, f.serveArgs...), args...)...)
	stdin, err := cmd.StdinPipe() // kept open: serve must end on its own
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("serve still ran after %v:\n%s", limit, stderr.String())
	}
	return err, stderr.String()
}

// writePlugin writes a plugin file into f's folder.
func writePlugin(t *testing.T, f fixture, file string, data []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(f.plugins, file), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestServeFailsWhenAConfiguredPluginDoesNotLoad(t *testing.T) {
	for _, c := range []struct {
		name, extra string
		setup       func(fixture)
		plugin      string // the plugin the failure names
		reason      string
	}{
		{"broken", "[plugins.broken]\n", func(f fixture) { writePlugin(t, f, "broken.wasm", notWasm) }, "broken", "not a valid wasm module"},
		{"over its load budget", "[plugins.spin]\nload_budget = \"300ms\"\n", func(f fixture) { writePlugin(t, f, "spin.wasm", initLoop) }, "spin", "load_budget"},
		{"missing", "[plugins.ghost]\n", func(fixture) {}, "ghost", "no plugin file ghost.wasm or ghost.js"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, c.extra, "plugins/examples/tools")
			c.setup(f)
			err, stderr := serveUntilExit(t, f, 30*time.Second)
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() == 0 {
				t.Fatalf("serve ended with %v, want a non-zero exit:\n%s", err, stderr)
			}
			last := lastLine(stderr)
			if !strings.Contains(last, "mcphost:") || !strings.Contains(last, c.plugin) || !strings.Contains(last, "on_load_error") {
				t.Errorf("serve's last line %q does not name %s and on_load_error", last, c.plugin)
			}
			if !logHas(stderr, "level=ERROR", "plugin="+c.plugin, c.reason) {
				t.Errorf("no error line naming %s and %q in:\n%s", c.plugin, c.reason, stderr)
			}
		})
	}
}

func TestOnLoadErrorSkipServesTheRest(t *testing.T) {
	for _, c := range []struct {
		name   string
		config bool // on_load_error = "skip" in the config, else --allow-partial
		args   []string
	}{
		{"config", true, nil},
		{"flag", false, []string{"--allow-partial"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, "[plugins.broken]\n", "plugins/examples/tools")
			if c.config {
				addServerKey(t, f, `on_load_error = "skip"`)
			}
			writePlugin(t, f, "broken.wasm", notWasm)
			f.serveArgs = c.args
			srv := f.start(t)
			cs := srv.session(t, nil)
			if got, isErr, err := hostileCall(ctxT(t), cs, "hash", map[string]any{"text": "abc"}); err != nil || isErr || !strings.Contains(got, sha256abc) {
				t.Fatalf("the plugin that loaded: %v %v %q", err, isErr, got)
			}
			poll.Until(t, 15*time.Second, "the load to end", func() bool { return readyz(t, srv).code == 200 })
			if !logHas(srv.log.String(), "level=WARN", "plugin=broken", "on_load_error") {
				t.Errorf("no warning naming broken and on_load_error in:\n%s", srv.log.String())
			}
		})
	}
}

func TestABrokenPluginOnlyInTheFolderIsAWarning(t *testing.T) {
	f := newFixture(t, "", "plugins/examples/tools")
	writePlugin(t, f, "stray.wasm", notWasm)
	srv := f.start(t)
	poll.Until(t, 15*time.Second, "the load to end", func() bool { return readyz(t, srv).code == 200 })
	cs := srv.session(t, nil)
	if got, isErr, err := hostileCall(ctxT(t), cs, "hash", map[string]any{"text": "abc"}); err != nil || isErr || !strings.Contains(got, sha256abc) {
		t.Fatalf("the plugin that loaded: %v %v %q", err, isErr, got)
	}
	log := srv.log.String()
	if !logHas(log, "level=WARN", "plugin not loaded", "plugin=stray") || logHas(log, "level=ERROR", "plugin=stray") {
		t.Errorf("want a warning, and no error, for the stray plugin:\n%s", log)
	}
}

// lastLine returns the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// addServerKey adds a line to the [server] table of f's config.
func addServerKey(t testing.TB, f fixture, line string) {
	t.Helper()
	cfg, err := os.ReadFile(f.config)
	if err != nil {
		t.Fatal(err)
	}
	with := strings.Replace(string(cfg), "[server]\n", "[server]\n"+line+"\n", 1)
	if err := os.WriteFile(f.config, []byte(with), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestABadTokenStopsServeBeforeAnythingIsServed: what the config alone can
// show wrong (here a bearer token too short) ends serve before it listens,
// loads a plugin or logs the serving line.
func TestABadTokenStopsServeBeforeAnythingIsServed(t *testing.T) {
	f := newFixture(t, "[auth]\nmode = \"bearer\"\ntoken_env = \"MCPHOST_E2E_TOKEN\"\n", "plugins/examples/tools")
	t.Setenv("MCPHOST_E2E_TOKEN", "short")
	f.serveArgs = []string{"--transport", "http", "--listen", "127.0.0.1:0", "--log-level", "debug"}
	err, stderr := serveUntilExit(t, f, 30*time.Second)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("serve ended with %v, want a non-zero exit:\n%s", err, stderr)
	}
	if !strings.Contains(lastLine(stderr), "MCPHOST_E2E_TOKEN") {
		t.Errorf("the last line does not name the token's variable:\n%s", stderr)
	}
	for _, early := range []string{"listening", "msg=serving", "plugin loaded"} {
		if strings.Contains(stderr, early) {
			t.Errorf("%q was logged before the bad token stopped serve:\n%s", early, stderr)
		}
	}
}

// TestServeKeepsTheCompilationCacheWithinItsCap: once plugins are loaded,
// serve removes the least recently used entries beyond cache_max_mib.
func TestServeKeepsTheCompilationCacheWithinItsCap(t *testing.T) {
	f := newFixture(t, "", "plugins/examples/tools")
	cache := filepath.Join(t.TempDir(), "cache")
	stale := filepath.Join(cache, "wazero-v0.0.1-amd64-linux", "stale")
	if err := os.MkdirAll(filepath.Dir(stale), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, make([]byte, 16<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-72 * time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(f.config)
	if err != nil {
		t.Fatal(err)
	}
	shared := fmt.Sprintf("cache_dir = %q", filepath.Join(os.TempDir(), "mcphost-e2e-cache"))
	cfg = []byte(strings.Replace(string(cfg), shared, fmt.Sprintf("cache_dir = %q\ncache_max_mib = 24", cache), 1))
	if err := os.WriteFile(f.config, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := f.start(t)
	poll.Until(t, 60*time.Second, "the load to end", func() bool { return readyz(t, srv).code == 200 })
	defer func() {
		if t.Failed() {
			t.Log(srv.log.String())
		}
	}()
	poll.Until(t, 10*time.Second, "the cache to be pruned", func() bool {
		return logHas(srv.log.String(), "compilation cache pruned", "removed=1")
	})
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale entry is still there: %v", err)
	}
	if got, isErr, err := hostileCall(ctxT(t), srv.session(t, nil), "hash", map[string]any{"text": "abc"}); err != nil || isErr || !strings.Contains(got, sha256abc) {
		t.Errorf("the plugin after pruning: %v %v %q", err, isErr, got)
	}
}
