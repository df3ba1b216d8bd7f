package tinygo_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	extism "github.com/extism/go-sdk"
	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/plugintest"
)

// TestGoroutines runs tools that block on goroutines (channels, a mutex, a
// WaitGroup, time.Sleep) in a plugin built with standard Go and with
// TinyGo's asyncify scheduler, whose exports pdk/go runs on a worker
// goroutine: each call waits for its goroutines, a goroutine started by
// one call goes on running during the next ones, and what a parked
// goroutine's stack alone references survives the collections meanwhile. (Each goroutine costs a
// TinyGo plugin a 256 KiB stack that its collector may keep alive: see
// pdk/go/README.md.)
func TestGoroutines(t *testing.T) {
	if testing.Short() || plugintest.RaceEnabled {
		t.Skip("builds WebAssembly plugins, and wazero's interpreter (under -race) runs TinyGo's asyncify code too slowly; make test runs it without -race")
	}
	for _, tc := range []plugintest.Toolchain{plugintest.Go, plugintest.TinyGo} {
		t.Run(string(tc), func(t *testing.T) {
			if tc != plugintest.Go {
				plugintest.RequireTinyGo(t)
			}
			p := plugintest.Load(t, plugintest.BuildWith(t, "internal/testrig/testplugins/goroutines", tc), extism.Manifest{}, nil)
			var sums struct{ Squares, Count int }
			for range 20 {
				structured(t, p.CallTool("fanout", `{"n":10}`, nil), &sums)
				if sums.Squares != 285 || sums.Count != 10 {
					t.Fatalf("fanout(10) = %+v, want squares 285, count 10", sums)
				}
			}
			// A parked goroutine's stack holds the only references to
			// 64 blocks; collections run while it is parked.
			p.CallTool("keep", "", nil)
			for range 5 {
				var c struct{ Collections int }
				var kept struct{ Blocks int }
				structured(t, p.CallTool("churn", "", nil), &c)
				structured(t, p.CallTool("intact", "", nil), &kept)
				if kept.Blocks != 64 || c.Collections == 0 {
					t.Fatalf("after %d collections, %d of the 64 blocks a parked goroutine keeps hold their pattern", c.Collections, kept.Blocks)
				}
			}
			p.CallTool("start_ticker", "", nil)
			var before, after struct{ Ticks int }
			structured(t, p.CallTool("ticks", `{"ms":50}`, nil), &before)
			structured(t, p.CallTool("ticks", `{"ms":50}`, nil), &after)
			if before.Ticks < 1 || after.Ticks <= before.Ticks {
				t.Errorf("the ticker goroutine ticked %d times during a call's 50 ms, then %d during the next: want it running during both", before.Ticks, after.Ticks-before.Ticks)
			}
		})
	}
}

// TestNoSchedulerRefusesGoroutines checks what pdk/go/README.md says of
// -scheduler=none: a plugin that starts goroutines does not build.
func TestNoSchedulerRefusesGoroutines(t *testing.T) {
	if testing.Short() {
		t.Skip("builds WebAssembly plugins")
	}
	plugintest.RequireTinyGo(t)
	root, err := plugintest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	err = plugintest.BuildToWith(root, "internal/testrig/testplugins/goroutines", filepath.Join(t.TempDir(), "g.wasm"), plugintest.TinyGoNone)
	if err == nil || !strings.Contains(err.Error(), "goroutine") {
		t.Fatalf("building a plugin with go statements with -scheduler=none: %v, want an error about goroutines", err)
	}
}

// structured decodes a tool result's structured content into v.
func structured(t *testing.T, r abi.CallToolResult, v any) {
	t.Helper()
	if r.IsError {
		t.Fatalf("tool error: %+v", r.Content)
	}
	b, err := json.Marshal(r.StructuredContent)
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		t.Fatal(err)
	}
}
