//go:build !race

package sandbox_test

import (
	"encoding/json"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/mcphost/mcphost/pluginhost"
	"github.com/mcphost/mcphost/sandbox"
)

// TestACallLeavesLittleGarbageInTheHost counts what a call allocates on
// the host's heap: the tools example's hash, built with the standard
// toolchain. Every byte is garbage for the host's collector, whose cycles
// land on the calls that allocate (in BenchmarkSequentialCalls, with
// 80 KiB per call, a cycle every fifty calls of a small plugin, each
// four to five median calls long: the slowest 2%). Extism's own call path
// left those 80 KiB (call.go); what is left is the sandbox's bookkeeping.
// make test runs it without -race, which allocates on its own.
func TestACallLeavesLittleGarbageInTheHost(t *testing.T) {
	const maxBytes = 4 << 10
	wasm, err := os.ReadFile(plugintest.Build(t, "plugins/examples/tools"))
	if err != nil {
		t.Fatal(err)
	}
	engine, err := sandbox.NewEngine(sandbox.EngineOptions{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engine.Close() })
	p, err := engine.Load(t.Context(), "tools", wasm, sandbox.Options{
		Limits:        sandbox.Limits{MaxInstances: 1},
		HostFunctions: pluginhost.DeniedHostFunctions("tools"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(t.Context()) })
	in, err := json.Marshal(plugintest.Input(abi.CallToolParams{Name: "hash", Arguments: json.RawMessage(`{"text":"abc"}`)}, nil))
	if err != nil {
		t.Fatal(err)
	}
	hash := func() {
		out, err := p.Call(t.Context(), abi.ExportCallTool, in)
		if err != nil || !strings.Contains(string(out), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") {
			t.Fatalf("hash(abc): %s, %v", out, err)
		}
	}
	hash() // the instance's first call
	const calls = 200
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range calls {
		hash()
	}
	runtime.ReadMemStats(&after)
	perCall := (after.TotalAlloc - before.TotalAlloc) / calls
	t.Logf("a hash call allocates %d bytes on the host's heap", perCall)
	if perCall > maxBytes {
		t.Errorf("a hash call allocates %d bytes on the host's heap, more than %d", perCall, maxBytes)
	}
}
