package cli

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/mcphost/mcphost/pluginhost"
	"github.com/mcphost/mcphost/sandbox"
)

// emptyModule is a plugin with nothing to list.
var emptyModule = []byte("\x00asm\x01\x00\x00\x00")

// watched is a plugins folder that a reloadLoop watches.
type watched struct {
	dir  string
	r    *pluginhost.Reloader
	logs *messages
}

// watch loads an empty plugins folder with the config at cfgPath ("" for
// the default) and a Reloader whose settle time is settle, and watches it
// with a reloadLoop whose config debounce is configQuiet (at most an
// hour). A plugin added before the watch starts is found by the watch's
// first look; watch waits for it, so that what the test does next is
// seen through its events alone.
func watch(t *testing.T, cfgPath string, settle, configQuiet time.Duration) *watched {
	t.Helper()
	cfg := config.Default()
	if cfgPath != "" {
		var err error
		if cfg, err = config.Load(cfgPath); err != nil {
			t.Fatal(err)
		}
	}
	engine, err := sandbox.NewEngine(sandbox.EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = engine.Close() })
	w := &watched{dir: t.TempDir(), logs: &messages{}}
	logger := slog.New(w.logs)
	srv := host.NewServer(host.Options{Logger: logger, CatalogChanges: true}, nil)
	w.r = pluginhost.NewReloader(&pluginhost.Loader{Engine: engine, Server: srv, Logger: logger}, w.dir, cfg)
	w.r.Settle = settle
	if res := w.r.Load(t.Context()); len(res.Errors) > 0 {
		t.Fatalf("load: %v", res.Errors)
	}
	w.renameIn(t, "early", emptyModule, settle+time.Hour)
	l := newReloadLoop(w.r, cfgPath, logger)
	l.configQuiet, l.configMaxDelay = configQuiet, time.Hour
	t.Cleanup(l.start(t.Context(), true))
	w.waitServing(t, "early")
	return w
}

// renameIn writes a plugin outside the folder, its modification time age
// ago, and renames it in as name.wasm.
func (w *watched) renameIn(t *testing.T, name string, module []byte, age time.Duration) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".wasm")
	if err := os.WriteFile(path, module, 0o644); err != nil {
		t.Fatal(err)
	}
	mtime := time.Now().Add(-age)
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path, filepath.Join(w.dir, name+".wasm")); err != nil {
		t.Fatal(err)
	}
}

// state is the Reloader's state of a plugin, "" when it has none.
func (w *watched) state(name string) string {
	_, states := w.r.Status()
	return states[name]
}

func (w *watched) waitServing(t *testing.T, name string) {
	t.Helper()
	poll.Until(t, 30*time.Second, name+" serves", func() bool { return w.state(name) == pluginhost.StateReady })
}

// The watcher's config debounce and the Reloader's settle time are an hour
// here: a plugin file that is complete when it arrives is loaded on its
// event, with nothing to wait for, while one written just now still waits
// to settle.
func TestWatchLoadsASettledFileOnItsEventAndLeavesAFreshOneToSettle(t *testing.T) {
	w := watch(t, "", time.Hour, time.Hour)
	w.renameIn(t, "fresh", emptyModule, 0)
	w.renameIn(t, "settled", emptyModule, 2*time.Hour) // after fresh: the folder holds fresh when settled loads
	w.waitServing(t, "settled")
	if s := w.state("fresh"); s != "" {
		t.Fatalf("a file written just now was loaded before it settled: %q", s)
	}
}

// A plugin deployed right after the config that grants what it needs is
// loaded with those grants, never first refused under the old config.
func TestWatchLoadsAPluginDeployedWithItsGrantsUnderThem(t *testing.T) {
	etc := t.TempDir()
	cfgPath := filepath.Join(etc, "mcphost.toml")
	if err := os.WriteFile(cfgPath, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	w := watch(t, cfgPath, time.Hour, 10*time.Millisecond)

	// The grant, renamed over the config as an editor saves it, then the
	// plugin, which needs it.
	grant := filepath.Join(etc, ".mcphost.toml.tmp")
	if err := os.WriteFile(grant, []byte("[plugins.needy]\nhost_functions = [\"notify_progress\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(grant, cfgPath); err != nil {
		t.Fatal(err)
	}
	manifest, err := json.Marshal(abi.Manifest{ABI: abi.Version, Name: "needy", Version: "1", Needs: abi.Needs{HostFunctions: []string{abi.HostNotifyProgress}}})
	if err != nil {
		t.Fatal(err)
	}
	needy, err := abi.EmbedManifest(emptyModule, manifest)
	if err != nil {
		t.Fatal(err)
	}
	w.renameIn(t, "needy", needy, 2*time.Hour)
	w.waitServing(t, "needy")
	if refused := w.logs.count("plugin not loaded"); refused > 0 {
		t.Fatalf("the plugin was refused %d times before its grant applied", refused)
	}
}

// messages is a slog handler that keeps the messages logged.
type messages struct {
	mu   sync.Mutex
	msgs []string
}

func (m *messages) Enabled(context.Context, slog.Level) bool { return true }

func (m *messages) Handle(_ context.Context, r slog.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.msgs = append(m.msgs, r.Message)
	return nil
}

func (m *messages) WithAttrs([]slog.Attr) slog.Handler { return m }
func (m *messages) WithGroup(string) slog.Handler      { return m }

// count returns how many of the messages logged are msg.
func (m *messages) count(msg string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, s := range m.msgs {
		if s == msg {
			n++
		}
	}
	return n
}
