//go:build !race

package sandbox

import (
	"runtime"
	"strings"
	"testing"
)

// TestACallLeavesLittleGarbageInTheHost counts what a call allocates on
// the host's heap: a call that echoes 4 KiB through the Extism kernel.
// Every byte is garbage for the host's collector, whose cycles land on the
// calls that allocate (a tail of about four median calls of a small
// plugin, every twenty calls, in BenchmarkSequentialCalls). Extism's own
// wrapper of its kernel functions looked each one up at each call,
// creating a function with a call stack of its own: 3 KB of garbage for
// each 8 bytes a plugin stored. make test runs it without -race, which
// allocates on its own.
func TestACallLeavesLittleGarbageInTheHost(t *testing.T) {
	const maxBytes = 64 << 10
	p := load(t, "guest", Options{Limits: Limits{MaxInstances: 1}})
	in := strings.Repeat("x", 4<<10)
	call(t, p, "echo", in) // the instance's first call
	const calls = 100
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range calls {
		if out := call(t, p, "echo", in); len(out) != len(in) {
			t.Fatalf("echo returned %d bytes, want %d", len(out), len(in))
		}
	}
	runtime.ReadMemStats(&after)
	perCall := (after.TotalAlloc - before.TotalAlloc) / calls
	t.Logf("a call echoing 4 KiB allocates %d KiB on the host's heap", perCall>>10)
	if perCall > maxBytes {
		t.Errorf("a call echoing 4 KiB allocates %d KiB on the host's heap, more than %d KiB", perCall>>10, maxBytes>>10)
	}
}
