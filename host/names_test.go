package host

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/syncbuf"
)

// catalogNames builds the catalog of plugins and returns its tool and
// prompt names and what it logged.
func catalogNames(plugins ...*Plugin) (tools, prompts []string, log string) {
	var buf syncbuf.Buffer
	c := BuildCatalog(context.Background(), plugins, slog.New(slog.NewTextHandler(&buf, nil)))
	for _, t := range c.tools {
		tools = append(tools, t.tool.Name+"="+t.plugin.Name+":"+t.original)
	}
	for _, p := range c.prompts {
		prompts = append(prompts, p.prompt.Name+"="+p.plugin.Name+":"+p.original)
	}
	return tools, prompts, buf.String()
}

// A clash goes to the first plugin of the config, the others get
// portable names, and the warning that says so names both plugins, once
// for each plugin, however many catalogs are built with it (a start builds
// one for each plugin that arrives).
func TestAClashGoesToTheFirstPluginOfTheConfigAndTheOthersGetPortableNames(t *testing.T) {
	for _, reversed := range []bool{false, true} {
		alpha := NewPlugin("alpha", "", toolsPlugin("alpha", abi.Tool{Name: "search", InputSchema: objectSchema}).rt, WithRank(2))
		beta := NewPlugin("beta", "", toolsPlugin("beta", abi.Tool{Name: "search", InputSchema: objectSchema}).rt, WithRank(1))
		stray := toolsPlugin("aaa", abi.Tool{Name: "search", InputSchema: objectSchema}) // no [plugins] table: after those with one
		order := []*Plugin{alpha, beta, stray}
		if reversed {
			slices.Reverse(order)
		}
		tools, _, log := catalogNames(order...)
		want := []string{"search=beta:search", "alpha_search=alpha:search", "aaa_search=aaa:search"}
		if !slices.Equal(tools, want) {
			t.Errorf("tools %v, want %v", tools, want)
		}
		if !strings.Contains(log, `exposedAs=alpha_search ownedBy=beta`) {
			t.Errorf("no warning naming both plugins:\n%s", log)
		}
		if _, _, again := catalogNames(order...); strings.Contains(again, "renamed to avoid a clash") {
			t.Errorf("the same plugins' catalog built again warned again:\n%s", again)
		}
	}
}

func TestToolNamesArePortableByDefault(t *testing.T) {
	long := strings.Repeat("x", 61) // 65 with the prefix
	tools := []abi.Tool{{Name: "fs.read", InputSchema: objectSchema}, {Name: long, InputSchema: objectSchema}, {Name: "ok-name_1", InputSchema: objectSchema}}
	portable := NewPlugin("fs", "pre_", toolsPlugin("fs", tools...).rt)
	got, _, log := catalogNames(portable)
	if !slices.Equal(got, []string{"pre_ok-name_1=fs:ok-name_1"}) {
		t.Errorf("portable tools %v, want only pre_ok-name_1", got)
	}
	for _, name := range []string{"pre_fs.read", "pre_" + long} {
		if !strings.Contains(log, `name=`+name) || !strings.Contains(log, `rename = { \"`) || !strings.Contains(log, `tool_names = \"mcp\"`) {
			t.Errorf("no warning for %s naming the fix:\n%s", name, log)
		}
	}
	mcp := NewPlugin("fs", "pre_", toolsPlugin("fs", tools...).rt, WithToolNames(ToolNamesMCP))
	if got, _, _ := catalogNames(mcp); len(got) != 3 {
		t.Errorf("tool_names = mcp: %v, want all three", got)
	}
}

func TestRenameGivesAToolOrPromptItsExposedName(t *testing.T) {
	base := toolsPlugin("fs", abi.Tool{Name: "fs.read", InputSchema: objectSchema})
	rt := fakeRuntime{
		abi.ExportListTools:   base.rt.(fakeRuntime)[abi.ExportListTools],
		abi.ExportCallTool:    base.rt.(fakeRuntime)[abi.ExportCallTool],
		abi.ExportListPrompts: returns(abi.ListPromptsResult{Prompts: []abi.Prompt{{Name: "review code"}}}),
	}
	p := NewPlugin("fs", "pre_", rt, WithExposure(Exposure{Rename: map[string]string{"fs.read": "read_file", "review code": "review"}}))
	tools, prompts, _ := catalogNames(p)
	if !slices.Equal(tools, []string{"read_file=fs:fs.read"}) || !slices.Equal(prompts, []string{"review=fs:review code"}) {
		t.Errorf("renamed: tools %v prompts %v", tools, prompts)
	}
	h := newHarness(t, p)
	h.init(t, Version20251125)
	res := result(t, h.call(t, 1, "tools/call", map[string]any{"name": "read_file", "arguments": map[string]any{"n": 1}}))
	if text := res["content"].([]any)[0].(map[string]any)["text"].(string); !strings.HasPrefix(text, "fs:fs.read:") {
		t.Errorf("a call to the renamed tool reached %q, want the plugin's fs.read", text)
	}
}
