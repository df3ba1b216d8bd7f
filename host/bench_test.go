package host

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/rpctest"
)

// benchToolPlugin is a plugin with one tool that has an input and an output
// schema, and answers with text and structured content, as real tools do.
func benchToolPlugin() *Plugin {
	tool := abi.Tool{
		Name:         "echo",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"n":{"type":"integer"}},"required":["text"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"length":{"type":"integer"}},"required":["length"]}`),
	}
	out, _ := json.Marshal(abi.CallToolResult{
		Content:           []abi.Content{{Type: abi.ContentText, Text: `{"length":42}`}},
		StructuredContent: map[string]any{"length": 42},
	})
	return NewPlugin("bench", "", fakeRuntime{
		abi.ExportListTools: returns(abi.ListToolsResult{Tools: []abi.Tool{tool}}),
		abi.ExportCallTool:  func(context.Context, []byte) ([]byte, error) { return out, nil },
	})
}

// stdioToolCalls serves benchToolPlugin over the stdio transport on pipes,
// initialized at 2025-11-25, and returns a function that sends one
// tools/call with a fresh id and reads its response.
func stdioToolCalls(tb testing.TB) func() []byte {
	srv := NewServer(Options{}, BuildCatalog(context.Background(), []*Plugin{benchToolPlugin()}, nil))
	send := rpctest.StdioSession(tb, func(ctx context.Context, in io.Reader, out io.Writer) error {
		return srv.ServeStdio(ctx, in, out, time.Second)
	})
	const call = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"the quick brown fox jumps over the lazy dog","n":7},"_meta":{"progressToken":"p"}}}`
	return func() []byte { return send(call) }
}

// BenchmarkStdioToolCall measures the engine's own cost of one tools/call
// over the stdio transport: a request line in, its response line out, with
// the plugin's work reduced to returning a prepared result. Its allocations
// and ns/op are what decoding each request once is about.
func BenchmarkStdioToolCall(b *testing.B) {
	call := stdioToolCalls(b)
	if resp := call(); !bytes.HasPrefix(resp, []byte(`{"jsonrpc":"2.0","id":1,"result"`)) || !json.Valid(resp) {
		b.Fatalf("unexpected response %s", resp)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		call()
	}
}

// maxStdioToolCallAllocs is the allocation ceiling of one stdio tools/call
// (BenchmarkStdioToolCall): 159 before each request was decoded once, 135
// after. A change that decodes or encodes the request or its result again
// goes over it.
const maxStdioToolCallAllocs = 145

func TestStdioToolCallAllocationCeiling(t *testing.T) {
	if testing.Short() || raceDetector {
		t.Skip("measures allocations; make test runs it without -race")
	}
	call := stdioToolCalls(t)
	call() // warm up: schemas compiled, buffers grown
	if n := testing.AllocsPerRun(200, func() { call() }); n > maxStdioToolCallAllocs {
		t.Errorf("one stdio tools/call allocates %.0f times; the ceiling is %d", n, maxStdioToolCallAllocs)
	}
}
