package sandbox

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/mcphost/mcphost/internal/testrig/wasmtest"
)

// TestCompileBombsAreRefused loads modules that would cost wazero seconds
// to minutes and hundreds of megabytes to compile, each for a different
// reason (internal/wasmpass/compilecaps.go): each is refused at once, before compiling,
// with an error naming the cap it exceeds. Without the caps each of them
// loads, after a compile of one to a few seconds (they are kept small so
// that the test stays short; the e2e test serves the bombs of issue 12).
func TestCompileBombsAreRefused(t *testing.T) {
	const (
		functionCap = "more than the 1073741824 a function may have"
		moduleCap   = "bytes of code may have (2560 a byte, at least 1073741824)"
	)
	for _, c := range []struct {
		name string
		wasm []byte
		want string
	}{
		{"20,000 nested blocks", plugintest.CostlyModule(1, 0, plugintest.NestedBlocks(20_000)), functionCap},
		{"br_tables of 100,000 targets after 2,000 branches", plugintest.CostlyModule(1, 0, plugintest.Branches(2_000), plugintest.BrTables(16, 1, 100_000)), functionCap},
		{"40,000 reads of a local after 4,000 blocks", plugintest.CostlyModule(1, 0, plugintest.LocalGets(4_000, 40_000)), functionCap},
		{"3,000 locals read after 100 branches", plugintest.CostlyModule(1, 3_000, plugintest.Branches(100), plugintest.ReadLocals(3_000)), functionCap},
		{"150 nested loops adding to 200 locals", plugintest.CostlyModule(1, 200, plugintest.LoopNest(150, 200)), functionCap},
		{"10,000,000 locals", plugintest.CostlyModule(1, 10_000_000), functionCap},
		{"three functions of 14,000 nested blocks", plugintest.CostlyModule(3, 0, plugintest.NestedBlocks(14_000)), moduleCap},
		{"a function of 300,000 bytes", plugintest.CostlyModule(1, 0, bytes.Repeat([]byte{0x01}, 300_000)), // nop
			"function 0 has a body of 300002 bytes, more than the 262144 a function may have"},
		{"a module of 21 MiB", abi.AppendCustomSection(plugintest.CostlyModule(1, 0), "pad", make([]byte, 21<<20)),
			"more than the 20 MiB max_module_mib allows"},
	} {
		start := time.Now()
		p, err := engine.Load(t.Context(), "bomb", c.wasm, Options{})
		took := time.Since(start)
		switch {
		case err == nil:
			_ = p.Close(t.Context())
			t.Errorf("%s: loaded after %v; want it refused, naming the cap", c.name, took.Round(time.Millisecond))
		case !strings.Contains(err.Error(), c.want):
			t.Errorf("%s: got %v, want an error with %q", c.name, err, c.want)
		case took > time.Second:
			t.Errorf("%s: refused after %v, want within 1s", c.name, took)
		}
	}
}

// TestCompileCapsAdmitModestModules loads modules of each kind above, small
// enough to compile in milliseconds.
func TestCompileCapsAdmitModestModules(t *testing.T) {
	t.Parallel()
	for _, wasm := range [][]byte{
		plugintest.CostlyModule(1, 0, plugintest.NestedBlocks(1_000)),
		plugintest.CostlyModule(1, 0, plugintest.Branches(100), plugintest.BrTables(16, 1, 1_000)),
		plugintest.CostlyModule(1, 0, plugintest.LocalGets(100, 1_000)),
		plugintest.CostlyModule(1, 100, plugintest.Branches(100), plugintest.ReadLocals(100)),
		plugintest.CostlyModule(1, 20, plugintest.LoopNest(10, 20)),
		plugintest.CostlyModule(100, 1_000),
		plugintest.CostlyModule(1, 0, slices.Repeat([]byte{0x01}, 200_000)),
	} {
		p, err := engine.Load(t.Context(), "modest", wasm, Options{})
		if err != nil {
			t.Fatal(err)
		}
		_ = p.Close(t.Context())
	}
}

// TestMaxModuleMiB loads a module of 3 MiB with Limits.MaxModuleMiB below
// and above its size.
func TestMaxModuleMiB(t *testing.T) {
	t.Parallel()
	wasm := abi.AppendCustomSection(wasmtest.RunModule(), "pad", make([]byte, 3<<20))
	_, err := engine.Load(t.Context(), "big", wasm, Options{Limits: Limits{MaxModuleMiB: 2}})
	if want := "more than the 2 MiB max_module_mib allows"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("max_module_mib = 2: got %v, want an error with %q", err, want)
	}
	p, err := engine.Load(t.Context(), "big", wasm, Options{Limits: Limits{MaxModuleMiB: 4}})
	if err != nil {
		t.Fatalf("max_module_mib = 4: %v", err)
	}
	_ = p.Close(t.Context())
}

// TestLoadWaitsForACompileTurn loads a module while as many compiles as
// EngineOptions.MaxCompiles allow are under way: the load waits for a turn
// until its context ends, and then fails saying so.
func TestLoadWaitsForACompileTurn(t *testing.T) {
	t.Parallel()
	e, err := NewEngine(EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if got := cap(e.compiles); got != runtime.GOMAXPROCS(0) {
		t.Errorf("MaxCompiles 0 allows %d compiles at once, want GOMAXPROCS (%d)", got, runtime.GOMAXPROCS(0))
	}
	if e, err = NewEngine(EngineOptions{MaxCompiles: 1}); err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.compiles <- struct{}{} // a compile under way
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, err = e.Load(ctx, "waits", wasmtest.RunModule(), Options{})
	if want := "waiting for a turn to compile (1 compiles at once)"; err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v, want an error with %q and the deadline", err, want)
	}
	<-e.compiles // it ends
	p, err := e.Load(t.Context(), "waits", wasmtest.RunModule(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	_ = p.Close(t.Context())
}
