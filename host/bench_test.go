package host

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/internal/testrig/rpctest"
	"github.com/mcphost/mcphost/tracing"
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

// stdioToolCalls serves benchToolPlugin over the stdio transport on pipes
// with opts, initialized at 2025-11-25, and returns a function that sends
// one tools/call with a fresh id and reads its response.
func stdioToolCalls(tb testing.TB, opts Options) func() []byte {
	srv := NewServer(opts, BuildCatalog(context.Background(), []*Plugin{benchToolPlugin()}, nil))
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
	call := stdioToolCalls(b, Options{})
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
	call := stdioToolCalls(t, Options{})
	call() // warm up: schemas compiled, buffers grown
	if n := testing.AllocsPerRun(200, func() { call() }); n > maxStdioToolCallAllocs {
		t.Errorf("one stdio tools/call allocates %.0f times; the ceiling is %d", n, maxStdioToolCallAllocs)
	}
}

// maxTracedToolCallAllocs is how many more times a stdio tools/call may
// allocate when its request span and plugin-call span are sampled and
// exported than when nothing is traced: 20 before the spans' attributes
// were given in reused slices and the batcher kept its buffers, 12 after,
// 8 since package tracing starts the host's spans without
// OpenTelemetry's options (spanStarter).
const maxTracedToolCallAllocs = 10

// Package tracing's tracer starts the host's spans as a spanStarter: the
// host's spans then cost none of OpenTelemetry's options.
func TestTracingsTracerIsASpanStarter(t *testing.T) {
	tr, err := tracing.New(t.Context(), config.TelemetryConfig{Traces: config.TracesOTLP, OTLPEndpoint: "http://127.0.0.1:1"}, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tr.Shutdown(t.Context()) }()
	if _, ok := tr.Tracer().(spanStarter); !ok {
		t.Errorf("%T is not a spanStarter", tr.Tracer())
	}
}

func TestTracedToolCallAllocationCeiling(t *testing.T) {
	if testing.Short() || raceDetector {
		t.Skip("measures allocations; make test runs it without -race")
	}
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) }))
	defer collector.Close()
	tr, err := tracing.New(context.Background(), config.TelemetryConfig{Traces: config.TracesOTLP, OTLPEndpoint: collector.URL, TraceSampleRatio: 1}, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tr.Shutdown(context.Background()) }()
	untraced, traced := stdioToolCalls(t, Options{}), stdioToolCalls(t, Options{Tracer: tr.Tracer()})
	for range 600 { // warm up: schemas compiled, buffers grown, a batch exported
		untraced()
		traced()
	}
	base := testing.AllocsPerRun(500, func() { untraced() })
	if n := testing.AllocsPerRun(500, func() { traced() }); n-base > maxTracedToolCallAllocs {
		t.Errorf("a traced stdio tools/call allocates %.0f times, %.0f more than one not traced; the ceiling is %d more", n, n-base, maxTracedToolCallAllocs)
	}
}
