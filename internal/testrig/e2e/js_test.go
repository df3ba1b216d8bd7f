package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A JavaScript plugin (plugins/examples/units/units.js) dropped into the
// plugins folder, served by a real `mcphost serve` on its embedded engine,
// driven by the official Go SDK client.

const grantUnits = "[plugins.units]\nhost_functions = [\"notify_progress\", \"notify_logging_message\"]\n"

// jsFixture is a fixture whose plugins folder holds the units example and
// the files given as name -> source.
func jsFixture(t *testing.T, extra string, files map[string]string) fixture {
	t.Helper()
	f := newFixture(t, grantUnits+extra)
	root, err := plugintest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(root, "plugins", "examples", "units", "units.js"))
	if err != nil {
		t.Fatal(err)
	}
	files["units.js"] = string(src)
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(f.plugins, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func TestJavaScriptPluginEndToEnd(t *testing.T) {
	f := jsFixture(t, "", map[string]string{})
	var mu sync.Mutex
	var progress []float64
	var logs []*mcp.LoggingMessageParams
	cs := f.connect(t, "2025-11-25", &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Progress)
			mu.Unlock()
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			mu.Lock()
			logs = append(logs, req.Params)
			mu.Unlock()
		},
	})
	ctx := ctxT(t)
	caps := cs.InitializeResult().Capabilities
	if caps.Tools == nil || caps.Prompts == nil || caps.Resources == nil || caps.Completions == nil {
		t.Fatalf("capabilities %+v lack a feature units.js provides", caps)
	}

	// Tools, with schemas.
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
		if tool.Name == "convert_units" {
			if tool.OutputSchema == nil || tool.Title != "Convert units" || tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
				t.Errorf("convert_units listed as %+v", tool)
			}
			schema, _ := json.Marshal(tool.InputSchema)
			if !strings.Contains(string(schema), `"required":["value","from","to"]`) {
				t.Errorf("convert_units inputSchema %s", schema)
			}
		}
	}
	if !slices.Contains(names, "convert_units") || !slices.Contains(names, "conversion_table") {
		t.Fatalf("tools %v", names)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "convert_units", Arguments: map[string]any{"value": 10, "from": "km", "to": "mi"}})
	if err != nil || res.IsError {
		t.Fatalf("convert_units: %v %+v", err, res)
	}
	if sc, ok := res.StructuredContent.(map[string]any); !ok || sc["value"] != 6.21371192237 || sc["unit"] != "mi" {
		t.Errorf("structuredContent %v", res.StructuredContent)
	}
	if got := text(t, res.Content); !strings.Contains(got, "10 km = 6.21371192237 mi") {
		t.Errorf("text %q", got)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "convert_units", Arguments: map[string]any{"value": 1, "from": "kg", "to": "m"}})
	if err != nil || !res.IsError || !strings.Contains(text(t, res.Content), "cannot convert mass (kg) to length (m)") {
		t.Errorf("a thrown error: %v %+v", err, res)
	}
	// The host validates arguments against the inputSchema before the plugin runs.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "convert_units", Arguments: map[string]any{"value": "ten", "from": "km", "to": "mi"}})
	if err != nil || !res.IsError {
		t.Errorf("invalid arguments: %v %+v", err, res)
	}

	// Host functions: progress and logging.
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Meta: mcp.Meta{"progressToken": "t1"}, Name: "conversion_table", Arguments: map[string]any{"unit": "kg"}})
	if err != nil || res.IsError || !strings.Contains(text(t, res.Content), "1 kg = 2.20462262185 lb") {
		t.Fatalf("conversion_table: %v %+v", err, res)
	}
	var n, l int
	if !poll.Within(5*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		n, l = len(progress), len(logs)
		return n == 5 && l == 1
	}) {
		t.Fatalf("%d progress notifications (want 5) and %d log messages (want 1)", n, l)
	}
	mu.Lock()
	if logs[0].Level != "info" || logs[0].Logger != "units" {
		t.Errorf("log message %+v", logs[0])
	}
	mu.Unlock()

	// A prompt with arguments, and completions.
	pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "explain_conversion", Arguments: map[string]string{"from": "F", "to": "C"}})
	if err != nil || len(pr.Messages) != 1 || !strings.Contains(pr.Messages[0].Content.(*mcp.TextContent).Text, "degree Fahrenheit (F)") {
		t.Errorf("get_prompt: %v %+v", err, pr)
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "explain_conversion", Arguments: map[string]string{"from": "F"}}); err == nil ||
		!strings.Contains(err.Error(), `missing required argument "to"`) {
		t.Errorf("missing argument: %v", err)
	}
	comp, err := cs.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "explain_conversion"},
		Argument: mcp.CompleteParamsArgument{Name: "to", Value: "m"},
		Context:  &mcp.CompleteContext{Arguments: map[string]string{"from": "s"}},
	})
	if err != nil || !slices.Equal(comp.Completion.Values, []string{"ms", "min"}) {
		t.Errorf("complete: %v %+v", err, comp)
	}

	// Resources and templates.
	uris := resourceURIs(t, ctx, cs)
	if !slices.Contains(uris, "units://catalog") {
		t.Errorf("resources %v", uris)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "units://unit/lb"})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].MIMEType != "application/json" ||
		rr.Contents[0].Text != `{"unit":"lb","name":"pound","dimension":"mass"}` {
		t.Errorf("read units://unit/lb: %v %+v", err, rr)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "units://unit/parsec"}); err == nil || !strings.Contains(err.Error(), "-32002") && !strings.Contains(err.Error(), "not found") {
		t.Errorf("unknown unit: %v", err)
	}
}

// A broken JavaScript plugin is refused at load with the JavaScript error;
// the others are served. A runaway one is stopped by its timeout.
func TestJavaScriptPluginErrors(t *testing.T) {
	f := jsFixture(t, "[plugins.spin]\ntimeout = \"1s\"\n", map[string]string{
		"broken.js": "mcphost.tool('x', 'x', () => 1);\nlet = ;\n",
		"spin.js":   "mcphost.tool('spin', 'Spins.', () => { for (;;) {} });\nmcphost.tool('ok', 'Fine.', () => 'fine');\n",
		"needy.js":  "/* mcphost.manifest {\"needs\": {\"config\": [\"api_key\"]}} */\nmcphost.tool('needy', 'x', () => 1);\n",
		"dup.js":    "mcphost.tool('dup', 'x', () => 'from dup.js');\n",
		"dup.wasm":  "not even wasm",
	})
	cmd := exec.Command(mcphostBin, "serve", "--plugins", f.plugins, "--config", f.config)
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}` + "\n")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), `"tools"`) {
		t.Fatalf("serve: %v\n%s\n%s", err, out, stderr.String())
	}
	logs := stderr.String()
	for _, want := range []string{"broken.js: loading the plugin failed: SyntaxError", "at broken.js:2",
		"needy.js: plugin needs grants it does not have", "[plugins.needy]",
		`dup.wasm: plugin name "dup" is taken by dup.js`} {
		if !strings.Contains(logs, strings.ReplaceAll(want, `"`, `\"`)) {
			t.Errorf("log lacks %q:\n%s", want, logs)
		}
	}

	cs := f.connect(t, "2025-11-25", nil)
	ctx := ctxT(t)
	start := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "spin"})
	if err == nil && !res.IsError {
		t.Errorf("spin: %+v", res)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("spin stopped after %s", d)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "dup"})
	if err != nil || res.IsError || text(t, res.Content) != "from dup.js" {
		t.Errorf("dup: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "ok"})
	if err != nil || res.IsError || text(t, res.Content) != "fine" {
		t.Errorf("after the timeout: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "convert_units", Arguments: map[string]any{"value": 0, "from": "C", "to": "F"}})
	if err != nil || res.IsError || !strings.Contains(text(t, res.Content), "0 C = 32 F") {
		t.Errorf("units beside the broken plugins: %v %+v", err, res)
	}
}

// TestRepoConfigServesJavaScriptExample checks that ./mcphost.toml grants
// units.js what its manifest comment asks for, so `make serve` loads it.
func TestRepoConfigServesJavaScriptExample(t *testing.T) {
	f := jsFixture(t, "", map[string]string{})
	root, err := plugintest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	f.config, f.serveArgs = filepath.Join(root, "mcphost.toml"), allowPartial
	cs := f.connect(t, "2025-11-25", nil)
	res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "conversion_table", Arguments: map[string]any{"unit": "h"}})
	if err != nil || res.IsError || !strings.Contains(text(t, res.Content), "1 h = 60 min") {
		t.Fatalf("units.js with the repo config: %v %+v", err, res)
	}
}

// TestJavaScriptFileDroppedIntoARunningServerBecomesCallable: the
// operator's experience of a JS plugin with no toolchain at all. A .js file
// copied into the folder of a running server is picked up by the watcher,
// clients hear tools/list_changed, and its tools answer.
func TestJavaScriptFileDroppedIntoARunningServerBecomesCallable(t *testing.T) {
	f := newFixture(t, grantUnits, "plugins/examples/tools")
	s := f.serveWatched(t, allowPartial...) // units is granted before its file arrives
	c := connectWatching(t, s.url)
	if slices.Contains(c.toolNames(t), "convert_units") {
		t.Fatal("convert_units is served before units.js was dropped in")
	}
	root, err := plugintest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(root, "plugins", "examples", "units", "units.js"))
	if err != nil {
		t.Fatal(err)
	}
	swapIn(t, f.plugins, "units.js", src)
	c.waitToolsChanged(t, 30*time.Second)
	res, err := c.cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "convert_units", Arguments: map[string]any{"value": 10, "from": "km", "to": "mi"}})
	if err != nil || res.IsError || !strings.Contains(text(t, res.Content), "6.21") {
		t.Fatalf("convert_units after the drop: %v %+v", err, res)
	}
}
