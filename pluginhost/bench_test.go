package pluginhost

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testrig/cputime"
	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/mcphost/mcphost/internal/testrig/rpctest"
	"github.com/mcphost/mcphost/sandbox"
)

// BenchmarkStdioToolCallRealPlugin measures one tools/call over the stdio
// transport, in process, served by a real plugin: the tools example's hash,
// loaded as mcphost serve loads it (Loader, then the engine's catalog), so
// that a profile shows the engine, the plugin chain and the sandbox
// together, without the client and the pipes of a separate process
// (internal/testrig/e2e's BenchmarkStdioToolCall):
//
//	go test ./pluginhost -run '^$' -bench StdioToolCallRealPlugin -cpuprofile cpu.out
func BenchmarkStdioToolCallRealPlugin(b *testing.B) {
	path := plugintest.Build(b, "plugins/examples/tools")
	engine, err := sandbox.NewEngine(sandbox.EngineOptions{CacheDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = engine.Close() })
	cfgPath := filepath.Join(b.TempDir(), "mcphost.toml")
	if err := os.WriteFile(cfgPath, []byte("[plugins.tools]\nhost_functions = [\"notify_progress\"]\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		b.Fatal(err)
	}
	srv := host.NewServer(host.Options{}, nil)
	p, err := (&Loader{Engine: engine, Server: srv}).LoadFile(b.Context(), path, cfg)
	if err != nil {
		b.Fatal(err)
	}
	srv.ReplacePlugins(b.Context(), []*host.Plugin{p})
	send := rpctest.StdioSession(b, func(ctx context.Context, in io.Reader, out io.Writer) error {
		return srv.ServeStdio(ctx, in, out, time.Second)
	})
	const call = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"hash","arguments":{"text":"abc"}}}`
	want := []byte("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
	if resp := send(call); !bytes.Contains(resp, want) || !json.Valid(resp) {
		b.Fatalf("unexpected response %s", resp)
	}
	b.ReportAllocs()
	cpu := cputime.Start(b)
	for b.Loop() {
		if resp := send(call); !bytes.Contains(resp, want) {
			b.Fatalf("unexpected response %s", resp)
		}
	}
	cputime.ReportPerOp(b, cpu)
}
