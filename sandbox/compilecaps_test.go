package sandbox

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/plugintest"
)

// TestCompileBombsAreRefused loads modules that would cost wazero seconds
// to minutes and hundreds of megabytes to compile, each for a different
// reason (compilecaps.go): each is refused at once, before compiling,
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
	wasm := abi.AppendCustomSection(runModule(), "pad", make([]byte, 3<<20))
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
	_, err = e.Load(ctx, "waits", runModule(), Options{})
	if want := "waiting for a turn to compile (1 compiles at once)"; err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v, want an error with %q and the deadline", err, want)
	}
	<-e.compiles // it ends
	p, err := e.Load(t.Context(), "waits", runModule(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	_ = p.Close(t.Context())
}

// TestRealModulesAreWellWithinTheCompileCaps measures the plugins of this
// repository, in each language (Go examples and test plugins, the Rust
// example when a Rust toolchain is there, the JavaScript engine): none
// comes within four times of a cap. RATIONALE.md ("How a module's compile
// cost is bounded") has the measurements. It is not parallel: the builds
// would slow the tests that time their calls.
func TestRealModulesAreWellWithinTheCompileCaps(t *testing.T) {
	root, err := plugintest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	modules := map[string][]byte{"guest": testWasm(t, "guest"), "hostcall": testWasm(t, "hostcall")}
	if modules["engine.wasm"], err = os.ReadFile(filepath.Join(root, "internal", "jsengine", "engine.wasm")); err != nil {
		t.Fatal(err)
	}
	goExamples, _ := filepath.Glob(filepath.Join(root, "plugins", "examples", "*", "main.go"))
	for _, main := range goExamples {
		name := filepath.Base(filepath.Dir(main))
		if modules[name], err = os.ReadFile(plugintest.Build(t, "plugins/examples/"+name)); err != nil {
			t.Fatal(err)
		}
	}
	rustExamples, _ := filepath.Glob(filepath.Join(root, "plugins", "examples", "*", "Cargo.toml"))
	for _, crate := range rustExamples {
		name, out := filepath.Base(filepath.Dir(crate)), filepath.Join(t.TempDir(), "rust.wasm")
		build := exec.Command(filepath.Join(root, "pdk", "rust", "build-plugin.sh"), "--skip-missing", filepath.Dir(crate), out)
		if msg, err := build.CombinedOutput(); err != nil {
			t.Fatalf("building %s: %v\n%s", name, err, msg)
		}
		if modules[name], err = os.ReadFile(out); os.IsNotExist(err) {
			t.Logf("%s left out: no Rust toolchain for WebAssembly", name)
			delete(modules, name)
		} else if err != nil {
			t.Fatal(err)
		}
	}
	for name, wasm := range modules {
		var body, work, code, total float64 // the largest body and function work; the module's code and work
		if err := moduleShapes(wasm, func(s funcShape) error {
			body, work = max(body, float64(s.size)), max(work, s.work())
			code, total = code+float64(s.size), total+s.work()
			return nil
		}); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		t.Logf("%s: %d bytes, %.0f of code, largest body %.0f bytes, largest function work %.3g, total work %.3g (%.0f a byte of code)",
			name, len(wasm), code, body, work, total, total/code)
		for _, c := range []struct {
			what        string
			used, limit float64
		}{
			{"module size (bytes)", float64(len(wasm)), DefaultMaxModuleMiB << 20},
			{"function body (bytes)", body, maxFunctionBytes},
			{"function work", work, maxFunctionWork},
			{"module work", total, codeWorkPerByte * code},
		} {
			if c.used > c.limit/4 {
				t.Errorf("%s: %s %.0f is more than a quarter of its cap %.0f: recalibrate the caps (compilecaps.go, RATIONALE.md)", name, c.what, c.used, c.limit)
			}
		}
	}
}

// FuzzCheckCompileCost feeds the compile caps arbitrary modules: they never
// panic, and a module they accept still passes with a custom section
// appended, which is not code.
func FuzzCheckCompileCost(f *testing.F) {
	for _, seed := range [][]byte{
		runModule(),
		spinModule(),
		importsModule(),
		plugintest.CostlyModule(2, 3, plugintest.NestedBlocks(3), plugintest.BrTables(2, 1, 3), plugintest.LoopNest(2, 2)),
		plugintest.CostlyModule(1, 0, []byte{0xfd, 0x0c}, make([]byte, 16), []byte{0x1a, 0xfc, 0x0b, 0x00}),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, wasm []byte) {
		if checkCompileCost(wasm, DefaultMaxModuleMiB<<20) != nil {
			return
		}
		if err := checkCompileCost(abi.AppendCustomSection(wasm, "fuzz", wasm), DefaultMaxModuleMiB<<20); err != nil {
			t.Fatalf("accepted, but not with a custom section appended: %v", err)
		}
	})
}
