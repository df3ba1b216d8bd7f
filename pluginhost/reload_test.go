package pluginhost

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/mcphost/mcphost/sandbox"
)

// closeCounter is a runtime whose Close is counted.
type closeCounter struct {
	fakeRuntime
	closed atomic.Int32
}

func (c *closeCounter) Close(context.Context) error { c.closed.Add(1); return nil }

func TestARetiredVersionClosesOnlyOnceItsCallsEnded(t *testing.T) {
	release := make(chan struct{})
	running := make(chan struct{})
	inner := &closeCounter{fakeRuntime: fakeRuntime{
		"block": func(context.Context, []byte) ([]byte, error) {
			close(running)
			<-release
			return []byte("old"), nil
		},
		"which": func(context.Context, []byte) ([]byte, error) { return []byte("old"), nil },
	}}
	old, next := &drain{name: "p"}, &drain{name: "p"}
	oldRT := old.wrap(inner)
	next.wrap(fakeRuntime{"which": func(context.Context, []byte) ([]byte, error) { return []byte("new"), nil }})
	var serving atomic.Pointer[drain]
	serving.Store(next)

	done := make(chan string)
	go func() {
		out, err := oldRT.Call(t.Context(), "block", nil)
		if err != nil {
			t.Error(err)
		}
		done <- string(out)
	}()
	<-running
	closed := make(chan struct{})
	old.retire(serving.Load, func() { close(closed) })
	select {
	case <-closed:
		t.Fatal("the old version closed while a call ran on it")
	case <-time.After(50 * time.Millisecond):
	}
	if inner.closed.Load() != 0 {
		t.Fatal("the old runtime was closed while a call ran on it")
	}
	close(release)
	if got := <-done; got != "old" {
		t.Fatalf("the running call answered %q", got)
	}
	<-closed
	if n := inner.closed.Load(); n != 1 {
		t.Fatalf("old runtime closed %d times", n)
	}
	// A late call, from a request that took the old catalog, goes to the
	// version now serving.
	if out, err := oldRT.Call(t.Context(), "which", nil); err != nil || string(out) != "new" {
		t.Fatalf("late call: %q %v", out, err)
	}
	// Once the plugin is removed, it fails plainly.
	serving.Store(nil)
	if _, err := oldRT.Call(t.Context(), "which", nil); !errors.Is(err, errRemoved) {
		t.Fatalf("call to a removed plugin: %v", err)
	}
}

func TestSamePluginConfigComparesEffectiveSettings(t *testing.T) {
	cfg := config.Default()
	a, b := cfg.Plugin("x"), cfg.Plugin("x")
	if !samePluginConfig(a, b) {
		t.Fatal("equal settings differ")
	}
	b.Limits.Timeout++
	if samePluginConfig(a, b) {
		t.Fatal("a limit change went unnoticed")
	}
	b = cfg.Plugin("x")
	b.HostFunctions = []string{abi.HostNotifyProgress}
	if samePluginConfig(a, b) {
		t.Fatal("a grant went unnoticed")
	}
}

// records is a slog handler that keeps the messages and attributes logged.
type records struct {
	mu   sync.Mutex
	msgs []string
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	var b strings.Builder
	b.WriteString(rec.Level.String() + " " + rec.Message)
	rec.Attrs(func(a slog.Attr) bool { b.WriteString(" " + a.String()); return true })
	r.mu.Lock()
	r.msgs = append(r.msgs, b.String())
	r.mu.Unlock()
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

// dump returns every message, one a line.
func (r *records) dump() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.msgs, "\n")
}

// count returns how many messages contain every one of parts.
func (r *records) count(parts ...string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, m := range r.msgs {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(m, p)
		}
		if all {
			n++
		}
	}
	return n
}

// module returns a tiny valid wasm module: no code, a custom section that
// tells versions apart, and the manifest needs when given. It loads in
// milliseconds, also under the race detector.
func module(t *testing.T, version string, needs ...string) []byte {
	t.Helper()
	wasm := []byte("\x00asm\x01\x00\x00\x00")
	wasm = append(wasm, 0, byte(3+len(version)), 1, 'v', byte(len(version)))
	wasm = append(wasm, version...)
	if len(needs) == 0 {
		return wasm
	}
	m, _ := json.Marshal(abi.Manifest{ABI: abi.Version, Name: "swap", Version: "1", Needs: abi.Needs{HostFunctions: needs}})
	wasm, err := abi.EmbedManifest(wasm, m)
	if err != nil {
		t.Fatal(err)
	}
	return wasm
}

func TestReloaderSwapsChangedFilesAndSettings(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "swap.wasm")
	// write replaces swap.wasm through a rename, its mtime age ago.
	write := func(data []byte, age time.Duration) {
		t.Helper()
		if err := os.WriteFile(path+".tmp", data, 0o644); err != nil {
			t.Fatal(err)
		}
		if age != 0 {
			mtime := time.Now().Add(-age)
			if err := os.Chtimes(path+".tmp", mtime, mtime); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			t.Fatal(err)
		}
	}
	a, b := module(t, "a"), module(t, "b")
	write(a, time.Minute)

	r, srv, logs := newTestReloader(t, dir)
	r.Settle, r.DrainGrace = 100*time.Millisecond, 10*time.Millisecond
	res := r.Load(t.Context())
	if len(res.Errors) > 0 || len(res.Plugins) != 1 {
		t.Fatalf("load: %+v", res)
	}
	srv.SetCatalog(host.BuildCatalog(t.Context(), res.Plugins, srv.Logger()))
	serving := func() *host.Plugin {
		if ps := srv.Catalog().Plugins(); len(ps) == 1 {
			return ps[0]
		}
		return nil
	}
	swaps := func() int { return logs.count("plugin swapped") }
	first := serving()
	firstDrain := r.drains[first]

	if retry := r.Sync(t.Context()); retry != 0 || serving() != first {
		t.Fatalf("a sync without changes swapped (retry %v)", retry)
	}

	t.Run("a file modified just now is left to settle", func(t *testing.T) {
		write(b, 0)
		if retry := r.Sync(t.Context()); retry <= 0 || retry > r.Settle {
			t.Fatalf("a fresh file: retry %v", retry)
		}
		if serving() != first {
			t.Fatal("a file still settling was loaded")
		}
		time.Sleep(r.Settle) // kept: the settle time under test must pass
		if retry := r.Sync(t.Context()); retry != 0 || serving() == first {
			t.Fatalf("a settled file was not loaded (retry %v)", retry)
		}
		if logs.count("plugin swapped", "plugin=swap", "change=replaced", "file=swap.wasm", "old_sha256=", "new_sha256=", "took=") != 1 {
			t.Fatalf("no swap log line:\n%s", logs.dump())
		}
	})

	t.Run("the replaced version closes after the grace; late calls reach the new one", func(t *testing.T) {
		d := firstDrain
		poll.Until(t, 5*time.Second, "the replaced version closes", func() bool {
			d.mu.Lock()
			defer d.mu.Unlock()
			return d.closed
		})
		_, err := d.call(t.Context(), abi.ExportListTools, nil)
		var ce *sandbox.CallError
		if !errors.As(err, &ce) || ce.Kind != sandbox.KindNoExport {
			t.Fatalf("a late call did not reach the new version: %v", err)
		}
	})

	t.Run("a file with a modification time in the future settles by watching", func(t *testing.T) {
		before := serving()
		write(a, -time.Hour)
		if retry := r.Sync(t.Context()); retry <= 0 || serving() != before {
			t.Fatalf("retry %v", retry)
		}
		time.Sleep(r.Settle) // kept: the settle time under test must pass
		if r.Sync(t.Context()); serving() == before {
			t.Fatal("a stable file with a future mtime was never loaded")
		}
	})

	t.Run("a broken replacement is refused once and the running version stays", func(t *testing.T) {
		before, n := serving(), swaps()
		for _, bad := range [][]byte{[]byte("\x00asm garbage"), module(t, "c", abi.HostNotifyProgress)} {
			write(bad, time.Minute)
			r.Sync(t.Context())
			r.Sync(t.Context())
			if serving() != before || swaps() != n {
				t.Fatal("a broken file replaced the running version")
			}
		}
		if c := logs.count("plugin not reloaded; the running version keeps serving", "file=swap.wasm", "not a valid wasm module"); c != 1 {
			t.Fatalf("the bad module was refused %d times", c)
		}
		if c := logs.count("plugin not reloaded; the running version keeps serving", "file=swap.wasm", "needs grants"); c != 1 {
			t.Fatalf("the module asking for ungranted host functions was refused %d times", c)
		}
		// The running version's own file back: nothing to load.
		write(a, time.Minute)
		if r.Sync(t.Context()); serving() != before || swaps() != n {
			t.Fatal("the running version's file was loaded again")
		}
	})

	t.Run("settings changes reload the plugin", func(t *testing.T) {
		before, n := serving(), swaps()
		cfg := config.Default()
		cfg.Defaults.Timeout = 5 * time.Second
		r.SetConfig(t.Context(), cfg)
		if serving() == before || logs.count("plugin swapped", "change=reconfigured") != 1 {
			t.Fatal("a limit change did not reload the plugin")
		}
		before = serving()
		same := config.Default()
		same.Defaults.Timeout = 5 * time.Second
		if r.SetConfig(t.Context(), same); serving() != before || swaps() != n+1 {
			t.Fatal("equal settings reloaded the plugin")
		}

		// Granted, then withdrawn: the plugin cannot keep a grant the
		// operator took back.
		write(module(t, "d", abi.HostNotifyProgress), time.Minute)
		granted := config.Default()
		granted.Plugins = map[string]config.PluginConfig{"swap": {HostFunctions: []string{abi.HostNotifyProgress}}}
		if r.SetConfig(t.Context(), granted); serving() == before {
			t.Fatal("a plugin granted what it needs was not loaded")
		}
		if r.SetConfig(t.Context(), config.Default()); serving() != nil {
			t.Fatal("a plugin kept running without the grants it needs")
		}
		if logs.count("plugin swapped", "change=removed", "it does not load with its new settings") != 1 {
			t.Fatalf("the drop is not logged:\n%s", logs.dump())
		}
		if r.SetConfig(t.Context(), granted); serving() == nil {
			t.Fatal("the plugin did not come back with its grants")
		}
		disabled := config.Default()
		disabled.Plugins = map[string]config.PluginConfig{"swap": {Disabled: true}}
		if r.SetConfig(t.Context(), disabled); serving() != nil || logs.count("change=removed", "disabled by config") != 1 {
			t.Fatal("a disabled plugin stays")
		}
		r.SetConfig(t.Context(), granted)
	})

	t.Run("removal drops the plugin", func(t *testing.T) {
		if serving() == nil {
			t.Fatal("nothing serving")
		}
		removals := logs.count("change=removed", "file=swap.wasm", "new_sha256= took=")
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if r.Sync(t.Context()); serving() != nil {
			t.Fatal("a removed plugin stays")
		}
		if logs.count("change=removed", "file=swap.wasm", "new_sha256= took=") != removals+1 {
			t.Fatalf("no removal logged:\n%s", logs.dump())
		}
	})
}

// TestALoadStoppedByShutdownIsNotAnError: plugins whose load the server's
// stop cut short are not broken; that is not logged as an error.
func TestALoadStoppedByShutdownIsNotAnError(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.wasm"), module(t, "a"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, _, logs := newTestReloader(t, dir)
	ctx, stop := context.WithCancel(t.Context())
	stop()
	res := r.Load(ctx)
	if len(res.Plugins) != 0 || len(res.Errors) != 1 {
		t.Fatalf("load with a stopped context: %+v", res)
	}
	if logs.count("ERROR") != 0 || logs.count("WARN") != 0 || logs.count("load stopped", "plugin=a") != 1 {
		t.Errorf("want one debug line for the stopped load, and no error or warning:\n%s", logs.dump())
	}
}

// newTestReloader returns a Reloader of dir with the default config, on a
// fresh engine and a server whose log is recorded.
func newTestReloader(t *testing.T, dir string) (*Reloader, *host.Server, *records) {
	t.Helper()
	engine, err := sandbox.NewEngine(sandbox.EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = engine.Close() })
	logs := &records{}
	srv := host.NewServer(host.Options{Logger: slog.New(logs)}, nil)
	return NewReloader(&Loader{Engine: engine, Server: srv, Logger: srv.Logger()}, dir, config.Default()), srv, logs
}
