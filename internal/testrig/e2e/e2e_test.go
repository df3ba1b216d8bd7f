package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/mcphost/mcphost/internal/testrig/syncbuf"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// These tests drive a real `mcphost serve` process over stdio, with the
// official Go SDK as the client, on the example plugins and a hostile one.

var mcphostBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcphost-bin-")
	if err != nil {
		panic(err)
	}
	mcphostBin = filepath.Join(dir, "mcphost")
	if out, err := exec.Command("go", "build", "-o", mcphostBin, "github.com/mcphost/mcphost/cmd/mcphost").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building mcphost: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fixture is a plugins folder and a config for one server.
type fixture struct {
	plugins, config string
	// serveArgs are more arguments to serve.
	serveArgs []string
	// stderr, when set, receives the stderr (the log) of the servers that
	// command starts, which is otherwise discarded.
	stderr io.Writer
}

// allowPartial is a fixture's serveArgs for a config that names plugins
// the folder does not hold, such as the repo's mcphost.toml beside some of
// the examples: without it, serve stops (on_load_error).
var allowPartial = []string{"--allow-partial"}

// newFixture builds the named plugins into a fresh folder and writes a
// config that grants the examples what they need, pages lists by two and
// adds extra (more TOML) at the end.
func newFixture(t testing.TB, extra string, plugins ...string) fixture {
	t.Helper()
	dir := t.TempDir()
	pluginDir := filepath.Join(dir, "plugins")
	if err := os.Mkdir(pluginDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range plugins {
		wasm, err := os.ReadFile(plugintest.Build(t, p))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pluginDir, filepath.Base(p)+".wasm"), wasm, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(filepath.Join(data, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "notes", "hello.txt"), []byte("hello from the host"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`
[server]
name = "mcphost-e2e"
title = "mcphost end-to-end"
page_size = 2
cache_dir = %q
`+fixtureStartupWait+`
`, filepath.Join(os.TempDir(), "mcphost-e2e-cache"))
	// The grants of the examples in the folder: a table for a plugin that
	// is not there would stop serve (on_load_error).
	if slices.Contains(plugins, "plugins/examples/files") {
		cfg += fmt.Sprintf(`
[plugins.files]
host_functions = ["notify_logging_message"]
config = { max_file_bytes = "65536" }
[[plugins.files.mounts]]
host = %q
guest = "/data"
`, data)
	}
	if slices.Contains(plugins, "plugins/examples/tools") {
		cfg += `
[plugins.tools]
host_functions = ["notify_progress", "notify_logging_message"]
`
	}
	cfg += extra
	config := filepath.Join(dir, "mcphost.toml")
	if err := os.WriteFile(config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return fixture{plugins: pluginDir, config: config}
}

func (f fixture) command() *exec.Cmd {
	cmd := exec.Command(mcphostBin, append([]string{"serve", "--plugins", f.plugins, "--config", f.config, "--log-level", "debug"}, f.serveArgs...)...)
	cmd.Stderr = io.Discard
	if f.stderr != nil {
		cmd.Stderr = f.stderr
	}
	return cmd
}

// connect starts a server and connects the SDK client at a protocol version.
func (f fixture) connect(t *testing.T, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return f.connectClient(t, version, mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, opts))
}

// connectClient is connect with a client of the test's own (to add roots
// to, for instance).
func (f fixture) connectClient(t *testing.T, version string, client *mcp.Client) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := f.command()
	log := &syncbuf.Buffer{}
	cmd.Stderr = io.MultiWriter(cmd.Stderr, log)
	failOnCrash(t, log) // after the session closes: the server has exited
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect at %s: %v", version, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

var examples = []string{"plugins/examples/files", "plugins/examples/prompts", "plugins/examples/tools"}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func text(t *testing.T, content []mcp.Content) string {
	t.Helper()
	var parts []string
	for _, c := range content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func TestExamplesOverStdioAtEachVersion(t *testing.T) {
	f := newFixture(t, "", examples...)
	for _, version := range []string{"2025-11-25", "2025-06-18", "2025-03-26"} {
		t.Run(version, func(t *testing.T) {
			checkExamples(t, f.connect(t, version, nil), version)
		})
	}
}

const sha256abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

// checkExamples exercises every feature of the example plugins through a
// connected client session at a protocol version.
func checkExamples(t *testing.T, cs *mcp.ClientSession, version string) {
	ctx := ctxT(t)
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated %s, want %s", got, version)
	}
	caps := cs.InitializeResult().Capabilities
	if caps.Tools == nil || caps.Prompts == nil || caps.Resources == nil || caps.Logging == nil || caps.Completions == nil {
		t.Fatalf("capabilities %+v lack a feature the examples provide", caps)
	}

	// Tools, over several pages of two.
	first, err := cs.ListTools(ctx, &mcp.ListToolsParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Tools) != 2 || first.NextCursor == "" {
		t.Fatalf("first page: %d tools, cursor %q", len(first.Tools), first.NextCursor)
	}
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
		if (tool.OutputSchema != nil) != (version >= "2025-06-18") && tool.Name == "hash" {
			t.Errorf("hash outputSchema present=%v at %s", tool.OutputSchema != nil, version)
		}
	}
	for _, want := range []string{"text_stats", "hash", "json_query", "uuid", "count_primes"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}
	if _, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: "not-a-cursor"}); err == nil || !strings.Contains(err.Error(), "-32602") && !strings.Contains(err.Error(), "invalid cursor") {
		t.Errorf("invalid cursor: %v", err)
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hash", Arguments: map[string]any{"text": "abc"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || !strings.Contains(text(t, res.Content), sha256abc) {
		t.Fatalf("hash(abc): %+v", res)
	}
	if sc, ok := res.StructuredContent.(map[string]any); (version >= "2025-06-18") != (ok && sc["digest"] == sha256abc) {
		t.Errorf("structuredContent at %s: %v", version, res.StructuredContent)
	}
	bad, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hash", Arguments: map[string]any{"text": "abc", "algorithm": "crc32"}})
	if err != nil {
		t.Fatal(err)
	}
	if !bad.IsError || !strings.Contains(text(t, bad.Content), "algorithm") {
		t.Errorf("bad enum argument: want isError naming algorithm, got %+v", text(t, bad.Content))
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("unknown tool: %v", err)
	}

	// Prompts and completion.
	prompt, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "code_review", Arguments: map[string]string{"code": "print(1)", "language": "python"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(prompt.Messages) == 0 || !strings.Contains(fmt.Sprint(prompt.Messages[0].Content.(*mcp.TextContent).Text), "print(1)") {
		t.Fatalf("code_review prompt: %+v", prompt)
	}
	comp, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "code_review"}, Argument: mcp.CompleteParamsArgument{Name: "language", Value: "py"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(comp.Completion.Values, "python") {
		t.Fatalf("completing py: %v", comp.Completion.Values)
	}

	// Resources, listed and through the file:///{+path} template.
	uris := resourceURIs(t, ctx, cs)
	if !slices.Contains(uris, "file:///notes/hello.txt") {
		t.Fatalf("resources %v lack file:///notes/hello.txt", uris)
	}
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "file:///notes/hello.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if len(read.Contents) != 1 || read.Contents[0].Text != "hello from the host" {
		t.Fatalf("reading hello.txt: %+v", read.Contents)
	}
	templates := resourceTemplateURIs(t, ctx, cs)
	if len(templates) == 0 {
		t.Fatal("no resource templates")
	}
	pathComp, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: templates[0]}, Argument: mcp.CompleteParamsArgument{Name: "path", Value: "notes/"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pathComp.Completion.Values, "notes/hello.txt") {
		t.Errorf("completing path notes/: %v", pathComp.Completion.Values)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "other://nothing"}); err == nil || !strings.Contains(err.Error(), "-32002") && !strings.Contains(err.Error(), "not found") {
		t.Errorf("unknown resource: %v", err)
	}
}

func TestProgressReachesTheClient(t *testing.T) {
	f := newFixture(t, "", "plugins/examples/tools")
	// The SDK runs notification handlers asynchronously: collect under a lock
	// and wait for them after the call returns.
	var mu sync.Mutex
	var seen []float64
	cs := f.connect(t, "2025-11-25", &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			seen = append(seen, req.Params.Progress)
			mu.Unlock()
		},
	})
	res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{
		Meta: mcp.Meta{"progressToken": "primes-1"},
		Name: "count_primes", Arguments: map[string]any{"limit": 2000000},
	})
	if err != nil || res.IsError {
		t.Fatalf("count_primes: %v %+v", err, res)
	}
	var got []float64
	poll.Until(t, 5*time.Second, "a progress notification", func() bool {
		mu.Lock()
		defer mu.Unlock()
		got = slices.Clone(seen)
		return len(got) > 0
	})
	// Handlers may run out of order; the values sent must be distinct.
	slices.Sort(got)
	if len(slices.Compact(got)) != len(got) {
		t.Fatalf("progress values repeat: %v", got)
	}
}

func TestCancellingASlowCallInterruptsThePlugin(t *testing.T) {
	// One instance only: if cancelling did not stop the busy plugin, the
	// next call would wait for the 60 s timeout.
	f := newFixture(t, "[plugins.hostile]\nmax_instances = 1\ntimeout = \"60s\"\n", "internal/testrig/testplugins/hostile")
	log := &syncbuf.Buffer{}
	f.stderr = log
	cs := f.connect(t, "2025-11-25", nil)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"millis": 50000}})
		errc <- err
	}()
	waitStarted(t, log, 0, "hostile", "slow", 1)
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("cancelled call returned no error")
	}
	quick, stop := context.WithTimeout(context.Background(), 20*time.Second)
	defer stop()
	res, err := cs.CallTool(quick, &mcp.CallToolParams{Name: "ok", Arguments: map[string]any{}})
	if err != nil || text(t, res.Content) != "ok" {
		t.Fatalf("after cancel: %v %+v", err, res)
	}
}

func TestHostilePluginIsContained(t *testing.T) {
	f := newFixture(t, `
[plugins.hostile]
timeout = "2s"
memory_mib = 64
max_output_bytes = 1048576
# Five failures in a row would open the circuit breaker; this test wants
# each crash followed by a recovery (hostile_test.go tests the breaker).
breaker_failures = 0
`, "internal/testrig/testplugins/hostile", "plugins/examples/tools")
	cs := f.connect(t, "2025-11-25", nil)
	ctx := ctxT(t)
	for tool, want := range map[string]string{
		"spin":    "timed out",
		"crash":   "hostile",
		"hog":     "hostile",
		"recurse": "hostile",
		"flood":   "output",
	} {
		args := map[string]any{}
		if tool == "flood" {
			args["bytes"] = 4 << 20
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: protocol error %v (want an isError result)", tool, err)
		}
		if !res.IsError || !strings.Contains(text(t, res.Content), want) {
			t.Errorf("%s: want isError mentioning %q, got %q", tool, want, text(t, res.Content))
		}
		// The plugin recovers, and the other plugin never noticed.
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ok", Arguments: map[string]any{}}); err != nil || text(t, res.Content) != "ok" {
			t.Fatalf("hostile plugin did not recover after %s: %v %+v", tool, err, res)
		}
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "uuid", Arguments: map[string]any{}}); err != nil || res.IsError {
			t.Fatalf("healthy plugin broken after %s: %v %+v", tool, err, res)
		}
	}
}

// rawSession speaks JSON-RPC lines to a server process directly, for input
// no SDK would send.
type rawSession struct {
	in  io.WriteCloser
	out *bufio.Scanner
	cmd *exec.Cmd
}

func startRaw(t *testing.T, f fixture) *rawSession {
	t.Helper()
	cmd := f.command()
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &rawSession{in: in, out: bufio.NewScanner(out), cmd: cmd}
	s.out.Buffer(nil, 1<<20)
	t.Cleanup(func() { in.Close(); _ = cmd.Wait() })
	return s
}

func (s *rawSession) roundTrip(t *testing.T, line string) map[string]any {
	t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
	if !s.out.Scan() {
		t.Fatalf("no answer to %s: %v", line, s.out.Err())
	}
	var m map[string]any
	if err := json.Unmarshal(s.out.Bytes(), &m); err != nil {
		t.Fatalf("stdout carried a non-JSON line %q", s.out.Text())
	}
	return m
}

func TestMalformedInputGetsTheRightErrorCode(t *testing.T) {
	f := newFixture(t, "", "plugins/examples/tools")
	s := startRaw(t, f)
	code := func(m map[string]any) float64 {
		e, _ := m["error"].(map[string]any)
		c, _ := e["code"].(float64)
		return c
	}
	if c := code(s.roundTrip(t, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)); c != -32600 {
		t.Errorf("request before initialize: code %v, want -32600", c)
	}
	if c := code(s.roundTrip(t, `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)); c != 0 {
		t.Fatalf("initialize failed: code %v", c)
	}
	if _, err := io.WriteString(s.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	for line, want := range map[string]float64{
		`{"jsonrpc":"2.0","id":3,"method":"tools/list"`:                                    -32700,
		`{"jsonrpc":"2.0","id":4,"method":"no/such/method"}`:                               -32601,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":7}}`:               -32602,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope"}}`:          -32602,
		`{"jsonrpc":"2.0","id":7,"method":"logging/setLevel","params":{"level":"loud"}}`:   -32602,
		`{"jsonrpc":"2.0","id":8,"method":"resources/read","params":{"uri":"x://none"}}`:   -32002,
		`{"jsonrpc":"2.0","id":[9],"method":"ping"}`:                                       -32600,
		`{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{"cursor":"bogus"}}`:      -32602,
		`{"jsonrpc":"2.0","id":11,"method":"prompts/get","params":{"name":"code_review"}}`: -32602,
	} {
		if c := code(s.roundTrip(t, line)); c != want {
			t.Errorf("%s: code %v, want %v", line, c, want)
		}
	}
	if m := s.roundTrip(t, `{"jsonrpc":"2.0","id":"still-here","method":"ping"}`); m["id"] != "still-here" || m["result"] == nil {
		t.Fatalf("server stopped answering: %v", m)
	}
}

func TestStdinEOFShutsDownCleanly(t *testing.T) {
	f := newFixture(t, "", "plugins/examples/tools")
	s := startRaw(t, f)
	s.roundTrip(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	s.in.Close()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after EOF: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("server did not exit after stdin EOF")
	}
}

// TestRepoConfigServesEveryExample checks that ./mcphost.toml grants each
// example what its manifest asks for, so `make serve` loads all of them.
func TestRepoConfigServesEveryExample(t *testing.T) {
	f := newFixture(t, "", examples...)
	root, err := plugintest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	f.config, f.serveArgs = filepath.Join(root, "mcphost.toml"), allowPartial
	cs := f.connect(t, "2025-11-25", nil)
	caps := cs.InitializeResult().Capabilities
	if caps.Tools == nil || caps.Prompts == nil || caps.Resources == nil {
		t.Fatalf("capabilities %+v: an example did not load with the repo config", caps)
	}
	read, err := cs.ReadResource(ctxT(t), &mcp.ReadResourceParams{URI: "file:///files/README.md"})
	if err != nil || len(read.Contents) != 1 || !strings.Contains(read.Contents[0].Text, "files") {
		t.Fatalf("reading the files example's README through the repo config: %v %+v", err, read)
	}
}

func TestSIGTERMStopsABusyServerPromptly(t *testing.T) {
	f := newFixture(t, "[plugins.hostile]\ntimeout = \"60s\"\n", "internal/testrig/testplugins/hostile")
	log := &syncbuf.Buffer{}
	f.stderr = log
	s := startRaw(t, f)
	s.roundTrip(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if _, err := io.WriteString(s.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"millis":50000}}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	waitStarted(t, log, 0, "hostile", "slow", 1)
	start := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("server still running 10s after SIGTERM with a call in flight")
	}
	t.Logf("stopped %v after SIGTERM", time.Since(start).Round(time.Millisecond))
}

func TestPluginAskingForUngrantedCapabilitiesIsRefused(t *testing.T) {
	f := newFixture(t, "", "plugins/examples/tools", "plugins/examples/prompts")
	cfg, err := os.ReadFile(f.config)
	if err != nil {
		t.Fatal(err)
	}
	// Take away the grant the tools example's manifest asks for.
	stripped := strings.Replace(string(cfg), `host_functions = ["notify_progress", "notify_logging_message"]`, "", 1)
	if err := os.WriteFile(f.config, []byte(stripped), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(mcphostBin, "serve", "--plugins", f.plugins, "--config", f.config, "--allow-partial")
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}` + "\n")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("serve: %v\n%s", err, stderr.String())
	}
	logs := stderr.String()
	if !strings.Contains(logs, "tools.wasm: plugin needs grants it does not have") || !strings.Contains(logs, `host_functions = [\"notify_progress\"]`) {
		t.Fatalf("want the refusal with the config line to add, got:\n%s", logs)
	}
	var init struct {
		Result struct {
			Capabilities map[string]any `json:"capabilities"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out, &init); err != nil {
		t.Fatal(err)
	}
	if init.Result.Capabilities["tools"] != nil || init.Result.Capabilities["prompts"] == nil {
		t.Fatalf("want tools refused and prompts served, capabilities %v; log:\n%s", init.Result.Capabilities, logs)
	}
}

// resourceURIs lists the URIs of the resources cs offers.
func resourceURIs(t testing.TB, ctx context.Context, cs *mcp.ClientSession) []string {
	t.Helper()
	var uris []string
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		uris = append(uris, r.URI)
	}
	return uris
}

// resourceTemplateURIs lists the URI templates of the resource templates cs
// offers.
func resourceTemplateURIs(t testing.TB, ctx context.Context, cs *mcp.ClientSession) []string {
	t.Helper()
	var templates []string
	for tmpl, err := range cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		templates = append(templates, tmpl.URITemplate)
	}
	return templates
}
