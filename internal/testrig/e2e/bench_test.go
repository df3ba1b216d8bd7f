package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkStdioToolCall measures one tools/call round trip of an example
// tool (hash) over stdio, client to plugin and back:
//
//	go test ./internal/testrig/e2e -run '^$' -bench StdioToolCall
func BenchmarkStdioToolCall(b *testing.B) {
	f := newFixture(b, "", "plugins/examples/tools")
	cs := f.connectB(b)
	ctx := context.Background()
	params := &mcp.CallToolParams{Name: "hash", Arguments: map[string]any{"text": "abc"}}
	b.ResetTimer()
	for b.Loop() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkStartup measures the time from starting `mcphost serve` on the
// three examples to its answer to initialize, with the compilation cache
// off and with a warm cache:
//
//	go test ./internal/testrig/e2e -run '^$' -bench Startup -benchtime 5x
func BenchmarkStartup(b *testing.B) {
	f := newFixture(b, "", examples...)
	for _, mode := range []string{"nocache", "cached"} {
		b.Run(mode, func(b *testing.B) {
			cfg, err := os.ReadFile(f.config)
			if err != nil {
				b.Fatal(err)
			}
			cache := `"off"`
			if mode == "cached" {
				cache = `"` + filepath.Join(b.TempDir(), "cache") + `"`
			}
			text := string(cfg)
			start := strings.Index(text, "cache_dir = ")
			end := start + strings.Index(text[start:], "\n")
			variant := fixture{plugins: f.plugins, config: filepath.Join(b.TempDir(), "mcphost.toml")}
			if err := os.WriteFile(variant.config, []byte(text[:start]+"cache_dir = "+cache+text[end:]), 0o644); err != nil {
				b.Fatal(err)
			}
			if mode == "cached" {
				_ = variant.connectB(b).Close() // warm the cache
			}
			b.ResetTimer()
			for b.Loop() {
				_ = variant.connectB(b).Close()
			}
		})
	}
}

// BenchmarkStartupBesideHostilePlugins measures the time from starting
// `mcphost serve` to the first answer of the tools example's hash tool,
// with the tools example alone and beside the hostile plugins of
// TestStartupIsNotHostageToOnePlugin, which spin or list for their whole
// load budget, all compiled code cached; it reports the ratio of the two:
//
//	go test ./internal/testrig/e2e -run '^$' -bench StartupBesideHostilePlugins -benchtime 5x
func BenchmarkStartupBesideHostilePlugins(b *testing.B) {
	alone := newFixture(b, "", "plugins/examples/tools")
	useDefaultStartupWait(b, alone)
	hostile := startupFixture(b)
	firstAnswer := func(f fixture) time.Duration {
		start := time.Now()
		cs := f.connectB(b)
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "hash", Arguments: map[string]any{"text": "abc"}})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
		took := time.Since(start)
		_ = cs.Close()
		return took
	}
	firstAnswer(alone) // warm the cache
	firstAnswer(hostile)
	var base, beside time.Duration
	for b.Loop() {
		base += firstAnswer(alone)
		beside += firstAnswer(hostile)
	}
	b.ReportMetric(float64(base.Milliseconds())/float64(b.N), "alone-ms/op")
	b.ReportMetric(float64(beside.Milliseconds())/float64(b.N), "beside-hostile-ms/op")
	b.ReportMetric(float64(beside)/float64(base), "ratio")
}

// connectB is connect for benchmarks.
func (f fixture) connectB(b *testing.B) *mcp.ClientSession {
	b.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: f.command()}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	return cs
}
