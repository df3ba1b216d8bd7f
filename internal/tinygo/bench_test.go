//go:build linux

package tinygo_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"text/tabwriter"
	"time"
	"unsafe"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/mcphost/mcphost/pluginhost"
	"github.com/mcphost/mcphost/sandbox"
)

// BenchmarkSequentialCalls calls the tools example's hash tool through the
// sandbox (as mcphost serve does, without the protocol), one call after the
// other, built with each toolchain, and reports the distribution of a
// call's latency: median, p99, p99.9 and the slowest, in wall time and in
// the CPU time of the calling thread (which a busy machine does not
// inflate: on a shared 2-core machine the wall time's tail is mostly other
// processes). A collector that stalls shows in both (the TinyGo asyncify
// build before the PDK's worker goroutine: a median of 0.3 ms, a p99 of
// 330 ms). Run it with 10,000 calls per build:
//
//	go test ./internal/tinygo -run '^$' -bench SequentialCalls -benchtime 10000x
func BenchmarkSequentialCalls(b *testing.B) {
	type row struct{ wall, cpu []time.Duration }
	rows := map[plugintest.Toolchain]row{}
	for _, tc := range plugintest.Toolchains {
		b.Run(string(tc), func(b *testing.B) {
			if tc != plugintest.Go {
				plugintest.RequireTinyGo(b)
			}
			wasm, err := os.ReadFile(plugintest.BuildWith(b, "plugins/examples/tools", tc))
			if err != nil {
				b.Fatal(err)
			}
			engine, err := sandbox.NewEngine(sandbox.EngineOptions{CacheDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer engine.Close()
			ctx := context.Background()
			p, err := engine.Load(ctx, "tools", wasm, sandbox.Options{HostFunctions: pluginhost.DeniedHostFunctions("tools")})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close(ctx)
			in := hashInput(b, "abc")
			call := func() {
				out, err := p.Call(ctx, abi.ExportCallTool, in)
				if err != nil || !strings.Contains(string(out), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") {
					b.Fatalf("hash(abc): %s, %v", out, err)
				}
			}
			call() // the instance's first call
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var r row
			for b.Loop() {
				cpu := threadCPU(b)
				start := time.Now()
				call()
				r.wall = append(r.wall, time.Since(start))
				r.cpu = append(r.cpu, threadCPU(b)-cpu)
			}
			slices.Sort(r.wall)
			slices.Sort(r.cpu)
			rows[tc] = r
			for _, m := range []struct {
				d    []time.Duration
				unit string
			}{{r.wall, ""}, {r.cpu, "cpu-"}} {
				b.ReportMetric(float64(quantile(m.d, 0.5).Microseconds()), m.unit+"p50-µs")
				b.ReportMetric(float64(quantile(m.d, 0.99).Microseconds()), m.unit+"p99-µs")
				b.ReportMetric(float64(quantile(m.d, 0.999).Microseconds()), m.unit+"p99.9-µs")
				b.ReportMetric(float64(m.d[len(m.d)-1].Microseconds()), m.unit+"max-µs")
			}
		})
	}
	b.Run("table", func(b *testing.B) {
		for b.Loop() {
		}
		b.ReportMetric(0, "ns/op") // nothing is timed
		var out strings.Builder
		w := tabwriter.NewWriter(&out, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(w, "build\ttime\tcalls\tmedian\tp99\tp99.9\tmax\tp99/median\tp99.9/median\t")
		for _, tc := range plugintest.Toolchains {
			r := rows[tc]
			for _, m := range []struct {
				d    []time.Duration
				what string
			}{{r.wall, "wall"}, {r.cpu, "thread CPU"}} {
				d := m.d
				if len(d) == 0 {
					continue
				}
				med := quantile(d, 0.5)
				fmt.Fprintf(w, "%s\t%s\t%d\t%v\t%v\t%v\t%v\t%.1f\t%.1f\t\n", tc, m.what, len(d), med.Round(time.Microsecond), quantile(d, 0.99).Round(time.Microsecond),
					quantile(d, 0.999).Round(time.Microsecond), d[len(d)-1].Round(time.Microsecond),
					float64(quantile(d, 0.99))/float64(med), float64(quantile(d, 0.999))/float64(med))
			}
		}
		_ = w.Flush()
		b.Log("sequential tools/call hash through the sandbox:\n" + strings.TrimSuffix(out.String(), "\n"))
	})
}

// threadCPU returns the CPU time the calling thread has used, from
// CLOCK_THREAD_CPUTIME_ID (getrusage's is only as fine as the scheduler's
// tick, 4 ms).
func threadCPU(b testing.TB) time.Duration {
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3 /* CLOCK_THREAD_CPUTIME_ID */, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		b.Fatal(errno)
	}
	return time.Duration(ts.Nano())
}

// quantile returns the q quantile of sorted durations.
func quantile(sorted []time.Duration, q float64) time.Duration {
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}
