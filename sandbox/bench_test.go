//go:build unix

package sandbox_test

import (
	"bytes"
	"encoding/json"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/mcphost/mcphost/pluginhost"
	"github.com/mcphost/mcphost/sandbox"
)

// BenchmarkCallRealPlugin measures what one (*sandbox.Plugin).Call of a
// trivial export costs through the real sandbox: a compiled plugin, its
// pool, the kernel functions and the interruption countdown, on an instance
// that has made its first call. Besides ns/op it reports cpu-ns/op, the
// process's CPU time a call, collector included, which other processes on
// a busy machine inflate less than wall time. Two plugins, built with the standard
// toolchain:
//   - echo: the guest test plugin's echo export, which reads its input and
//     sets it as its output with the bare Extism kernel, so that what is
//     measured is nearly all the sandbox's own cost;
//   - hash: the tools example's hash tool through the Go PDK, a call_tool
//     as mcphost serve makes it (without the protocol).
//
// Compare builds pinned to one CPU, interleaved, with benchstat:
//
//	go test -c -o new.test ./sandbox
//	taskset -c 1 ./new.test -test.run '^$' -test.bench CallRealPlugin -test.cpu 1 -test.count 10
func BenchmarkCallRealPlugin(b *testing.B) {
	hash, err := json.Marshal(plugintest.Input(abi.CallToolParams{Name: "hash", Arguments: json.RawMessage(`{"text":"abc"}`)}, nil))
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name, pkg, export string
		input             []byte
		want              string
	}{
		{"echo", "sandbox/testdata/guest", "echo", []byte("the quick brown fox"), "the quick brown fox"},
		{"hash", "plugins/examples/tools", abi.ExportCallTool, hash, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	} {
		b.Run(c.name, func(b *testing.B) {
			wasm, err := os.ReadFile(plugintest.Build(b, c.pkg))
			if err != nil {
				b.Fatal(err)
			}
			engine, err := sandbox.NewEngine(sandbox.EngineOptions{CacheDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { engine.Close() })
			p, err := engine.Load(b.Context(), c.name, wasm, sandbox.Options{
				Limits:        sandbox.Limits{MaxInstances: 1},
				HostFunctions: pluginhost.DeniedHostFunctions(c.name),
			})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { p.Close(b.Context()) })
			call := func() {
				out, err := p.Call(b.Context(), c.export, c.input)
				if err != nil || !bytes.Contains(out, []byte(c.want)) {
					b.Fatalf("%s: %s, %v", c.name, out, err)
				}
			}
			call() // the instance's first call, which goes through Extism
			b.ReportAllocs()
			cpu := processCPU(b)
			for b.Loop() {
				call()
			}
			b.ReportMetric(float64(processCPU(b)-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// processCPU returns the CPU time the process has used, user and system.
func processCPU(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
