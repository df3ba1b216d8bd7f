package host

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/yosida95/uritemplate/v3"
)

func TestExposureFiltersListsCapsThemAndRefusesReads(t *testing.T) {
	schema := json.RawMessage(`{"type":"object"}`)
	var tools []abi.Tool
	for _, n := range []string{"search_a", "search_b", "delete_all", "search_c", "fetch"} {
		tools = append(tools, abi.Tool{Name: n, InputSchema: schema})
	}
	var read []string
	rt := fakeRuntime{
		abi.ExportListTools:   returns(abi.ListToolsResult{Tools: tools}),
		abi.ExportListPrompts: returns(abi.ListPromptsResult{Prompts: []abi.Prompt{{Name: "public"}, {Name: "internal"}}}),
		abi.ExportListResources: returns(abi.ListResourcesResult{Resources: []abi.Resource{
			{URI: "docs://guide", Name: "guide"}, {URI: "secret://keys", Name: "keys"}}}),
		abi.ExportListResourceTemplates: returns(abi.ListResourceTemplatesResult{ResourceTemplates: []abi.ResourceTemplate{
			{URITemplate: "docs://{page}", Name: "page"}, {URITemplate: "{+anything}", Name: "any"}}}),
		abi.ExportReadResource: func(_ context.Context, in []byte) ([]byte, error) {
			var i struct {
				Request abi.ReadResourceParams `json:"request"`
			}
			_ = json.Unmarshal(in, &i)
			read = append(read, i.Request.URI)
			return json.Marshal(abi.ReadResourceResult{Contents: []abi.ResourceContents{{URI: i.Request.URI, Text: "x"}}})
		},
	}
	prefixed := func(prefixes ...string) func(string) bool {
		return func(s string) bool {
			return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(s, p) })
		}
	}
	var logs logRecords
	p := NewPlugin("p", "", rt, WithExposure(Exposure{
		Tool:         prefixed("search_", "fetch"),
		Prompt:       func(string) bool { return false },
		Resource:     prefixed("docs://"),
		MaxListItems: 2,
	}))
	c := BuildCatalog(context.Background(), []*Plugin{p}, slog.New(&logs))
	var names []string
	for _, e := range c.tools {
		names = append(names, e.tool.Name)
	}
	if strings.Join(names, ",") != "search_a,search_b" {
		t.Errorf("tools exposed: %v; want the first 2 allowed", names)
	}
	if len(c.prompts) != 0 {
		t.Errorf("an allow-list that allows nothing still exposed %d prompts", len(c.prompts))
	}
	if len(c.resources) != 1 || c.resources[0].resource.URI != "docs://guide" || len(c.templates) != 1 || c.templates[0].template.URITemplate != "docs://{page}" {
		t.Errorf("resources %d, templates %d", len(c.resources), len(c.templates))
	}
	if w := logs.warnings("plugin lists too many tools; the rest are left out"); len(w) != 1 || fmt.Sprint(w[0]["listed"], w[0]["kept"]) != "4 2" {
		t.Errorf("truncation warnings: %v", w)
	}
	// A URI that no listed resource has and that only the catch-all
	// template matches is refused, without reaching the plugin.
	anything, err := uritemplate.New("{+anything}")
	if err != nil {
		t.Fatal(err)
	}
	c.templates = append(c.templates, &templateEntry{plugin: p, template: abi.ResourceTemplate{URITemplate: "{+anything}"}, compiled: anything})
	h := newHarness(t)
	h.srv.catalog.Store(c)
	h.init(t, Version20251125)
	resp := h.call(t, 1, "resources/read", map[string]any{"uri": "secret://keys"})
	if errCode(t, resp) != CodeInternalError || !strings.Contains(resp["error"].(map[string]any)["message"].(string),
		`resource "secret://keys" is not exposed: it is not in the resources allow-list of [plugins.p]`) {
		t.Errorf("read outside the allow-list: %v", resp)
	}
	if r := h.call(t, 2, "resources/read", map[string]any{"uri": "docs://guide"}); r["result"] == nil {
		t.Errorf("read inside the allow-list: %v", r)
	}
	if strings.Join(read, ",") != "docs://guide" {
		t.Errorf("reads that reached the plugin: %v", read)
	}
}
