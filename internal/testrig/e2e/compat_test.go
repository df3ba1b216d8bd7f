package e2e

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// These tests check that plugins built with another Extism PDK, the
// official github.com/extism/go-pdk, load unchanged: a hyper-mcp "v2" style
// plugin (internal/testrig/testplugins/hypermcp) and a v1 / mcp.run servlet
// (internal/testrig/testplugins/servlet), neither with an mcphost manifest.

var compatPlugins = []string{"internal/testrig/testplugins/hypermcp", "internal/testrig/testplugins/servlet"}

const grantHypermcpLogging = "[plugins.hypermcp]\nhost_functions = [\"notify_logging_message\"]\n"

// logCollector returns client options that put every notifications/message
// on the returned channel.
func logCollector() (*mcp.ClientOptions, chan *mcp.LoggingMessageParams) {
	logs := make(chan *mcp.LoggingMessageParams, 64)
	return &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) { logs <- req.Params },
	}, logs
}

func TestCompatForeignPDKPlugins(t *testing.T) {
	f := newFixture(t, grantHypermcpLogging, compatPlugins...)
	for _, version := range []string{"2025-11-25", "2025-03-26"} {
		t.Run(version, func(t *testing.T) {
			ctx := ctxT(t)
			opts, logs := logCollector()
			cs := f.connect(t, version, opts)
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Fatalf("negotiated %s, want %s", got, version)
			}
			caps := cs.InitializeResult().Capabilities
			if caps.Tools == nil || caps.Prompts == nil || caps.Resources == nil || caps.Completions == nil {
				t.Fatalf("capabilities %+v lack a feature the hyper-mcp plugin provides", caps)
			}

			t.Run("tools of both plugins are listed", func(t *testing.T) {
				tools := map[string]*mcp.Tool{}
				for tool, err := range cs.Tools(ctx, nil) {
					if err != nil {
						t.Fatal(err)
					}
					tools[tool.Name] = tool
				}
				for _, name := range []string{"reverse", "request_context", "add", "shout"} {
					tool, ok := tools[name]
					if !ok {
						t.Errorf("tools %v lack %s", slices.Sorted(maps.Keys(tools)), name)
						continue
					}
					schema, _ := tool.InputSchema.(map[string]any)
					if tool.Description == "" || schema["type"] != "object" {
						t.Errorf("%s: description %q, inputSchema %v", name, tool.Description, tool.InputSchema)
					}
				}
				if len(tools) != 4 {
					t.Errorf("tools %v: want exactly reverse, request_context, add and shout", slices.Sorted(maps.Keys(tools)))
				}
				if req, _ := tools["reverse"].InputSchema.(map[string]any)["required"].([]any); !slices.Contains(req, any("text")) {
					t.Errorf("reverse inputSchema lost required: %v", tools["reverse"].InputSchema)
				}
			})

			t.Run("hyper-mcp tool and its log message", func(t *testing.T) {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "reverse", Arguments: map[string]any{"text": "héllo, wörld"}})
				if err != nil {
					t.Fatal(err)
				}
				if res.IsError || text(t, res.Content) != "dlröw ,olléh" {
					t.Fatalf("reverse: isError=%v %q", res.IsError, text(t, res.Content))
				}
				select {
				case msg := <-logs:
					data, _ := msg.Data.(map[string]any)
					if msg.Level != "info" || msg.Logger != "hypermcp" || data["event"] != "reversed" ||
						data["text"] != "héllo, wörld" || data["runes"] != float64(12) {
						t.Errorf("log message: level %q logger %q data %v", msg.Level, msg.Logger, msg.Data)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("notify_logging_message did not reach the client")
				}
			})

			t.Run("hyper-mcp request context", func(t *testing.T) {
				trace := "compat-" + version
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Meta: mcp.Meta{"trace": trace}, Name: "request_context", Arguments: map[string]any{}})
				if err != nil || res.IsError {
					t.Fatalf("request_context: %v %+v", err, res)
				}
				var got struct {
					ID   any            `json:"id"`
					Meta map[string]any `json:"_meta"`
				}
				if err := json.Unmarshal([]byte(text(t, res.Content)), &got); err != nil {
					t.Fatalf("request_context answered %q: %v", text(t, res.Content), err)
				}
				if got.ID == nil || got.Meta["trace"] != trace {
					t.Errorf("context the plugin saw: id %v, _meta %v; want an id and trace %q", got.ID, got.Meta, trace)
				}
			})

			t.Run("hyper-mcp errors", func(t *testing.T) {
				// The plugin sets a plain error and returns -1: the model
				// reads the message in an isError result.
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "reverse", Arguments: map[string]any{"text": ""}})
				if err != nil {
					t.Fatalf("plugin error became a protocol error: %v", err)
				}
				if !res.IsError || !strings.Contains(text(t, res.Content), "the text is empty, nothing to reverse") {
					t.Errorf("plugin error: isError=%v %q", res.IsError, text(t, res.Content))
				}
				// The host checks arguments against the plugin's inputSchema.
				res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "reverse", Arguments: map[string]any{}})
				if err != nil {
					t.Fatal(err)
				}
				if !res.IsError || !strings.Contains(text(t, res.Content), "text") {
					t.Errorf("missing required argument: isError=%v %q", res.IsError, text(t, res.Content))
				}
				// The plugin still works afterwards.
				res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "reverse", Arguments: map[string]any{"text": "abc"}})
				if err != nil || res.IsError || text(t, res.Content) != "cba" {
					t.Fatalf("reverse after errors: %v %+v", err, res)
				}
				select { // its log message
				case <-logs:
				case <-time.After(10 * time.Second):
					t.Fatal("no log message from reverse(abc)")
				}
			})

			t.Run("hyper-mcp prompt and completion", func(t *testing.T) {
				var prompts []*mcp.Prompt
				for p, err := range cs.Prompts(ctx, nil) {
					if err != nil {
						t.Fatal(err)
					}
					prompts = append(prompts, p)
				}
				if len(prompts) != 1 || prompts[0].Name != "greeting" || len(prompts[0].Arguments) != 2 ||
					prompts[0].Arguments[0].Name != "name" || !prompts[0].Arguments[0].Required {
					t.Fatalf("prompts: %+v", prompts)
				}
				got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greeting", Arguments: map[string]string{"name": "Ada", "language": "esperanto"}})
				if err != nil {
					t.Fatal(err)
				}
				if len(got.Messages) != 1 || got.Messages[0].Role != "user" || got.Description != "A greeting in esperanto" {
					t.Fatalf("greeting: %+v", got)
				}
				if tc, ok := got.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "Write a short greeting to Ada in esperanto." {
					t.Fatalf("greeting message: %#v", got.Messages[0].Content)
				}
				if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greeting", Arguments: map[string]string{"language": "french"}}); err == nil {
					t.Error("greeting without its required name argument succeeded")
				}

				for value, want := range map[string][]string{"e": {"english", "esperanto"}, "Fr": {"french"}, "x": {}} {
					comp, err := cs.Complete(ctx, &mcp.CompleteParams{
						Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "greeting"},
						Argument: mcp.CompleteParamsArgument{Name: "language", Value: value},
					})
					if err != nil {
						t.Fatalf("completing %q: %v", value, err)
					}
					if !slices.Equal(comp.Completion.Values, want) {
						t.Errorf("completing language %q: %v, want %v", value, comp.Completion.Values, want)
					}
				}
			})

			t.Run("hyper-mcp resource", func(t *testing.T) {
				var resources []*mcp.Resource
				for r, err := range cs.Resources(ctx, nil) {
					if err != nil {
						t.Fatal(err)
					}
					resources = append(resources, r)
				}
				if len(resources) != 1 || resources[0].URI != "memo://hello" || resources[0].MIMEType != "text/plain" {
					t.Fatalf("resources: %+v", resources)
				}
				read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memo://hello"})
				if err != nil {
					t.Fatal(err)
				}
				const memo = "Hello from a plugin built with the official Extism Go PDK."
				if len(read.Contents) != 1 || read.Contents[0].URI != "memo://hello" || read.Contents[0].Text != memo {
					t.Fatalf("reading memo://hello: %+v", read.Contents)
				}
			})

			t.Run("servlet tools", func(t *testing.T) {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 2, "b": 3.5}})
				if err != nil || res.IsError || text(t, res.Content) != "5.5" {
					t.Fatalf("add(2, 3.5): %v %+v", err, res)
				}
				res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "shout", Arguments: map[string]any{"text": "hello"}})
				if err != nil || res.IsError || text(t, res.Content) != "HELLO!" {
					t.Fatalf("shout(hello): %v %+v", err, res)
				}
				// An isError result the servlet returns itself.
				res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "shout", Arguments: map[string]any{"text": ""}})
				if err != nil || !res.IsError || text(t, res.Content) != "shout: nothing to shout" {
					t.Fatalf("shout(empty): %v %+v", err, res)
				}
				// The host checks arguments against the schema describe gave.
				res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": "two", "b": 3}})
				if err != nil || !res.IsError {
					t.Fatalf("add with a string: %v %+v", err, res)
				}
			})

			// No other log message arrived on the way.
			select {
			case msg := <-logs:
				t.Errorf("unexpected log message %+v", msg)
			default:
			}
		})
	}
}

// TestCompatHostFunctionNotGranted: a hyper-mcp plugin that calls
// notify_logging_message without the grant still works; nothing reaches the
// client.
func TestCompatHostFunctionNotGranted(t *testing.T) {
	f := newFixture(t, "", compatPlugins...)
	opts, logs := logCollector()
	cs := f.connect(t, "2025-11-25", opts)
	ctx := ctxT(t)
	for range 2 {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "reverse", Arguments: map[string]any{"text": "abc"}})
		if err != nil || res.IsError || text(t, res.Content) != "cba" {
			t.Fatalf("reverse without the logging grant: %v %+v", err, res)
		}
	}
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// The server writes a notification before the response it belongs to;
	// give the client's dispatch a moment to deliver one if it was sent.
	time.Sleep(300 * time.Millisecond) // kept: a window in which no notification may arrive
	select {
	case msg := <-logs:
		t.Fatalf("log message %+v reached the client without the grant", msg)
	default:
	}
}
