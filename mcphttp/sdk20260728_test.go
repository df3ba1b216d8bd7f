package mcphttp

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The official Go SDK client (v1.8.0), unpinned, probes with
// server/discover and speaks 2026-07-28 with mcphost over stdio and HTTP:
// it lists and calls tools with no initialize; pinned to 2025-11-25 it
// still initializes a legacy session, over both.
func TestSDKClientNegotiates20260728(t *testing.T) {
	plugin := func() *host.Plugin { return toolsPlugin("a", echoTool) }
	stdio := func(t *testing.T) mcp.Transport {
		srv := host.NewServer(host.Options{Name: "test", Version: "1"}, host.BuildCatalog(context.Background(), []*host.Plugin{plugin()}, nil))
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = srv.ServeStdio(context.Background(), inR, outW, time.Second)
			outW.Close()
		}()
		t.Cleanup(func() { inW.Close(); <-done })
		return &mcp.IOTransport{Reader: outR, Writer: inW}
	}
	for _, tc := range []struct {
		name, pin, want string
		transport       func(t *testing.T) mcp.Transport
	}{
		{"stdio", "", host.Version20260728, stdio},
		{"HTTP", "", host.Version20260728, func(t *testing.T) mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: newHTTPHarness(t, Options{}, plugin()).url + "/mcp"}
		}},
		{"stdio pinned", host.Version20251125, host.Version20251125, stdio},
		{"HTTP pinned", host.Version20251125, host.Version20251125, func(t *testing.T) mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: newHTTPHarness(t, Options{}, plugin()).url + "/mcp"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, tc.transport(t), &mcp.ClientSessionOptions{ProtocolVersion: tc.pin})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != tc.want {
				t.Errorf("negotiated %s, want %s", got, tc.want)
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil || len(tools.Tools) != 1 {
				t.Fatalf("tools/list: %v %+v", err, tools)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"n": 1}})
			if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != `a:echo:{"n":1}` {
				t.Fatalf("tools/call: %v %+v", err, res)
			}
		})
	}
}
