package sandbox_test

import (
	"bytes"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/cputime"
)

// BenchmarkCallRealPlugin measures what one (*sandbox.Plugin).Call of a
// trivial export costs through the real sandbox: a compiled plugin, its
// pool, the kernel functions and the interruption countdown, on an instance
// that has made its first call. Besides ns/op it reports cpu-ns/op
// (cputime). Two plugins, built with the standard toolchain:
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
	for _, c := range []struct {
		name, pkg, export string
		input             []byte
		want              string
	}{
		{"echo", "sandbox/testdata/guest", "echo", []byte("the quick brown fox"), "the quick brown fox"},
		{"hash", "plugins/examples/tools", abi.ExportCallTool, hashABCInput(b), sha256ABC},
	} {
		b.Run(c.name, func(b *testing.B) {
			p := loadInOwnEngine(b, c.pkg, c.name)
			call := func() {
				out, err := p.Call(b.Context(), c.export, c.input)
				if err != nil || !bytes.Contains(out, []byte(c.want)) {
					b.Fatalf("%s: %s, %v", c.name, out, err)
				}
			}
			call() // the instance's first call, which goes through Extism
			b.ReportAllocs()
			cpu := cputime.Start(b)
			for b.Loop() {
				call()
			}
			cputime.ReportPerOp(b, cpu)
		})
	}
}
