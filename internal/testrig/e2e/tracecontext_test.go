package e2e

import (
	"cmp"
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The OpenTelemetry trace context of a request's _meta (traceparent,
// tracestate, baggage: the keys 2026-07-28 reserves for it) reaches the
// plugin that serves a tools/call, prompts/get or resources/read, value
// for value, in a legacy session and in a 2026-07-28 request. The plugin's
// context._meta is the request's _meta (abi/ABI.md), so a key of the
// client's own arrives too, and nothing is added to it.
func TestTraceContextReachesPlugins(t *testing.T) {
	f := newFixture(t, "", "internal/testrig/testplugins/metaecho")
	sent := map[string]any{
		"traceparent":      "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",
		"tracestate":       "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7",
		"baggage":          "userId=alice,serverNode=DF%2028",
		"example.com/note": "the client's own",
	}
	meta := func() mcp.Meta { return maps.Clone(sent) } // the SDK adds its own keys to the map it is given
	for _, version := range []string{"", "2025-11-25"} {
		t.Run(cmp.Or(version, "unpinned"), func(t *testing.T) {
			cs := f.connect(t, version, nil)
			ctx := ctxT(t)
			var echoes []string
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Meta: meta(), Name: "meta", Arguments: map[string]any{}})
			if err != nil || res.IsError {
				t.Fatalf("tools/call: %v %+v", err, res)
			}
			echoes = append(echoes, text(t, res.Content))
			prompt, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Meta: meta(), Name: "meta"})
			if err != nil {
				t.Fatalf("prompts/get: %v", err)
			}
			echoes = append(echoes, prompt.Messages[0].Content.(*mcp.TextContent).Text)
			read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{Meta: meta(), URI: "meta://x"})
			if err != nil {
				t.Fatalf("resources/read: %v", err)
			}
			echoes = append(echoes, read.Contents[0].Text)
			for i, echo := range echoes {
				var got map[string]any
				if err := json.Unmarshal([]byte(echo), &got); err != nil {
					t.Fatalf("echo %d: %q: %v", i, echo, err)
				}
				for key, want := range sent {
					if got[key] != want {
						t.Errorf("%s: the plugin got _meta[%q] = %v, want %q", []string{"tools/call", "prompts/get", "resources/read"}[i], key, got[key], want)
					}
				}
				for key := range got {
					if _, ok := sent[key]; !ok && !isProtocolMetaKey(key) {
						t.Errorf("the plugin got _meta[%q] = %v, which the client did not send", key, got[key])
					}
				}
			}
		})
	}
}

// isProtocolMetaKey reports whether a _meta key is one the SDK client adds
// by itself: the per-request fields of 2026-07-28 or a progress token.
func isProtocolMetaKey(key string) bool {
	return key == "progressToken" || strings.HasPrefix(key, "io.modelcontextprotocol/")
}
