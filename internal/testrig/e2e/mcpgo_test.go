package e2e

import (
	"context"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// elicitAlice answers every elicitation with a name and a color.
type elicitAlice struct{ asked []string }

func (e *elicitAlice) Elicit(_ context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	e.asked = append(e.asked, r.Params.Message)
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{
		Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"name": "Alice", "color": "blue"},
	}}, nil
}

// mark3labs/mcp-go v1.2.1 negotiates 2026-07-28 with mcphost over stdio and
// HTTP when unpinned, and 2025-11-25 when pinned to it; either way a tool
// call that asks two questions in a row completes through its elicitation
// handler (input_required rounds in 2026-07-28, requests to the client in
// 2025-11-25).
func TestMCPGoClientInterop(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a plugin and starts servers")
	}
	f := mrtrFixture(t, "mcp-go-interop-request-state-key-0123456789\n")
	url := f.serveHTTP(t)
	args := f.command().Args[1:]
	overStdio := func() transport.Interface { return transport.NewStdio(mcphostBin, nil, args...) }
	overHTTP := func() transport.Interface {
		tr, err := transport.NewStreamableHTTP(url)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	for _, tc := range []struct {
		name, pin, want string
		transport       func() transport.Interface
	}{
		{"stdio", "", "2026-07-28", overStdio},
		{"HTTP", "", "2026-07-28", overHTTP},
		{"stdio pinned", "2025-11-25", "2025-11-25", overStdio},
		{"HTTP pinned", "2025-11-25", "2025-11-25", overHTTP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			handler := &elicitAlice{}
			opts := []mcpgo.ClientOption{mcpgo.WithElicitationHandler(handler)}
			if tc.pin != "" {
				opts = append(opts, mcpgo.WithProtocolVersion(tc.pin))
			}
			c := mcpgo.NewClient(tc.transport(), opts...)
			defer c.Close()
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			init := mcp.InitializeRequest{}
			init.Params.ClientInfo = mcp.Implementation{Name: "mcp-go-interop", Version: "1.0.0"}
			if _, err := c.Initialize(ctx, init); err != nil {
				t.Fatalf("initialize: %v", err)
			}
			if got := c.ProtocolVersion(); got != tc.want {
				t.Errorf("negotiated %q, want %q", got, tc.want)
			}
			tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
			if err != nil || len(tools.Tools) == 0 {
				t.Fatalf("tools/list: %v, %v", tools, err)
			}
			call := mcp.CallToolRequest{}
			call.Params.Name = "test_input_required_result_multi_round"
			res, err := c.CallTool(ctx, call)
			if err != nil {
				t.Fatalf("tools/call: %v", err)
			}
			text, _ := mcp.AsTextContent(res.Content[0])
			if text == nil || text.Text != "Alice likes blue" || len(handler.asked) != 2 {
				t.Errorf("tools/call answered %+v after asking %q; want Alice likes blue after two questions", res.Content, handler.asked)
			}
		})
	}
}
