//go:build !race

package sandbox_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

// TestACallLeavesLittleGarbageInTheHost counts what a call allocates on
// the host's heap: the tools example's hash, built with the standard
// toolchain. Every byte is garbage for the host's collector, whose cycles
// land on the calls that allocate (in BenchmarkSequentialCalls, with
// 80 KiB per call, a cycle every fifty calls of a small plugin, each
// four to five median calls long: the slowest 2%). Extism's own call path
// left those 80 KiB (call.go); what is left is the sandbox's bookkeeping:
// 1.9 KiB, then about 1 KiB once a call's context values were one node and
// store_u64 was left to Extism (BenchmarkCallRealPlugin). make test runs it
// without -race, which allocates on its own.
func TestACallLeavesLittleGarbageInTheHost(t *testing.T) {
	const maxBytes = 2 << 10
	p := loadInOwnEngine(t, "plugins/examples/tools", "tools")
	in := hashABCInput(t)
	hash := func() {
		out, err := p.Call(t.Context(), abi.ExportCallTool, in)
		if err != nil || !strings.Contains(string(out), sha256ABC) {
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
