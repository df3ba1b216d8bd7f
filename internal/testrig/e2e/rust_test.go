package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/mcphost/mcphost/internal/testrig/testenv"
	"github.com/mcphost/mcphost/sandbox"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// These tests build the Rust PDK's example plugin (plugins/examples/textkit)
// with cargo and serve it with a real `mcphost serve`, driven by the
// official Go SDK client. They need a Rust toolchain for WebAssembly
// (scripts/setup-rust.sh installs Debian's); without one they are skipped,
// except in CI, where that is a failure.

var (
	rustMu    sync.Mutex
	rustBuilt = map[string][]byte{}
)

// rustToolchain returns the module root and pdk/rust/build-plugin.sh, or,
// when that finds no Rust toolchain for WebAssembly, why (a failure in CI).
func rustToolchain(tb testing.TB) (root, script, missing string) {
	tb.Helper()
	root, err := plugintest.ModuleRoot()
	if err != nil {
		tb.Fatal(err)
	}
	script = filepath.Join(root, "pdk", "rust", "build-plugin.sh")
	check := exec.Command(script, "--check")
	check.Dir = root
	out, err := check.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return root, script, ""
	case errors.As(err, &exit) && exit.ExitCode() == 2:
		if testenv.CI() {
			tb.Fatalf("CI is set, and there is no Rust toolchain for WebAssembly (scripts/setup-rust.sh installs it):\n%s", out)
		}
		return "", "", "SKIPPED: no Rust toolchain for WebAssembly; run scripts/setup-rust.sh to include the Rust PDK:\n" + string(out)
	default:
		tb.Fatalf("build-plugin.sh --check: %v\n%s", err, out)
	}
	return "", "", ""
}

// rustScript is rustToolchain for tests, which are skipped without one.
func rustScript(t *testing.T) (root, script string) {
	t.Helper()
	root, script, missing := rustToolchain(t)
	if missing != "" {
		t.Skip(missing)
	}
	return root, script
}

// buildRustPlugin builds the Rust plugin crate at crate (relative to the
// module root) once per test binary and returns the module, or no module
// and why there is no toolchain.
func buildRustPlugin(tb testing.TB, crate string) (wasm []byte, missing string) {
	tb.Helper()
	root, script, missing := rustToolchain(tb)
	if missing != "" {
		return nil, missing
	}
	rustMu.Lock()
	defer rustMu.Unlock()
	if wasm, ok := rustBuilt[crate]; ok {
		return wasm, ""
	}
	out := filepath.Join(tb.TempDir(), filepath.Base(crate)+".wasm")
	start := time.Now()
	cmd := exec.Command(script, crate, out)
	cmd.Dir = root
	if msg, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("building %s: %v\n%s", crate, err, msg)
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Logf("built %s: %d bytes in %v", crate, len(wasm), time.Since(start).Round(time.Millisecond))
	rustBuilt[crate] = wasm
	return wasm, ""
}

// buildRust is buildRustPlugin for tests, which are skipped without a
// toolchain.
func buildRust(t *testing.T, crate string) []byte {
	t.Helper()
	wasm, missing := buildRustPlugin(t, crate)
	if missing != "" {
		t.Skip(missing)
	}
	return wasm
}

// TestRustNativeUnitTests runs the Rust PDK's and the example's own tests
// (cargo test, natively, against the PDK's fake Extism kernel).
func TestRustNativeUnitTests(t *testing.T) {
	root, script := rustScript(t)
	for _, crate := range []string{"pdk/rust", "plugins/examples/textkit"} {
		t.Run(filepath.Base(crate), func(t *testing.T) {
			cmd := exec.Command(script, "--test", crate)
			cmd.Dir = root
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("cargo test in %s: %v\n%s", crate, err, out)
			}
			if !strings.Contains(string(out), "test result: ok") {
				t.Fatalf("cargo test in %s ran no test:\n%s", crate, out)
			}
		})
	}
}

const textkitGrants = `
[plugins.textkit]
host_functions = ["notify_logging_message", "notify_progress", "create_message"]
`

func TestRustPluginManifestAndImports(t *testing.T) {
	wasm := buildRust(t, "plugins/examples/textkit")
	info, err := sandbox.Inspect(wasm)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := info.CustomSections[abi.ManifestSection]; !ok {
		t.Fatalf("no %s custom section; sections: %v", abi.ManifestSection, keys(info.CustomSections))
	}
	m, err := info.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{abi.HostNotifyLoggingMessage, abi.HostNotifyProgress, abi.HostCreateMessage}
	if m.ABI != abi.Version || m.Name != "textkit" || m.Version == "" || !slices.Equal(m.Needs.HostFunctions, want) {
		t.Fatalf("manifest %+v", m)
	}
	for _, e := range []string{abi.ExportListTools, abi.ExportCallTool, abi.ExportListPrompts, abi.ExportGetPrompt,
		abi.ExportListResources, abi.ExportListResourceTemplates, abi.ExportReadResource, abi.ExportComplete} {
		if !info.HasExport(e) {
			t.Errorf("no export %s; exports %v", e, info.Exports)
		}
	}
	// The plugin imports exactly the host functions it calls, which are the
	// ones its manifest asks for.
	imports := info.HostImports()
	slices.Sort(imports)
	slices.Sort(want)
	if !slices.Equal(imports, want) {
		t.Errorf("host imports %v, manifest needs %v", imports, want)
	}
}

func keys(m map[string][]byte) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

func TestRustPluginOverStdio(t *testing.T) {
	wasm := buildRust(t, "plugins/examples/textkit")
	f := newFixture(t, textkitGrants)
	if err := os.WriteFile(filepath.Join(f.plugins, "textkit.wasm"), wasm, 0o644); err != nil {
		t.Fatal(err)
	}

	// The SDK runs notification handlers asynchronously: collect under a lock.
	var (
		mu       sync.Mutex
		progress []float64
		logs     []string
		sampled  []string
	)
	cs := f.connect(t, "2025-11-25", &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Progress)
			mu.Unlock()
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			b, _ := json.Marshal(req.Params.Data)
			mu.Lock()
			logs = append(logs, string(req.Params.Level)+" "+string(b))
			mu.Unlock()
		},
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			var prompt string
			for _, m := range req.Params.Messages {
				if tc, ok := m.Content.(*mcp.TextContent); ok {
					prompt += tc.Text
				}
			}
			mu.Lock()
			sampled = append(sampled, prompt)
			mu.Unlock()
			return &mcp.CreateMessageResult{Role: "assistant", Model: "test-model", Content: &mcp.TextContent{Text: "A short summary."}}, nil
		},
	})
	ctx := ctxT(t)
	caps := cs.InitializeResult().Capabilities
	if caps.Tools == nil || caps.Prompts == nil || caps.Resources == nil || caps.Completions == nil {
		t.Fatalf("capabilities %+v lack a feature textkit provides", caps)
	}

	// Tools, with their schemas.
	tools := map[string]*mcp.Tool{}
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		tools[tool.Name] = tool
		names = append(names, tool.Name)
	}
	if want := []string{"slugify", "word_frequencies", "wrap", "convert_case", "summarize"}; !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
	schema := func(v any) map[string]any {
		b, _ := json.Marshal(v)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		return m
	}
	in := schema(tools["slugify"].InputSchema)
	if sep, _ := in["properties"].(map[string]any)["separator"].(map[string]any); sep["maxLength"] != 3.0 || sep["default"] != "-" ||
		!slices.Equal(in["required"].([]any), []any{"text"}) {
		t.Errorf("slugify inputSchema %v", in)
	}
	if a := tools["slugify"].Annotations; a == nil || !a.ReadOnlyHint || !a.IdempotentHint || a.Title != "" && a.Title != "Slugify" {
		t.Errorf("slugify annotations %+v", a)
	}
	out := schema(tools["word_frequencies"].OutputSchema)
	if props, _ := out["properties"].(map[string]any); props["top"] == nil || props["total_words"] == nil {
		t.Errorf("word_frequencies outputSchema %v", out)
	}
	if style := schema(tools["convert_case"].InputSchema)["properties"].(map[string]any)["style"].(map[string]any); len(style["enum"].([]any)) != 8 {
		t.Errorf("convert_case style schema %v", style)
	}

	call := func(name string, args map[string]any, meta mcp.Meta) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args, Meta: meta})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	if res := call("slugify", map[string]any{"text": "Héllo, Wörld! Rust & Go"}, nil); res.IsError || text(t, res.Content) != "hello-world-rust-go" {
		t.Errorf("slugify: %+v", text(t, res.Content))
	}
	if res := call("wrap", map[string]any{"text": "aaaa bbbb cccc dddd", "width": 10}, nil); text(t, res.Content) != "aaaa bbbb\ncccc dddd" {
		t.Errorf("wrap: %q", text(t, res.Content))
	}
	if res := call("convert_case", map[string]any{"text": "parseHTTPRequest", "style": "snake"}, nil); text(t, res.Content) != "parse_http_request" {
		t.Errorf("convert_case: %q", text(t, res.Content))
	}

	// Structured output, progress and logging.
	long := strings.Repeat("one two two three three three\n", 2000)
	res := call("word_frequencies", map[string]any{"text": long, "top": 2}, mcp.Meta{"progressToken": "wf-1"})
	sc, _ := res.StructuredContent.(map[string]any)
	top, _ := sc["top"].([]any)
	if res.IsError || sc["total_words"] != 12000.0 || sc["unique_words"] != 3.0 || len(top) != 2 ||
		top[0].(map[string]any)["word"] != "three" || top[0].(map[string]any)["count"] != 6000.0 {
		t.Fatalf("word_frequencies: %+v %s", sc, text(t, res.Content))
	}
	var fromText map[string]any
	if err := json.Unmarshal([]byte(text(t, res.Content)), &fromText); err != nil || fromText["total_words"] != 12000.0 {
		t.Errorf("word_frequencies text block is not the structured JSON: %v %q", err, text(t, res.Content))
	}
	waitFor(t, &mu, "progress and a log message", func() bool {
		return len(progress) >= 5 && slices.ContainsFunc(logs, func(l string) bool {
			return strings.HasPrefix(l, "info ") && strings.Contains(l, "12000 words, 3 distinct")
		})
	})
	mu.Lock()
	got := slices.Clone(progress)
	mu.Unlock()
	slices.Sort(got)
	if len(slices.Compact(got)) != len(got) {
		t.Errorf("progress values repeat: %v", got)
	}

	// Sampling through the client.
	res = call("summarize", map[string]any{"text": "Rust plugins run in mcphost.", "sentences": 1}, nil)
	if res.IsError || text(t, res.Content) != "A short summary." {
		t.Errorf("summarize: %+v", text(t, res.Content))
	}
	mu.Lock()
	if len(sampled) != 1 || !strings.Contains(sampled[0], "Rust plugins run in mcphost.") || !strings.Contains(sampled[0], "1 sentence:") {
		t.Errorf("sampling requests %q", sampled)
	}
	mu.Unlock()

	// Errors: bad arguments are tool errors, an unknown tool a protocol error.
	bad := call("convert_case", map[string]any{"text": "x", "style": "sideways"}, nil)
	if !bad.IsError || !strings.Contains(text(t, bad.Content), "style") {
		t.Errorf("bad enum argument: want isError naming style, got %q", text(t, bad.Content))
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}}); err == nil ||
		!strings.Contains(err.Error(), "unknown tool") && !strings.Contains(err.Error(), "-32602") {
		t.Errorf("unknown tool: %v", err)
	}

	// Prompts and completion.
	p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "proofread", Arguments: map[string]string{"text": "Teh cat.", "style": "formal"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Messages) != 1 || !strings.Contains(p.Messages[0].Content.(*mcp.TextContent).Text, "Teh cat.") ||
		!strings.Contains(p.Messages[0].Content.(*mcp.TextContent).Text, "formal") || p.Description == "" {
		t.Errorf("proofread: %+v", p)
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "proofread", Arguments: map[string]string{}}); err == nil || !strings.Contains(err.Error(), "text") {
		t.Errorf("proofread without text: %v", err)
	}
	comp, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "proofread"}, Argument: mcp.CompleteParamsArgument{Name: "style", Value: "F"}})
	if err != nil || !slices.Equal(comp.Completion.Values, []string{"formal"}) {
		t.Errorf("completing style F: %v %+v", err, comp)
	}

	// Resources: a static one and a template, with completion of its variable.
	uris := resourceURIs(t, ctx, cs)
	if !slices.Equal(uris, []string{"textkit://stopwords"}) {
		t.Errorf("resources %v", uris)
	}
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "textkit://stopwords"})
	if err != nil || len(read.Contents) != 1 || read.Contents[0].MIMEType != "text/plain" || !slices.Contains(strings.Split(read.Contents[0].Text, "\n"), "the") {
		t.Errorf("reading stopwords: %v %+v", err, read)
	}
	templates := resourceTemplateURIs(t, ctx, cs)
	if !slices.Equal(templates, []string{"textkit://case/{style}/{text}"}) {
		t.Fatalf("templates %v", templates)
	}
	read, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "textkit://case/kebab/Hello%20Big%20World"})
	if err != nil || len(read.Contents) != 1 || read.Contents[0].Text != "hello-big-world" || read.Contents[0].URI != "textkit://case/kebab/Hello%20Big%20World" {
		t.Errorf("reading through the template: %v %+v", err, read)
	}
	// The plugin's own protocol error (error_set with -32002) reaches the client.
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "textkit://case/sideways/x"}); err == nil ||
		!strings.Contains(err.Error(), "-32002") && !strings.Contains(err.Error(), "not found") {
		t.Errorf("unknown style: %v", err)
	}
	comp, err = cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: templates[0]}, Argument: mcp.CompleteParamsArgument{Name: "style", Value: "c"}})
	if err != nil || !slices.Equal(comp.Completion.Values, []string{"camel", "constant"}) {
		t.Errorf("completing style c: %v %+v", err, comp)
	}
}

// waitFor polls cond, under mu, until it holds or 5 s pass.
func waitFor(t *testing.T, mu *sync.Mutex, what string, cond func() bool) {
	t.Helper()
	poll.Until(t, 5*time.Second, what+" to arrive", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return cond()
	})
}

// TestRustPluginHandlesHTTPFailures: a plugin built with the Rust PDK
// (internal/testrig/testplugins/rustfetch), served by mcphost, gets a request the
// sandbox refuses as an error value naming the grant that would allow it,
// and answers with its fallback; a granted request goes through.
func TestRustPluginHandlesHTTPFailures(t *testing.T) {
	wasm := buildRust(t, "internal/testrig/testplugins/rustfetch")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "pong") }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	f := newFixture(t, fmt.Sprintf("\n[plugins.rustfetch]\nallowed_hosts = [\"127.0.0.1:%s\"]\n", port))
	if err := os.WriteFile(filepath.Join(f.plugins, "rustfetch.wasm"), wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	cs := f.connect(t, "2025-11-25", nil)
	ctx := ctxT(t)
	for _, c := range []struct{ url, want string }{
		{"http://api.example.org/v1", `fallback: HTTP request to 'http://api.example.org/v1' is not allowed: host api.example.org is not in the allowed_hosts of plugin rustfetch (add "api.example.org" to allowed_hosts in [plugins.rustfetch])`},
		{srv.URL, "200 pong"},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fetch", Arguments: map[string]any{"url": c.url}})
		if err != nil {
			t.Fatalf("fetch %s: %v", c.url, err)
		}
		if got := text(t, res.Content); res.IsError || got != c.want {
			t.Errorf("fetch %s: isError=%v %q\nwant %q", c.url, res.IsError, got, c.want)
		}
	}
}
