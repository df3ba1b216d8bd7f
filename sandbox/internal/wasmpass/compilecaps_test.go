package wasmpass

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/mcphost/mcphost/internal/testrig/wasmtest"
)

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
	modules := map[string][]byte{}
	for _, name := range []string{"guest", "hostcall"} {
		if modules[name], err = os.ReadFile(plugintest.Build(t, "sandbox/testdata/"+name)); err != nil {
			t.Fatal(err)
		}
	}
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
			{"module size (bytes)", float64(len(wasm)), maxModuleBytes},
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

// maxModuleBytes is the sandbox's default cap on a module's size
// (sandbox.DefaultMaxModuleMiB).
const maxModuleBytes = 20 << 20

// FuzzCheckCompileCost feeds the compile caps arbitrary modules: they never
// panic, and a module they accept still passes with a custom section
// appended, which is not code.
func FuzzCheckCompileCost(f *testing.F) {
	for _, seed := range [][]byte{
		wasmtest.RunModule(),
		wasmtest.SpinModule(),
		wasmtest.ImportsModule(),
		plugintest.CostlyModule(2, 3, plugintest.NestedBlocks(3), plugintest.BrTables(2, 1, 3), plugintest.LoopNest(2, 2)),
		plugintest.CostlyModule(1, 0, []byte{0xfd, 0x0c}, make([]byte, 16), []byte{0x1a, 0xfc, 0x0b, 0x00}),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, wasm []byte) {
		if checkCompileCost(wasm, maxModuleBytes) != nil {
			return
		}
		if err := checkCompileCost(abi.AppendCustomSection(wasm, "fuzz", wasm), maxModuleBytes); err != nil {
			t.Fatalf("accepted, but not with a custom section appended: %v", err)
		}
	})
}
