package host

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

// inProcessServer serves plugin p, whose tool "ask" logs its arguments'
// "log" at info, then passes its arguments to create_message and returns
// the answer (or the error) as text.
func inProcessServer(t *testing.T) *Server {
	t.Helper()
	srv := NewServer(Options{Name: "test", Version: "1"}, nil)
	logFn := serverFn(t, srv, "p", abi.HostNotifyLoggingMessage)
	sample := serverFn(t, srv, "p", abi.HostCreateMessage)
	p := NewPlugin("p", "", fakeRuntime{
		abi.ExportListTools: returns(abi.ListToolsResult{Tools: []abi.Tool{{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)}}}),
		abi.ExportCallTool: func(ctx context.Context, in []byte) ([]byte, error) {
			var input struct {
				Request abi.CallToolParams `json:"request"`
			}
			_ = json.Unmarshal(in, &input)
			var args struct {
				Log string `json:"log"`
			}
			_ = json.Unmarshal(input.Request.Arguments, &args)
			if _, err := logFn(ctx, []byte(`{"level":"info","data":"`+args.Log+`"}`)); err != nil {
				return nil, err
			}
			out, err := sample(ctx, input.Request.Arguments)
			text := string(out)
			if err != nil {
				text = "error: " + err.Error()
			}
			return json.Marshal(abi.CallToolResult{Content: []abi.Content{{Type: "text", Text: text}}})
		},
	})
	srv.SetCatalog(BuildCatalog(context.Background(), []*Plugin{p}, nil))
	return srv
}

// startInProcess initializes c as a client that can sample.
func startInProcess(t *testing.T, c *InProcessClient) {
	t.Helper()
	ctx := context.Background()
	if _, err := c.Request(ctx, "initialize", map[string]any{
		"protocolVersion": Version20251125, "capabilities": map[string]any{"sampling": map[string]any{}},
		"clientInfo": map[string]any{"name": "t", "version": "1"},
	}); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	c.Notify(ctx, "notifications/initialized", nil)
	if _, err := c.Request(ctx, "logging/setLevel", map[string]any{"level": "debug"}); err != nil {
		t.Fatalf("logging/setLevel: %v", err)
	}
}

// askText calls tool ask and returns its text.
func askText(t *testing.T, c *InProcessClient, args map[string]any) string {
	t.Helper()
	raw, err := c.Request(context.Background(), "tools/call", map[string]any{"name": "ask", "arguments": args})
	if err != nil {
		t.Fatalf("tools/call: %v", err)
	}
	var res abi.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Content) != 1 {
		t.Fatalf("tools/call result %s: %v", raw, err)
	}
	return res.Content[0].Text
}

var sampleArgs = map[string]any{"log": "asking", "messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "hi"}}}, "maxTokens": 10}

func TestInProcessClientRoutesServerRequestsAndNotificationsToItsHandlers(t *testing.T) {
	var mu sync.Mutex
	var notes, asked []string
	c := NewInProcessClient(inProcessServer(t), InProcessHandlers{
		Notification: func(method string, params json.RawMessage) {
			mu.Lock()
			defer mu.Unlock()
			notes = append(notes, method+" "+string(params))
		},
		Request: func(_ context.Context, method string, params json.RawMessage) (any, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, method)
			return map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "hello"}, "model": "m"}, nil
		},
	})
	defer c.Close()
	startInProcess(t, c)
	if text := askText(t, c, sampleArgs); !strings.Contains(text, `"hello"`) {
		t.Fatalf("the plugin got %q, want the handler's answer", text)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || asked[0] != "sampling/createMessage" {
		t.Errorf("the request handler got %v, want one sampling/createMessage", asked)
	}
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "notifications/message ") || !strings.Contains(notes[0], `"asking"`) {
		t.Errorf("the notification handler got %q, want the plugin's log message", notes)
	}
}

func TestInProcessClientSendsHandlerErrorsAndRefusesWithoutAHandler(t *testing.T) {
	refusal := &RPCError{Code: CodeMethodNotFound, Message: "no model here"}
	c := NewInProcessClient(inProcessServer(t), InProcessHandlers{
		Request: func(context.Context, string, json.RawMessage) (any, error) { return nil, refusal },
	})
	defer c.Close()
	startInProcess(t, c)
	if text := askText(t, c, sampleArgs); !strings.Contains(text, "no model here (-32601)") {
		t.Errorf("with a refusing handler the plugin got %q, want its error", text)
	}

	bare := NewInProcessClient(inProcessServer(t), InProcessHandlers{})
	defer bare.Close()
	startInProcess(t, bare)
	if text := askText(t, bare, sampleArgs); !strings.Contains(text, "(-32601)") {
		t.Errorf("without a handler the plugin got %q, want method not found", text)
	}
}

func TestInProcessClientReturnsTheServersErrorAsAnRPCError(t *testing.T) {
	c := NewInProcessClient(inProcessServer(t), InProcessHandlers{})
	defer c.Close()
	startInProcess(t, c)
	_, err := c.Request(context.Background(), "tools/call", map[string]any{"name": "nope"})
	var rpcErr *RPCError
	if !errors.As(err, &rpcErr) || rpcErr.Code != CodeInvalidParams {
		t.Fatalf("unknown tool: got %v, want an *RPCError with code %d", err, CodeInvalidParams)
	}
}

func TestInProcessClientRequestEndsWithItsContext(t *testing.T) {
	srv := NewServer(Options{Name: "test", Version: "1"}, BuildCatalog(context.Background(), []*Plugin{NewPlugin("p", "", fakeRuntime{
		abi.ExportListTools: returns(abi.ListToolsResult{Tools: []abi.Tool{{Name: "wait", InputSchema: json.RawMessage(`{"type":"object"}`)}}}),
		abi.ExportCallTool: func(ctx context.Context, _ []byte) ([]byte, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		},
	})}, nil))
	c := NewInProcessClient(srv, InProcessHandlers{})
	defer c.Close()
	startInProcess(t, c)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Request(ctx, "tools/call", map[string]any{"name": "wait"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled request: got %v, want context.Canceled", err)
	}
}
