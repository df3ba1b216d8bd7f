package host

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

// A tool, prompt or resource that declares the client capabilities it
// needs (_meta "mcphost/requires", shaped as ClientCapabilities) is left
// out of the lists of clients that lack them, legacy or modern, and using
// it anyway is -32021 naming what is missing (invalid params for a legacy
// session, which has no such error).
func TestItemsRequiringClientCapabilitiesAreFilteredPerRequest(t *testing.T) {
	ui := abi.Meta{requiresKey: map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/ui": map[string]any{}}}}
	sampling := abi.Meta{requiresKey: map[string]any{"sampling": map[string]any{}}}
	p := NewPlugin("p", "", fakeRuntime{
		abi.ExportListTools: returns(abi.ListToolsResult{Tools: []abi.Tool{
			{Name: "plain", InputSchema: objectSchema},
			{Name: "dashboard", InputSchema: objectSchema, Meta: ui},
			{Name: "summarize", InputSchema: objectSchema, Meta: sampling},
		}}),
		abi.ExportCallTool: returns(abi.CallToolResult{Content: []abi.Content{{Type: abi.ContentText, Text: "ran"}}}),
		abi.ExportListPrompts: returns(abi.ListPromptsResult{Prompts: []abi.Prompt{
			{Name: "brief"}, {Name: "chart", Meta: ui},
		}}),
		abi.ExportGetPrompt:     returns(abi.GetPromptResult{Messages: []abi.PromptMessage{{Role: "user", Content: abi.Content{Type: abi.ContentText, Text: "x"}}}}),
		abi.ExportListResources: returns(abi.ListResourcesResult{Resources: []abi.Resource{{URI: "p://open", Name: "open"}, {URI: "p://ui", Name: "ui", Meta: ui}}}),
		abi.ExportReadResource:  returns(abi.ReadResourceResult{Contents: []abi.ResourceContents{{URI: "p://ui", Text: "x"}}}),
	})
	srv := NewServer(Options{PageSize: 10}, BuildCatalog(context.Background(), []*Plugin{p}, nil))
	h := session(t, srv)
	names := func(res map[string]any, list string) []string {
		var out []string
		for _, item := range res[list].([]any) {
			m := item.(map[string]any)
			name, _ := m["name"].(string)
			out = append(out, name)
		}
		return out
	}
	withUI := `{"extensions":{"io.modelcontextprotocol/ui":{}}}`
	for _, tc := range []struct {
		caps                     string
		tools, prompts, resource []string
	}{
		{`{}`, []string{"plain"}, []string{"brief"}, []string{"open"}},
		{withUI, []string{"plain", "dashboard"}, []string{"brief", "chart"}, []string{"open", "ui"}},
		{`{"sampling":{}}`, []string{"plain", "summarize"}, []string{"brief"}, []string{"open"}},
	} {
		if got := names(result(t, modernRequest(t, h, context.Background(), 1, "tools/list", tc.caps, `{}`)), "tools"); !reflect.DeepEqual(got, tc.tools) {
			t.Errorf("tools/list with %s: %v, want %v", tc.caps, got, tc.tools)
		}
		if got := names(result(t, modernRequest(t, h, context.Background(), 2, "prompts/list", tc.caps, `{}`)), "prompts"); !reflect.DeepEqual(got, tc.prompts) {
			t.Errorf("prompts/list with %s: %v, want %v", tc.caps, got, tc.prompts)
		}
		if got := names(result(t, modernRequest(t, h, context.Background(), 3, "resources/list", tc.caps, `{}`)), "resources"); !reflect.DeepEqual(got, tc.resource) {
			t.Errorf("resources/list with %s: %v, want %v", tc.caps, got, tc.resource)
		}
	}
	want := map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/ui": map[string]any{}}}
	for _, tc := range []struct{ method, params string }{
		{"tools/call", `{"name":"dashboard","arguments":{"n":1}}`},
		{"prompts/get", `{"name":"chart"}`},
		{"resources/read", `{"uri":"p://ui"}`},
	} {
		resp := modernRequest(t, h, context.Background(), 4, tc.method, `{}`, tc.params)
		if code := errCode(t, resp); code != CodeMissingClientCapability {
			t.Errorf("%s without the extension: code %d, want %d", tc.method, code, CodeMissingClientCapability)
			continue
		}
		data, _ := resp["error"].(map[string]any)["data"].(map[string]any)
		if !reflect.DeepEqual(data["requiredCapabilities"], want) {
			t.Errorf("%s: requiredCapabilities %v, want %v", tc.method, data["requiredCapabilities"], want)
		}
	}
	toolText(t, modernRequest(t, h, context.Background(), 5, "tools/call", withUI, `{"name":"dashboard","arguments":{"n":1}}`))

	legacy := session(t, srv)
	initWithCaps(t, legacy, Version20251125, `{"sampling":{}}`)
	if got := names(result(t, legacy.call(t, 6, "tools/list", map[string]any{})), "tools"); !reflect.DeepEqual(got, []string{"plain", "summarize"}) {
		t.Errorf("legacy tools/list with sampling: %v", got)
	}
	raw, _ := json.Marshal(map[string]any{"name": "dashboard", "arguments": map[string]any{"n": 1}})
	if code := errCode(t, legacy.call(t, 7, "tools/call", json.RawMessage(raw))); code != CodeInvalidParams {
		t.Errorf("legacy call of a tool the client cannot use: code %d, want %d", code, CodeInvalidParams)
	}
}

// A resource template that declares the client capabilities it needs
// guards every URI it matches: reading one without them is -32021 naming
// what is missing (invalid params in a legacy session), as for a listed
// resource; a listed resource keeps its own requirement.
func TestReadingThroughATemplateMeetsItsRequirement(t *testing.T) {
	ui := abi.Meta{requiresKey: map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/ui": map[string]any{}}}}
	p := NewPlugin("p", "", fakeRuntime{
		abi.ExportListResources: returns(abi.ListResourcesResult{Resources: []abi.Resource{{URI: "view://open", Name: "open"}}}),
		abi.ExportListResourceTemplates: returns(abi.ListResourceTemplatesResult{ResourceTemplates: []abi.ResourceTemplate{
			{URITemplate: "view://{id}", Name: "view", Meta: ui},
		}}),
		abi.ExportReadResource: returns(abi.ReadResourceResult{Contents: []abi.ResourceContents{{URI: "view://1", Text: "x"}}}),
	})
	srv := NewServer(Options{PageSize: 10}, BuildCatalog(context.Background(), []*Plugin{p}, nil))
	h := session(t, srv)
	resp := modernRequest(t, h, context.Background(), 1, "resources/read", `{}`, `{"uri":"view://1"}`)
	if code := errCode(t, resp); code != CodeMissingClientCapability {
		t.Fatalf("read through the template without the extension: code %d, want %d", code, CodeMissingClientCapability)
	}
	data, _ := resp["error"].(map[string]any)["data"].(map[string]any)
	if want := ui[requiresKey]; !reflect.DeepEqual(data["requiredCapabilities"], want) {
		t.Errorf("requiredCapabilities %v, want %v", data["requiredCapabilities"], want)
	}
	result(t, modernRequest(t, h, context.Background(), 2, "resources/read", `{"extensions":{"io.modelcontextprotocol/ui":{}}}`, `{"uri":"view://1"}`))
	result(t, modernRequest(t, h, context.Background(), 3, "resources/read", `{}`, `{"uri":"view://open"}`))

	legacy := session(t, srv)
	initWithCaps(t, legacy, Version20251125, `{}`)
	if code := errCode(t, legacy.call(t, 4, "resources/read", map[string]any{"uri": "view://1"})); code != CodeInvalidParams {
		t.Errorf("legacy read through the template: code %d, want %d", code, CodeInvalidParams)
	}
}
