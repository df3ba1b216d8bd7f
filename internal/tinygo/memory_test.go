package tinygo_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/plugintest"
)

// flatCalls is how many calls TestLinearMemoryStaysFlat makes.
const flatCalls = 100_000

// A plugin's linear memory is flat when, after warmUp calls (the first
// half), it no longer grows at all, and when it never grows more than
// maxGrowth past its size after the first call: a garbage collector needs
// some room (standard Go takes one more 4 MiB heap arena, once, and a last
// 64 KiB page when its heap settles, which takes the more calls the less
// garbage a call makes: after 10,000 calls with 3 KB a call, after 15,000
// to 46,000 with 2 KB), but neither a heap that grows with the calls (a
// leak) nor one the collector lets balloon (the TinyGo asyncify build went
// from 1.5 to 48 MiB in 100 calls, then stalled for 0.3 to 1 s every 70
// calls) is.
const (
	warmUp    = flatCalls / 2
	maxGrowth = 8 << 20
	// settlePage is the last page standard Go may take when its heap
	// settles, after the warm-up too: when it comes depends on the
	// collector's timers as well as the garbage (a CI run on a loaded
	// machine saw it after 81,000 calls). A leak takes more over the
	// second half's 50,000 calls.
	settlePage = 64 << 10
)

// hashInput is a tools/call of the tools example's hash tool.
func hashInput(t testing.TB, text string) []byte {
	b, err := json.Marshal(plugintest.Input(abi.CallToolParams{Name: "hash", Arguments: json.RawMessage(fmt.Sprintf(`{"text":%q}`, text))}, nil))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLinearMemoryStaysFlat calls the tools example's hash tool 100,000
// times, built with each toolchain, and checks that the plugin's linear
// memory stays within maxGrowth of its size after the first call.
func TestLinearMemoryStaysFlat(t *testing.T) {
	if testing.Short() || plugintest.RaceEnabled {
		t.Skip("makes 100,000 calls per build; make test runs it without -race")
	}
	for _, tc := range plugintest.Toolchains {
		t.Run(string(tc), func(t *testing.T) {
			t.Parallel()
			if tc != plugintest.Go {
				plugintest.RequireTinyGo(t)
			}
			p := plugintest.LoadMetered(t, plugintest.BuildWith(t, "plugins/examples/tools", tc), extism.Manifest{}, nil)
			call := func(i int) {
				rc, out, err := p.Extism.Call(abi.ExportCallTool, hashInput(t, fmt.Sprint(i)))
				if rc != 0 || err != nil {
					t.Fatalf("call %d: rc %d, %s, %v", i, rc, out, err)
				}
			}
			call(0)
			first := p.LinearMemory()
			start := time.Now()
			var warm uint64
			for i := 1; i <= flatCalls; i++ {
				call(i)
				if i%1000 != 0 {
					continue
				}
				m := p.LinearMemory()
				if m > first+maxGrowth {
					t.Fatalf("linear memory grew from %d KiB after the first call to %d KiB after %d calls (at most %d KiB more allowed)", first>>10, m>>10, i, maxGrowth>>10)
				}
				if i == warmUp {
					warm = m
				} else if i > warmUp && m > warm+settlePage {
					t.Fatalf("linear memory grew from %d KiB after %d calls to %d KiB after %d", warm>>10, warmUp, m>>10, i)
				}
			}
			t.Logf("%d calls in %v: linear memory %d KiB after the first, %d KiB after %d and after %d", flatCalls, time.Since(start).Round(time.Millisecond), first>>10, warm>>10, warmUp, flatCalls)
		})
	}
}
