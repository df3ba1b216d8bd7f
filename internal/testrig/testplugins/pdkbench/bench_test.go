//go:build !wasm

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/mcphost/mcphost/sandbox"
)

// The benchmarks call the plugin in this directory through the sandbox with
// large arguments and results:
//
//	go test ./internal/testrig/testplugins/pdkbench -bench .

func BenchmarkCallTool(b *testing.B) {
	wasm, err := os.ReadFile(plugintest.Build(b, "internal/testrig/testplugins/pdkbench"))
	if err != nil {
		b.Fatal(err)
	}
	engine, err := sandbox.NewEngine(sandbox.EngineOptions{CacheDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer engine.Close()
	ctx := context.Background()
	p, err := engine.Load(ctx, "bench", wasm, sandbox.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close(ctx)
	for _, size := range []int{64 << 10, 2 << 20} {
		// A text with a line break every 64 bytes.
		text := strings.Repeat(strings.Repeat("x", 63)+"\n", size/64)
		for _, c := range []struct {
			name, tool string
			args       any
		}{
			{"input", "size", map[string]any{"text": text}},
			{"output", "text", map[string]int{"bytes": size}},
			// The output holds the text twice, as text and as structured
			// content: half the size stays within the sandbox's limit.
			{"structured", "document", map[string]int{"bytes": size / 2}},
		} {
			in, err := json.Marshal(map[string]any{
				"request": map[string]any{"name": c.tool, "arguments": c.args},
				"context": map[string]any{"id": 1},
			})
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s-%dKiB", c.name, size>>10), func(b *testing.B) {
				for b.Loop() {
					out, err := p.Call(ctx, "call_tool", in)
					if err != nil {
						b.Fatal(err)
					}
					if strings.Contains(string(out), `"isError"`) {
						b.Fatalf("tool error: %.200s", out)
					}
				}
			})
		}
	}
}
