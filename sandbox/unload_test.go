package sandbox

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/mcphost/mcphost/internal/testrig/wasmtest"
)

// unloadEngine returns an Engine that unloads plugins idle for after, on
// a compilation cache folder shared by the tests, not to compile the test
// plugins again.
func unloadEngine(t *testing.T, after time.Duration) *Engine {
	t.Helper()
	e, err := NewEngine(EngineOptions{UnloadIdleAfter: after, CacheDir: filepath.Join(wasmDir, "cache")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// rereadCounter returns an Options.Reread of wasm that counts its reads.
func rereadCounter(wasm []byte) (func() ([]byte, error), *atomic.Int32) {
	var n atomic.Int32
	return func() ([]byte, error) { n.Add(1); return wasm, nil }, &n
}

// A plugin that can read its module again gives back its compiled code
// and instances (and their share of the memory budget) once idle for the
// Engine's period, and its next call builds it again and is served.
func TestIdlePluginGivesBackItsCompiledCodeAndInstances(t *testing.T) {
	e := unloadEngine(t, 100*time.Millisecond)
	wasm := testWasm(t, "guest")
	reread, reads := rereadCounter(wasm)
	p, err := e.Compile(t.Context(), "guest", wasm, Options{Reread: reread})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	if out, err := p.Call(t.Context(), "echo", []byte("one")); err != nil || string(out) != "one" {
		t.Fatalf("first call: %q, %v", out, err)
	}
	if held := budgetUsed(e); held == 0 {
		t.Fatal("the idle instance holds none of the budget")
	}
	poll.Until(t, 10*time.Second, "the idle plugin unloaded", func() bool { return !p.Built() })
	if held := budgetUsed(e); held != 0 {
		t.Fatalf("unloaded, the plugin still holds %d bytes of the budget", held)
	}
	if out, err := p.Call(t.Context(), "echo", []byte("two")); err != nil || string(out) != "two" {
		t.Fatalf("call after the unload: %q, %v", out, err)
	}
	if !p.Built() || reads.Load() != 2 {
		t.Fatalf("after the call: built %v, module read %d times, want 2 (compile, rebuild)", p.Built(), reads.Load())
	}
}

// budgetUsed is what the Engine's instances hold of its budget.
func budgetUsed(e *Engine) uint64 {
	e.budget.mu.Lock()
	defer e.budget.mu.Unlock()
	return e.budget.used
}

// A call that runs longer than the idle period keeps its plugin built
// throughout: a plugin is idle from the end of its last call.
func TestPluginIsNotUnloadedUnderARunningCall(t *testing.T) {
	e := unloadEngine(t, 20*time.Millisecond)
	wasm := testWasm(t, "guest")
	reread, _ := rereadCounter(wasm)
	p, err := e.Compile(t.Context(), "guest", wasm, Options{Reread: reread, Limits: Limits{Timeout: 500 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	done := make(chan error, 1)
	go func() {
		_, err := p.Call(context.Background(), "sleep", nil)
		done <- err
	}()
	poll.Until(t, 5*time.Second, "the call under way", func() bool { return p.idle.users.Load() == 1 })
	unbuilt := 0
	for running := true; running; {
		select {
		case err := <-done:
			if ce, ok := err.(*CallError); !ok || ce.Kind != KindTimeout {
				t.Fatalf("sleep: %v, want its timeout", err)
			}
			running = false
		default:
			// Under buildMu, as the unload runs: it marks the plugin
			// unbuilt for as long as it looks at the count of users,
			// which a look at Built alone may catch.
			p.buildMu.Lock()
			if p.compiled == nil {
				unbuilt++
			}
			p.buildMu.Unlock()
			time.Sleep(time.Millisecond)
		}
	}
	if unbuilt != 0 {
		t.Fatalf("the plugin's compiled code was closed %d times during a call of 500ms (idle period 20ms)", unbuilt)
	}
}

// A plugin that cannot read its module again, or on an Engine without an
// idle period or without a cache folder to load its code from again, keeps
// its compiled code however long it is idle.
func TestPluginWithoutRereadIsNeverUnloaded(t *testing.T) {
	for name, c := range map[string]struct {
		after   time.Duration
		reread  bool
		noCache bool
	}{
		"no reread":       {after: time.Millisecond},
		"no idle period":  {reread: true},
		"no cache folder": {after: time.Millisecond, reread: true, noCache: true},
	} {
		t.Run(name, func(t *testing.T) {
			e := unloadEngine(t, c.after)
			if c.noCache {
				bare, err := NewEngine(EngineOptions{UnloadIdleAfter: c.after})
				if err != nil {
					t.Fatal(err)
				}
				_ = bare.Close()
				if bare.unloadIdleAfter != 0 {
					t.Fatalf("an Engine without a cache folder unloads after %v", bare.unloadIdleAfter)
				}
				e = engine // the same, with guest compiled already
			}
			wasm := testWasm(t, "guest")
			opts := Options{}
			if c.reread {
				opts.Reread, _ = rereadCounter(wasm)
			}
			p, err := e.Compile(t.Context(), "guest", wasm, opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.Close(context.Background()) })
			if _, err := p.Call(t.Context(), "echo", nil); err != nil {
				t.Fatal(err)
			}
			if p.idle.timer != nil {
				t.Fatal("an idle check was armed")
			}
			if poll.Within(100*time.Millisecond, func() bool { return !p.Built() }) {
				t.Fatal("unloaded")
			}
		})
	}
}

// Calls from many goroutines, against an idle period short enough that
// the unload check runs between and beside them all the time, all
// succeed: an unload never closes what a call uses (run with -race).
func TestUnloadRacesNoCall(t *testing.T) {
	e := unloadEngine(t, time.Millisecond)
	wasm := testWasm(t, "guest")
	reread, reads := rereadCounter(wasm)
	p, err := e.Defer(t.Context(), "guest", wasm, Options{Reread: reread})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 4 {
		wg.Go(func() {
			for i := range 60 {
				if i%10 == g {
					time.Sleep(3 * time.Millisecond) // idle long enough to be unloaded
				}
				if out, err := p.Call(t.Context(), "echo", []byte("x")); err != nil || string(out) != "x" {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("call: %v", err)
	}
	if reads.Load() < 2 {
		t.Fatalf("the module was read %d times: the plugin was never unloaded between calls", reads.Load())
	}
}

// Plugins built from the same module share one compilation cache, which is
// closed, freeing their compiled code, when the last of them closes; on an
// Engine without a cache folder every plugin shares the Engine's one.
func TestCompiledCodeIsSharedByModuleAndClosedWithItsLastPlugin(t *testing.T) {
	e := unloadEngine(t, 0)
	wasm := testWasm(t, "guest")
	a, err := e.Compile(t.Context(), "a", wasm, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.Compile(t.Context(), "b", wasm, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.code != b.code || len(e.code.byModule) != 1 {
		t.Fatalf("two plugins of one module: caches %p and %p, %d in all", a.code, b.code, len(e.code.byModule))
	}
	_ = a.Close(t.Context())
	if len(e.code.byModule) != 1 {
		t.Fatal("the cache closed while a plugin used it")
	}
	if _, err := b.Call(t.Context(), "echo", []byte("x")); err != nil {
		t.Fatalf("the other plugin after the first closed: %v", err)
	}
	_ = b.Close(t.Context())
	if len(e.code.byModule) != 0 {
		t.Fatal("the cache outlived its last plugin")
	}
	if c, _, err := engine.code.acquire(wasm); err != nil || c.cache != engine.code.shared {
		t.Fatalf("an Engine without a cache folder compiles with another cache than its one (%v)", err)
	}
}

// Plugins of one module built at once, with its code in the cache folder
// but not in memory (the last plugin of the module was closed or
// unloaded), each get the whole compiled code: wazero (v1.12.0) publishes
// a module read from the folder to the other runtimes of its cache before
// it has compiled the module's entry preambles (one per function type),
// and a plugin that found it there and called at once crashed the process
// ("index out of range [16] with length 0" in wazevo's NewFunction). The
// module here has many types, so that its preambles take long to compile.
// The builds of one module take turns (codeCache.compileMu).
func TestPluginsOfOneModuleBuiltAtOnceFromTheCacheFolder(t *testing.T) {
	e := unloadEngine(t, 0)
	wasm := manyTypesModule(20000)
	first, err := e.Compile(t.Context(), "first", wasm, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_ = first.Close(t.Context()) // the code is in the folder, and leaves memory
	const plugins, rounds = 4, 3
	for round := range rounds {
		ps := make([]*Plugin, plugins)
		for i := range ps {
			if ps[i], err = e.Defer(t.Context(), fmt.Sprintf("p%d", i), wasm, Options{}); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		for _, p := range ps {
			wg.Go(func() {
				if _, err := p.Call(t.Context(), "run", nil); err != nil {
					t.Errorf("round %d: %s built beside the others: %v", round, p.Name(), err)
				}
			})
		}
		wg.Wait()
		for _, p := range ps {
			_ = p.Close(t.Context())
		}
		if len(e.code.byModule) != 0 {
			t.Fatalf("round %d: the module's cache outlived its plugins", round)
		}
	}
}

// manyTypesModule is wasmtest.RunModule with n more function types, each
// of its own parameters (the bits of its index as i32 or i64).
func manyTypesModule(n int) []byte {
	types := [][]byte{{0x60, 0x00, 0x01, 0x7f}} // type 0: () -> i32, run's
	for i := 1; i <= n; i++ {
		var params []byte
		for v := i; v > 0; v >>= 1 {
			params = append(params, []byte{0x7f, 0x7e}[v&1]) // i32, i64
		}
		types = append(types, slices.Concat([]byte{0x60}, wasmtest.Vec(bytesOf(params)...), []byte{0x00}))
	}
	return wasmtest.Module(
		wasmtest.Section(1, wasmtest.Vec(types...)),
		wasmtest.Section(3, wasmtest.Vec([]byte{0x00})),
		wasmtest.Section(7, wasmtest.Vec(slices.Concat(wasmtest.Name("run"), []byte{0x00, 0x00}))),
		wasmtest.Section(10, wasmtest.Vec([]byte{0x04, 0x00, 0x41, 0x00, 0x0b})),
	)
}

// bytesOf returns each byte of b as a slice of its own.
func bytesOf(b []byte) [][]byte {
	items := make([][]byte, len(b))
	for i := range b {
		items[i] = b[i : i+1]
	}
	return items
}
