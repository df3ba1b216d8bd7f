package host

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/poll"
)

// inputs records the input of every export call, by export.
type inputs struct {
	mu  sync.Mutex
	got map[string][]string
}

func (r *inputs) record(export string, in []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.got == nil {
		r.got = map[string][]string{}
	}
	r.got[export] = append(r.got[export], string(in))
}

// last returns the input of the latest call of export.
func (r *inputs) last(t *testing.T, export string) string {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.got[export]) == 0 {
		t.Fatalf("%s was never called", export)
	}
	return r.got[export][len(r.got[export])-1]
}

// count returns how many times export was called.
func (r *inputs) count(export string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got[export])
}

// wantJSON fails unless got and want are the same JSON document (key order
// aside).
func wantJSON(t *testing.T, what, got, want string) {
	t.Helper()
	if !sameJSON(got, want) {
		t.Errorf("%s: the plugin received\n  %s\nwant\n  %s", what, got, want)
	}
}

// recording wraps each export of rt so that its inputs are recorded.
func recording(rec *inputs, rt fakeRuntime) fakeRuntime {
	out := fakeRuntime{}
	for name, fn := range rt {
		out[name] = func(ctx context.Context, in []byte) ([]byte, error) {
			rec.record(name, in)
			return fn(ctx, in)
		}
	}
	return out
}

// TestHyperMCPEnvelopesAreWireExact: every export of a hyper-mcp v2 plugin
// gets exactly the envelope hyper-mcp's host sends (src/plugin.rs): the
// request params without their _meta under "request", and a context that
// always has the JSON-RPC id and the request's _meta, for list exports too
// (with the synthetic id ListRequestID, since the host lists plugins
// before any client asks).
func TestHyperMCPEnvelopesAreWireExact(t *testing.T) {
	rec := &inputs{}
	prompt := abi.Prompt{Name: "greet", Arguments: []abi.PromptArgument{{Name: "who"}}}
	plugin := NewPlugin("v2", "", recording(rec, fakeRuntime{
		abi.ExportListTools:   returns(abi.ListToolsResult{Tools: []abi.Tool{{Name: "echo", InputSchema: objectSchema}}}),
		abi.ExportCallTool:    returns(abi.CallToolResult{Content: []abi.Content{{Type: abi.ContentText, Text: "ok"}}}),
		abi.ExportListPrompts: returns(abi.ListPromptsResult{Prompts: []abi.Prompt{prompt}}),
		abi.ExportGetPrompt: returns(abi.GetPromptResult{Messages: []abi.PromptMessage{
			{Role: "user", Content: abi.Content{Type: abi.ContentText, Text: "hi"}}}}),
		abi.ExportListResources:         returns(abi.ListResourcesResult{Resources: []abi.Resource{{URI: "memo://a", Name: "a"}}}),
		abi.ExportListResourceTemplates: returns(abi.ListResourceTemplatesResult{ResourceTemplates: []abi.ResourceTemplate{{URITemplate: "memo://{id}", Name: "memo"}}}),
		abi.ExportReadResource:          returns(abi.ReadResourceResult{Contents: []abi.ResourceContents{{URI: "memo://a", Text: "a"}}}),
		abi.ExportComplete:              returns(abi.CompleteResult{Completion: abi.Completion{Values: []string{"x"}}}),
		abi.ExportOnRootsListChanged:    returns(nil),
	}), WithExactHyperMCPContext())
	h := newHarness(t, plugin)
	initWithCaps(t, h, Version20251125, `{"roots":{"listChanged":true}}`)

	listed := `{"context":{"id":"` + ListRequestID + `","_meta":{}}}`
	for _, export := range []string{abi.ExportListTools, abi.ExportListPrompts, abi.ExportListResources, abi.ExportListResourceTemplates} {
		wantJSON(t, export, rec.last(t, export), listed)
	}

	for _, c := range []struct {
		export, request, want string
	}{{
		export:  abi.ExportCallTool,
		request: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"n":1},"_meta":{"progressToken":"p7","trace":"t"}}}`,
		want:    `{"request":{"name":"echo","arguments":{"n":1}},"context":{"id":7,"_meta":{"progressToken":"p7","trace":"t"}}}`,
	}, {
		export:  abi.ExportCallTool,
		request: `{"jsonrpc":"2.0","id":"s-8","method":"tools/call","params":{"name":"echo","arguments":{"n":2}}}`,
		want:    `{"request":{"name":"echo","arguments":{"n":2}},"context":{"id":"s-8","_meta":{}}}`,
	}, {
		export:  abi.ExportGetPrompt,
		request: `{"jsonrpc":"2.0","id":9,"method":"prompts/get","params":{"name":"greet","arguments":{"who":"Ada"},"_meta":{"k":1}}}`,
		want:    `{"request":{"name":"greet","arguments":{"who":"Ada"}},"context":{"id":9,"_meta":{"k":1}}}`,
	}, {
		export:  abi.ExportReadResource,
		request: `{"jsonrpc":"2.0","id":10,"method":"resources/read","params":{"uri":"memo://a","_meta":{"k":2}}}`,
		want:    `{"request":{"uri":"memo://a"},"context":{"id":10,"_meta":{"k":2}}}`,
	}, {
		export:  abi.ExportComplete,
		request: `{"jsonrpc":"2.0","id":11,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"memo://{id}"},"argument":{"name":"id","value":"x"},"context":{"arguments":{"a":"b"}},"_meta":{"k":3}}}`,
		want:    `{"request":{"ref":{"type":"resource","uri":"memo://{id}"},"argument":{"name":"id","value":"x"},"context":{"arguments":{"a":"b"}}},"context":{"id":11,"_meta":{"k":3}}}`,
	}, {
		export:  abi.ExportComplete,
		request: `{"jsonrpc":"2.0","id":12,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"who","value":"A"}}}`,
		want:    `{"request":{"ref":{"type":"prompt","name":"greet"},"argument":{"name":"who","value":"A"}},"context":{"id":12,"_meta":{}}}`,
	}} {
		h.send(c.request)
		if res := h.out.next(t); res["error"] != nil {
			t.Fatalf("%s: %v", c.request, res)
		}
		wantJSON(t, c.export, rec.last(t, c.export), c.want)
	}

	// A notification: its own _meta, and no id.
	h.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed","params":{"_meta":{"n":1}}}`)
	h.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	poll.Until(t, 5*time.Second, "on_roots_list_changed runs twice", func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return len(rec.got[abi.ExportOnRootsListChanged]) == 2
	})
	rec.mu.Lock()
	roots := append([]string(nil), rec.got[abi.ExportOnRootsListChanged]...)
	rec.mu.Unlock()
	want := map[string]bool{`{"context":{"_meta":{"n":1}}}`: true, `{"context":{"_meta":{}}}`: true}
	for _, in := range roots {
		var v any
		if json.Unmarshal([]byte(in), &v) != nil {
			t.Fatalf("on_roots_list_changed input %q", in)
		}
		canon, _ := json.Marshal(v)
		if !want[string(canon)] {
			t.Errorf("on_roots_list_changed input %s, want one of %v", in, want)
		}
		delete(want, string(canon))
	}
}

// TestServletEnvelopesAreWireExact: a v1 servlet gets what hyper-mcp's
// PluginV1 sends: describe an empty input, call {"params": params}.
func TestServletEnvelopesAreWireExact(t *testing.T) {
	rec := &inputs{}
	plugin := NewPlugin("v1", "", recording(rec, fakeRuntime{
		abi.ExportV1Describe: returns(abi.V1DescribeResult{Tools: []abi.Tool{{Name: "add", InputSchema: objectSchema}}}),
		abi.ExportV1Call:     returns(abi.CallToolResult{Content: []abi.Content{{Type: abi.ContentText, Text: "3"}}}),
	}))
	h := newHarness(t, plugin)
	h.init(t, Version20251125)
	if got := rec.last(t, abi.ExportV1Describe); got != "" {
		t.Errorf("describe received %q, want an empty input", got)
	}
	h.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"n":1},"_meta":{"progressToken":1}}}`)
	if res := h.out.next(t); res["error"] != nil {
		t.Fatal(res)
	}
	wantJSON(t, "call", rec.last(t, abi.ExportV1Call), `{"params":{"name":"add","arguments":{"n":1}}}`)
}
