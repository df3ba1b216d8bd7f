package cli

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/mcphost/mcphost/pluginhost"
	"github.com/mcphost/mcphost/sandbox"
)

// The watcher's delays and the Reloader's settle time are all an hour
// here: a plugin file that is complete when it arrives is loaded on its
// event, with nothing to wait for, while one written just now still waits
// to settle.
func TestWatchLoadsASettledFileOnItsEventAndLeavesAFreshOneToSettle(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	engine, err := sandbox.NewEngine(sandbox.EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = engine.Close() })
	logger := slog.New(slog.DiscardHandler)
	srv := host.NewServer(host.Options{Logger: logger, CatalogChanges: true}, nil)
	r := pluginhost.NewReloader(&pluginhost.Loader{Engine: engine, Server: srv, Logger: logger}, dir, config.Default())
	r.Settle = time.Hour
	if res := r.Load(t.Context()); len(res.Errors) > 0 {
		t.Fatalf("load: %v", res.Errors)
	}
	// An empty module, written outside the folder and renamed in, its
	// mtime age ago: settled when that is longer than the settle time.
	module := []byte("\x00asm\x01\x00\x00\x00")
	renameIn := func(name string, age time.Duration) {
		t.Helper()
		path := filepath.Join(outside, name+".wasm")
		if err := os.WriteFile(path, module, 0o644); err != nil {
			t.Fatal(err)
		}
		mtime := time.Now().Add(-age)
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path, filepath.Join(dir, name+".wasm")); err != nil {
			t.Fatal(err)
		}
	}
	state := func(name string) string {
		_, states := r.Status()
		return states[name]
	}
	// A file that arrived between the load and the watch is found by the
	// watch's first look, which is then over: what follows is loaded on
	// its events alone.
	renameIn("early", 2*time.Hour)
	l := newReloadLoop(r, "", logger)
	l.configQuiet, l.configMaxDelay = time.Hour, time.Hour
	stop := l.start(t.Context(), true)
	t.Cleanup(stop)
	poll.Until(t, 30*time.Second, "the plugin added before the watch serves", func() bool { return state("early") == pluginhost.StateReady })

	renameIn("fresh", 0)
	renameIn("settled", 2*time.Hour) // after fresh: the folder holds fresh when settled loads
	poll.Until(t, 30*time.Second, "the settled plugin serves", func() bool { return state("settled") == pluginhost.StateReady })
	if s := state("fresh"); s != "" {
		t.Fatalf("a file written just now was loaded before it settled: %q", s)
	}
	if n := len(srv.Catalog().Plugins()); n != 2 {
		t.Fatalf("%d plugins serve, want early and settled", n)
	}
}
