package e2e

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The official Go SDK client (v1.8.0), unpinned, negotiates 2026-07-28
// with the binary over stdio and over Streamable HTTP, and uses every
// feature of the examples with it: lists, tool calls, prompts, resources
// read directly and through a template, completions.
func TestGoSDKClientSpeaks20260728WithTheBinary(t *testing.T) {
	f := newFixture(t, "", examples...)
	t.Run("stdio", func(t *testing.T) {
		checkExamples(t, f.connect(t, "", nil), "2026-07-28")
	})
	t.Run("HTTP", func(t *testing.T) {
		client := mcp.NewClient(&mcp.Implementation{Name: "e2e-modern", Version: "1"}, nil)
		cs, err := client.Connect(ctxT(t), &mcp.StreamableClientTransport{Endpoint: f.serveHTTP(t)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		checkExamples(t, cs, "2026-07-28")
	})
}
