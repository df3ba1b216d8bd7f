package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A deferred plugin answers what needs no compiling at once (its exports),
// holds no compiled code until its first call, and then serves it as a
// compiled one does; the bytes it reads again at the build are its module.
func TestDeferCompilesOnTheFirstCall(t *testing.T) {
	wasm := testWasm(t, "guest")
	reread := 0
	p, err := engine.Defer(t.Context(), "guest", wasm, Options{Reread: func() ([]byte, error) { reread++; return wasm, nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	if p.Built() || !p.HasExport("echo") || p.HasExport("nope") {
		t.Fatalf("deferred: built %v, exports echo %v, nope %v", p.Built(), p.HasExport("echo"), p.HasExport("nope"))
	}
	out, err := p.Call(t.Context(), "echo", []byte("hi"))
	if err != nil || string(out) != "hi" {
		t.Fatalf("first call: %q, %v", out, err)
	}
	if !p.Built() || reread != 1 {
		t.Fatalf("after the first call: built %v, module read again %d times, want once", p.Built(), reread)
	}
	if _, err := p.Call(t.Context(), "echo", []byte("again")); err != nil || reread != 1 {
		t.Fatalf("second call: %v, module read again %d times", err, reread)
	}
}

// Build compiles a deferred plugin without making an instance; a failed
// build closes nothing, and the next Build or call tries again.
func TestBuildCompilesWithoutAnInstanceAndClosesNothingOnFailure(t *testing.T) {
	e, err := NewEngine(EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	wasm := testWasm(t, "guest")
	readable := false
	p, err := e.Defer(t.Context(), "guest", wasm, Options{Reread: func() ([]byte, error) {
		if !readable {
			return nil, errors.New("the file is gone")
		}
		return wasm, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	if err := p.Build(t.Context()); err == nil || !strings.Contains(err.Error(), "the file is gone") {
		t.Fatalf("Build without the module: %v", err)
	}
	readable = true
	if err := p.Build(t.Context()); err != nil || !p.Built() {
		t.Fatalf("Build: %v, built %v", err, p.Built())
	}
	if used := budgetUsed(e); used != 0 {
		t.Fatalf("Build made an instance: %d bytes of the budget used", used)
	}
	if out, err := p.Call(t.Context(), "echo", []byte("hi")); err != nil || string(out) != "hi" {
		t.Fatalf("call after Build: %q, %v", out, err)
	}
}

// A deferred plugin whose module cannot be read again fails its calls with
// the reason, and tries again at each call (the file may be back);
// closing one that never built works.
func TestDeferThatCannotBuildFailsItsCalls(t *testing.T) {
	wasm := testWasm(t, "guest")
	gone := errors.New("the file is gone")
	rereads := 0
	p, err := engine.Defer(t.Context(), "guest", wasm, Options{Reread: func() ([]byte, error) { rereads++; return nil, gone }})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := p.Call(t.Context(), "echo", nil); err == nil || !strings.Contains(err.Error(), gone.Error()) {
			t.Fatalf("call: %v, want the reread's error", err)
		}
	}
	if p.Built() || rereads != 2 {
		t.Fatalf("built %v without its module, read %d times, want at each of 2 calls", p.Built(), rereads)
	}
	if err := p.Close(t.Context()); err != nil {
		t.Fatalf("closing a plugin never built: %v", err)
	}
	q, err := engine.Defer(t.Context(), "guest", wasm, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Close(t.Context()); err != nil {
		t.Fatalf("closing a plugin never called: %v", err)
	}
}

// Defer refuses at once what Compile refuses without compiling: a module
// that is not WebAssembly, or limits out of range.
func TestDeferChecksWhatNeedsNoCompiling(t *testing.T) {
	if _, err := engine.Defer(t.Context(), "junk", []byte("not wasm"), Options{}); err == nil {
		t.Error("Defer took bytes that are not a module")
	}
	if _, err := engine.Defer(t.Context(), "guest", testWasm(t, "guest"), Options{Limits: Limits{MemoryMiB: maxMemoryMiB + 1}}); err == nil {
		t.Error("Defer took a memory limit out of range")
	}
}

// An Engine with a cache directory remembers there which modules wazero
// found valid, so that another Engine on the directory (the next start)
// does not validate them again.
func TestValidModulesAreRememberedInTheCacheDir(t *testing.T) {
	dir := t.TempDir()
	e, err := NewEngine(EngineOptions{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	p, err := e.Compile(t.Context(), "guest", testWasm(t, "guest"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	_ = p.Close(t.Context())
	markers, _ := filepath.Glob(filepath.Join(dir, "mcphost-valid", "*."+validatorID()))
	if len(markers) != 1 {
		t.Fatalf("markers %v, want one for the module", markers)
	}
	v := validatedModules{dir: filepath.Join(dir, "mcphost-valid")}
	// Not valid, but remembered as valid: only the marker can say so.
	name := filepath.Base(markers[0])
	junk := []byte("not a module")
	if err := os.Rename(markers[0], filepath.Join(filepath.Dir(markers[0]), strings.Replace(name, name[:64], sum64(junk), 1))); err != nil {
		t.Fatal(err)
	}
	if err := v.validate(t.Context(), junk); err != nil {
		t.Fatalf("a remembered digest was validated again: %v", err)
	}
	if err := (&validatedModules{}).validate(t.Context(), junk); !errors.Is(err, ErrInvalidModule) {
		t.Fatalf("without the marker: %v, want ErrInvalidModule", err)
	}
}

// sum64 is the hex sha256 of b.
func sum64(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// A plugin on wazero's interpreter answers as a compiled one does, within
// the same limits: an endless loop ends at its timeout.
func TestInterpretedPluginKeepsItsLimits(t *testing.T) {
	p, err := engine.Compile(t.Context(), "guest", testWasm(t, "guest"), Options{Interpret: true, Limits: Limits{Timeout: 300 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	if out, err := p.Call(t.Context(), "echo", []byte("hi")); err != nil || string(out) != "hi" {
		t.Fatalf("echo: %q, %v", out, err)
	}
	started := time.Now()
	_, err = p.Call(t.Context(), "loop", nil)
	var ce *CallError
	if !errors.As(err, &ce) || ce.Kind != KindTimeout {
		t.Fatalf("loop: %v, want a timeout", err)
	}
	if took := time.Since(started); took > 10*time.Second {
		t.Fatalf("the loop ran %v past a 300ms timeout", took)
	}
}

// A call of a deferred plugin whose context ends while its build waits for
// a compile turn (a client that gave up, a server told to stop) fails; the
// plugin is not broken by it: the next call builds it and is served.
func TestABuildWhoseCallerGaveUpIsTriedAgain(t *testing.T) {
	e, err := NewEngine(EngineOptions{MaxCompiles: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	wasm := testWasm(t, "guest")
	p, err := e.Defer(t.Context(), "guest", wasm, Options{Reread: func() ([]byte, error) { return wasm, nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	e.compiles <- struct{}{} // another plugin's compile under way
	ctx, cancel := context.WithCancelCause(t.Context())
	time.AfterFunc(100*time.Millisecond, func() { cancel(errors.New("terminated signal received")) })
	if _, err := p.Call(ctx, "echo", []byte("hi")); err == nil || !strings.Contains(err.Error(), "waiting for a turn to compile") {
		t.Fatalf("a call given up while waiting for a compile turn: %v", err)
	}
	<-e.compiles // the other compile ends
	if out, err := p.Call(t.Context(), "echo", []byte("hi")); err != nil || string(out) != "hi" {
		t.Fatalf("the next call: %q, %v; want the plugin built and served", out, err)
	}
}
