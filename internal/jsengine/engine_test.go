package jsengine_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	js "github.com/mcphost/mcphost/internal/jsengine"
	"github.com/mcphost/mcphost/sandbox"
)

// These tests run the embedded engine in the Go sandbox, as mcphost does,
// on the JavaScript plugins in testdata.

var (
	engineOnce sync.Once
	engine     *sandbox.Engine
	engineErr  error
)

// sharedEngine is one sandbox engine for the whole test binary, so that the
// JavaScript engine module is compiled once.
func sharedEngine(t testing.TB) *sandbox.Engine {
	t.Helper()
	engineOnce.Do(func() { engine, engineErr = sandbox.NewEngine(sandbox.EngineOptions{}) })
	if engineErr != nil {
		t.Fatal(engineErr)
	}
	return engine
}

// hostCall is a host function call a plugin made.
type hostCall struct {
	name  string
	input string
}

// fakeHost provides the mcphost host functions: it records calls and
// answers with canned replies.
type fakeHost struct {
	mu      sync.Mutex
	calls   []hostCall
	replies map[string]string
}

func (h *fakeHost) functions() []sandbox.HostFunction {
	names := abi.HostFunctionNames()
	fns := make([]sandbox.HostFunction, len(names))
	for i, name := range names {
		sig, _ := abi.HostSignatureOf(name)
		fns[i] = sandbox.HostFunction{Name: name, Input: sig.Input, Output: sig.Output}
		fns[i].Fn = func(ctx context.Context, in []byte) ([]byte, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.calls = append(h.calls, hostCall{name, string(in)})
			if r, ok := h.replies[name]; ok {
				if strings.HasPrefix(r, "error:") {
					return nil, &abi.Error{Code: abi.CodeInvalidParams, Message: strings.TrimPrefix(r, "error:")}
				}
				return []byte(r), nil
			}
			return []byte(`{}`), nil
		}
	}
	return fns
}

func (h *fakeHost) take() []hostCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.calls
	h.calls = nil
	return c
}

type loadOpts struct {
	config  map[string]string
	limits  sandbox.Limits
	replies map[string]string
	hosts   []string
}

// load loads testdata/file on the engine and checks that its source runs.
func load(t *testing.T, file string, o loadOpts) (*sandbox.Plugin, *fakeHost, error) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := js.Config(file, src, o.config)
	if err != nil {
		t.Fatal(err)
	}
	h := &fakeHost{replies: o.replies}
	ctx := context.Background()
	p, err := sharedEngine(t).Load(ctx, strings.TrimSuffix(file, ".js"), js.Engine(), sandbox.Options{
		Limits:        o.limits,
		Grants:        sandbox.Grants{Config: cfg, AllowedHosts: o.hosts},
		HostFunctions: h.functions(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p, h, js.Check(ctx, p)
}

func loadOK(t *testing.T, file string, o loadOpts) (*sandbox.Plugin, *fakeHost) {
	t.Helper()
	p, h, err := load(t, file, o)
	if err != nil {
		t.Fatalf("loading %s: %v", file, err)
	}
	return p, h
}

// call runs export with input (encoded as JSON) and decodes the output.
func call[T any](t *testing.T, p *sandbox.Plugin, export string, input any) (T, error) {
	t.Helper()
	var out T
	in, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := p.Call(context.Background(), export, in)
	if err != nil {
		return out, err
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s output %s: %v", export, raw, err)
	}
	return out, nil
}

func mustCall[T any](t *testing.T, p *sandbox.Plugin, export string, input any) T {
	t.Helper()
	out, err := call[T](t, p, export, input)
	if err != nil {
		t.Fatalf("%s: %v", export, err)
	}
	return out
}

func callTool(t *testing.T, p *sandbox.Plugin, name string, args any) abi.CallToolResult {
	t.Helper()
	return mustCall[abi.CallToolResult](t, p, abi.ExportCallTool,
		map[string]any{"request": map[string]any{"name": name, "arguments": args}, "context": map[string]any{}})
}

func resultText(r abi.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if c.Type == abi.ContentText {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// abiError returns the abi.Error a failed export set.
func abiError(t *testing.T, err error) abi.Error {
	t.Helper()
	var ce *sandbox.CallError
	if !errors.As(err, &ce) || ce.Kind != sandbox.KindPlugin {
		t.Fatalf("want a plugin error, got %v", err)
	}
	var e abi.Error
	if jerr := json.Unmarshal([]byte(ce.Message), &e); jerr != nil {
		t.Fatalf("error %q is not an abi.Error: %v", ce.Message, jerr)
	}
	return e
}

func TestEngineModule(t *testing.T) {
	wasm := js.Engine()
	if len(wasm) > 2<<20 {
		t.Errorf("engine is %d bytes, want < 2 MiB", len(wasm))
	}
	info, err := sandbox.Inspect(wasm)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []string{abi.ExportListTools, abi.ExportCallTool, abi.ExportListPrompts, abi.ExportGetPrompt,
		abi.ExportListResources, abi.ExportListResourceTemplates, abi.ExportReadResource, abi.ExportComplete, "_initialize"} {
		if !info.HasExport(e) {
			t.Errorf("engine lacks export %s", e)
		}
	}
	if info.HasExport(abi.ExportV1Describe) || info.HasExport(abi.ExportV1Call) {
		t.Error("engine exports the v1 interface")
	}
	for _, name := range info.HostImports() {
		if _, known := abi.HostSignatureOf(name); !known {
			t.Errorf("engine imports unknown host function %s", name)
		}
	}
	if m, err := info.Manifest(); m != nil || err != nil {
		t.Errorf("engine has a manifest section (%v, %v): the .js file declares the manifest", m, err)
	}
	for name := range info.CustomSections {
		t.Errorf("engine has custom section %q; build.sh strips them", name)
	}
}

func TestManifest(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      *abi.Manifest
		err       string
	}{
		{"none", "mcphost.tool('x', 'x', () => 1);", nil, ""},
		{"other comment", "/* just a comment */\nlet x;", nil, ""},
		{"not first", "let x;\n/* mcphost.manifest {\"name\": \"n\"} */", nil, ""},
		{"plain", "/* mcphost.manifest\n{\"name\": \"n\", \"needs\": {\"config\": [\"k\"]}}\n*/\n",
			&abi.Manifest{ABI: 1, Name: "n", Needs: abi.Needs{Config: []string{"k"}}}, ""},
		{"after line comments and shebang", "#!/usr/bin/env mcphost\n// hello\n\n// more\n/** mcphost.manifest {\"version\": \"2\"} */",
			&abi.Manifest{ABI: 1, Version: "2"}, ""},
		{"explicit abi", "/* mcphost.manifest {\"abi\": 2} */", &abi.Manifest{ABI: 2}, ""},
		{"legal comment", "/*! mcphost.manifest {\"name\": \"x\"} */", &abi.Manifest{ABI: 1, Name: "x"}, ""},
		{"bad json", "/* mcphost.manifest {\"name\": } */", nil, "mcphost.manifest comment"},
		{"unknown field", "/* mcphost.manifest {\"needz\": {}} */", nil, "unknown field"},
		{"trailing text", "/* mcphost.manifest {} {} */", nil, "text after"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := js.Manifest([]byte(tc.src))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(m)
			want, _ := json.Marshal(tc.want)
			if string(got) != string(want) {
				t.Errorf("manifest %s, want %s", got, want)
			}
		})
	}
}

func TestConfig(t *testing.T) {
	cfg, err := js.Config("a.js", []byte("1"), map[string]string{"k": "v"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg["k"] != "v" || cfg[js.SourceKey] != "1" || cfg[js.FilenameKey] != "a.js" {
		t.Errorf("config %v", cfg)
	}
	if _, err := js.Config("a.js", []byte("1"), map[string]string{js.SourceKey: "x"}); err == nil {
		t.Error("operator config may not set the reserved source key")
	}
	if _, err := js.Config("a.js", []byte{0xff, 0xfe}, nil); err == nil {
		t.Error("a source that is not UTF-8 is accepted")
	}
	if _, err := js.Config("a.js", make([]byte, js.MaxSourceBytes+1), nil); err == nil {
		t.Error("an oversized source is accepted")
	}
}

func TestTools(t *testing.T) {
	p, _ := loadOK(t, "full.js", loadOpts{config: map[string]string{"greeting": "Bonjour"}})

	list := mustCall[abi.ListToolsResult](t, p, abi.ExportListTools, map[string]any{"context": map[string]any{}})
	var add *abi.Tool
	for i, tool := range list.Tools {
		if tool.Name == "add" {
			add = &list.Tools[i]
		}
		if tool.Name == "task_tool" && (tool.Execution == nil || tool.Execution.TaskSupport != "optional") {
			t.Errorf("task_tool execution %+v", tool.Execution)
		}
		if tool.Name == "greet" && string(tool.InputSchema) != `{"type":"object"}` {
			t.Errorf("greet inputSchema %s, want the default", tool.InputSchema)
		}
	}
	if add == nil {
		t.Fatalf("no tool add in %+v", list.Tools)
	}
	if add.Title != "Add" || add.Description != "Adds two numbers." || add.Annotations == nil ||
		add.Annotations.ReadOnlyHint == nil || !*add.Annotations.ReadOnlyHint ||
		!strings.Contains(string(add.InputSchema), `"required":["a","b"]`) ||
		!strings.Contains(string(add.OutputSchema), `"sum"`) {
		t.Errorf("add listed as %+v (input %s, output %s)", add, add.InputSchema, add.OutputSchema)
	}

	for _, tc := range []struct {
		tool       string
		args       any
		text       string
		isError    bool
		structured string
	}{
		{tool: "add", args: map[string]any{"a": 2, "b": 3.5}, text: `{"sum":5.5}`, structured: `{"sum":5.5}`},
		{tool: "greet", args: map[string]any{"name": "Ada"}, text: "Bonjour, Ada!"},
		{tool: "mcp_result", text: "raw"},
		{tool: "fail", text: "it broke", isError: true},
		{tool: "fail_later", text: "SyntaxError: expecting property name", isError: true},
		{tool: "error_result", text: "bad input", isError: true},
		{tool: "async", args: map[string]any{"n": 21}, text: `{"doubled":42}`, structured: `{"doubled":42}`},
		{tool: "async_fail", text: "TypeError: async broke", isError: true},
		{tool: "number", text: "42"},
		{tool: "nothing", text: ""},
		{tool: "echo", args: map[string]any{"x": []any{1, "y"}}, text: `{"x":[1,"y"]}`, structured: `{"x":[1,"y"]}`},
		{tool: "selftest", text: "ok"},
		{tool: "recurse", text: "InternalError: stack overflow", isError: true},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			r := callTool(t, p, tc.tool, tc.args)
			if got := resultText(r); r.IsError != tc.isError || !strings.Contains(got, tc.text) || (tc.text == "" && got != "") {
				t.Errorf("%s: isError=%v text %q; want isError=%v text containing %q", tc.tool, r.IsError, got, tc.isError, tc.text)
			}
			got, _ := json.Marshal(r.StructuredContent)
			if tc.structured != "" && string(got) != tc.structured {
				t.Errorf("%s: structuredContent %s, want %s", tc.tool, got, tc.structured)
			}
			if tc.structured == "" && r.StructuredContent != nil {
				t.Errorf("%s: unexpected structuredContent %s", tc.tool, got)
			}
		})
	}

	r := callTool(t, p, "content", nil)
	if len(r.Content) != 3 || r.Content[0].Text != "one" || r.Content[1].Type != "image" || r.Content[1].Data != "AQID" ||
		r.Content[1].MimeType != "image/png" || r.Content[2].Type != "resource_link" || r.Content[2].URI != "test://a" {
		t.Errorf("content: %+v", r.Content)
	}
	if r := callTool(t, p, "mcp_result", nil); r.Meta["x"] != float64(1) {
		t.Errorf("mcp_result _meta %v", r.Meta)
	}

	_, err := call[abi.CallToolResult](t, p, abi.ExportCallTool, map[string]any{"request": map[string]any{"name": "protocol_error"}})
	if e := abiError(t, err); e.Code != abi.CodeInvalidParams || e.Message != "no such thing" {
		t.Errorf("protocol_error: %+v", e)
	}
	_, err = call[abi.CallToolResult](t, p, abi.ExportCallTool, map[string]any{"request": map[string]any{"name": "nope"}})
	if e := abiError(t, err); e.Code != abi.CodeInvalidParams || !strings.Contains(e.Message, "unknown tool") {
		t.Errorf("unknown tool: %+v", e)
	}
	_, err = call[abi.CallToolResult](t, p, abi.ExportCallTool, map[string]any{"request": map[string]any{"name": "never"}})
	if e := abiError(t, err); e.Code != abi.CodeInternalError || !strings.Contains(e.Message, "never settled") {
		t.Errorf("never: %+v", e)
	}
	if _, err := p.Call(context.Background(), abi.ExportCallTool, []byte("{not json")); err == nil || abiError(t, err).Code != abi.CodeInvalidParams {
		t.Errorf("malformed input: %v", err)
	}
}

func TestPrompts(t *testing.T) {
	p, _ := loadOK(t, "full.js", loadOpts{})
	list := mustCall[abi.ListPromptsResult](t, p, abi.ExportListPrompts, map[string]any{})
	if len(list.Prompts) != 3 || list.Prompts[0].Name != "summarise" || list.Prompts[0].Title != "Summarise" ||
		len(list.Prompts[0].Arguments) != 2 || !list.Prompts[0].Arguments[0].Required || list.Prompts[0].Arguments[1].Required {
		t.Fatalf("prompts %+v", list.Prompts)
	}
	get := func(name string, args map[string]string) (abi.GetPromptResult, error) {
		return call[abi.GetPromptResult](t, p, abi.ExportGetPrompt, map[string]any{"request": map[string]any{"name": name, "arguments": args}})
	}
	r, err := get("summarise", map[string]string{"text": "Long text.", "length": "long"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Description != "Summarise a text." || len(r.Messages) != 1 || r.Messages[0].Role != "user" ||
		r.Messages[0].Content.Text != "Summarise in a long paragraph:\n\nLong text." {
		t.Errorf("summarise: %+v", r)
	}
	if _, err := get("summarise", map[string]string{"text": "  "}); err == nil || abiError(t, err).Code != abi.CodeInvalidParams ||
		!strings.Contains(abiError(t, err).Message, `missing required argument "text"`) {
		t.Errorf("missing argument: %v", err)
	}
	if r, err := get("chat", nil); err != nil || len(r.Messages) != 2 || r.Messages[0].Content.Text != "first" || r.Messages[1].Role != "assistant" {
		t.Errorf("chat: %+v %v", r, err)
	}
	if r, err := get("explicit", nil); err != nil || r.Description != "custom" || len(r.Messages) != 1 {
		t.Errorf("explicit: %+v %v", r, err)
	}
	if _, err := get("nope", nil); err == nil || abiError(t, err).Code != abi.CodeInvalidParams {
		t.Errorf("unknown prompt: %v", err)
	}
}

func TestResources(t *testing.T) {
	p, _ := loadOK(t, "full.js", loadOpts{})
	list := mustCall[abi.ListResourcesResult](t, p, abi.ExportListResources, map[string]any{})
	var uris []string
	for _, r := range list.Resources {
		uris = append(uris, r.URI)
	}
	if !slices.Equal(uris, []string{"test://static", "test://bytes", "test://items/1"}) || list.Resources[2].Name != "item 1" {
		t.Errorf("resources %+v", list.Resources)
	}
	tmpls := mustCall[abi.ListResourceTemplatesResult](t, p, abi.ExportListResourceTemplates, map[string]any{})
	if len(tmpls.ResourceTemplates) != 2 || tmpls.ResourceTemplates[0].URITemplate != "test://items/{id}{?fields*}" {
		t.Errorf("templates %+v", tmpls.ResourceTemplates)
	}
	read := func(uri string) (abi.ReadResourceResult, error) {
		return call[abi.ReadResourceResult](t, p, abi.ExportReadResource, map[string]any{"request": map[string]any{"uri": uri}})
	}
	for _, tc := range []struct{ uri, mime, text, blob string }{
		{"test://static", "text/plain", "static text", ""},
		{"test://bytes", "application/octet-stream", "", "AAEC/w=="},
		{"test://items/7?fields=a&fields=b%20c", "application/json", `{"id":"7","fields":"a,b c"}`, ""},
		{"test://items/8", "application/json", `{"id":"8"}`, ""},
		{"file:///etc/hosts", "text/plain", "path=etc/hosts", ""},
	} {
		r, err := read(tc.uri)
		if err != nil {
			t.Errorf("%s: %v", tc.uri, err)
			continue
		}
		if len(r.Contents) != 1 || r.Contents[0].URI != tc.uri || r.Contents[0].MimeType != tc.mime ||
			r.Contents[0].Text != tc.text || r.Contents[0].Blob != tc.blob {
			t.Errorf("%s: %+v", tc.uri, r.Contents)
		}
	}
	for _, uri := range []string{"test://items/missing", "test://nothing"} {
		_, err := read(uri)
		if e := abiError(t, err); e.Code != abi.CodeResourceNotFound || !strings.Contains(string(e.Data), uri) {
			t.Errorf("%s: %+v", uri, e)
		}
	}
}

func TestCompletion(t *testing.T) {
	p, _ := loadOK(t, "full.js", loadOpts{})
	complete := func(ref map[string]any, arg, value string) (abi.CompleteResult, error) {
		return call[abi.CompleteResult](t, p, abi.ExportComplete, map[string]any{"request": map[string]any{
			"ref": ref, "argument": map[string]any{"name": arg, "value": value}}})
	}
	r, err := complete(map[string]any{"type": "prompt", "name": "summarise"}, "length", "m")
	if err != nil || !slices.Equal(r.Completion.Values, []string{"medium"}) || r.Completion.Total == nil || *r.Completion.Total != 1 {
		t.Errorf("length: %+v %v", r, err)
	}
	r, err = complete(map[string]any{"type": "ref/prompt", "name": "chat"}, "many", "")
	if err != nil || len(r.Completion.Values) != 100 || !r.Completion.HasMore || *r.Completion.Total != 150 {
		t.Errorf("many: %d values, hasMore %v, %v", len(r.Completion.Values), r.Completion.HasMore, err)
	}
	r, err = complete(map[string]any{"type": "resource", "uri": "test://items/{id}{?fields*}"}, "id", "1")
	if err != nil || !slices.Equal(r.Completion.Values, []string{"1", "10"}) {
		t.Errorf("id: %+v %v", r, err)
	}
	r, err = complete(map[string]any{"type": "prompt", "name": "summarise"}, "text", "")
	if err != nil || len(r.Completion.Values) != 0 {
		t.Errorf("no completer: %+v %v", r, err)
	}
	if _, err := complete(map[string]any{"type": "prompt", "name": "nope"}, "x", ""); err == nil || abiError(t, err).Code != abi.CodeInvalidParams {
		t.Errorf("unknown prompt: %v", err)
	}
}

func TestHostFunctions(t *testing.T) {
	p, h := loadOK(t, "full.js", loadOpts{replies: map[string]string{
		abi.HostCreateMessage:     `{"role":"assistant","content":{"type":"text","text":"hello there"},"model":"m1"}`,
		abi.HostCreateElicitation: `{"action":"accept","content":{"name":"Ada"}}`,
		abi.HostListRoots:         `{"roots":[{"uri":"file:///a"},{"uri":"file:///b","name":"b"}]}`,
		abi.HostRequestInput:      `{"inputResponses":{"user_name":{"action":"accept","content":{}},"client_roots":{"roots":[]}}}`,
	}})
	h.take()
	r := mustCall[abi.CallToolResult](t, p, abi.ExportCallTool, map[string]any{
		"request": map[string]any{"name": "progress"},
		"context": map[string]any{"id": 7, "_meta": map[string]any{"progressToken": "tok"}},
	})
	if resultText(r) != "token=tok id=7" {
		t.Errorf("progress result %q", resultText(r))
	}
	want := []hostCall{
		{abi.HostNotifyProgress, `{"progressToken":"tok","progress":1,"total":2,"message":"half"}`},
		{abi.HostNotifyProgress, `{"progressToken":"tok","progress":2,"total":2}`},
		{abi.HostNotifyLoggingMessage, `{"level":"warning","data":{"message":"careful","data":{"n":1}}}`},
		{abi.HostNotifyLoggingMessage, `{"level":"info","data":"plain"}`},
	}
	if got := h.take(); !slices.Equal(got, want) {
		t.Errorf("host calls\n got %v\nwant %v", got, want)
	}
	// Without a progress token, no progress.
	callTool(t, p, "progress", nil)
	for _, c := range h.take() {
		if c.name == abi.HostNotifyProgress {
			t.Errorf("progress without a token: %v", c)
		}
	}

	if got := resultText(callTool(t, p, "sample", nil)); got != "m1: hello there" {
		t.Errorf("sample: %q", got)
	}
	if c := h.take(); len(c) != 1 || c[0].name != abi.HostCreateMessage ||
		c[0].input != `{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}` {
		t.Errorf("create_message calls %v", c)
	}
	if got := resultText(callTool(t, p, "ask", nil)); got != "name=Ada" {
		t.Errorf("ask: %q", got)
	}
	if c := h.take(); len(c) != 1 || !strings.Contains(c[0].input, `"message":"Your name?","requestedSchema":{"type":"object"`) {
		t.Errorf("create_elicitation calls %v", c)
	}
	if got := resultText(callTool(t, p, "roots", nil)); got != "file:///a,file:///b" {
		t.Errorf("roots: %q", got)
	}
	if got := resultText(callTool(t, p, "notify", nil)); got != "sent" {
		t.Errorf("notify: %q", got)
	}
	if c := h.take(); !slices.Equal(c[1:], []hostCall{{abi.HostNotifyToolListChanged, ""}, {abi.HostNotifyResourceUpdated, `{"uri":"test://static"}`}}) {
		t.Errorf("notify calls %v", c)
	}

	r = mustCall[abi.CallToolResult](t, p, abi.ExportCallTool, map[string]any{
		"request": map[string]any{"name": "who"},
		"context": map[string]any{"id": 8, "protocolVersion": "2026-07-28", "clientCapabilities": map[string]any{"sampling": map[string]any{"tools": map[string]any{}}},
			"subject": "alice", "scopes": []string{"mcp", "notes:write"}},
	})
	if got := resultText(r); got != "2026-07-28 alice true true false" {
		t.Errorf("who: %q", got)
	}
	if got := resultText(callTool(t, p, "batch", nil)); got != "client_roots,user_name" {
		t.Errorf("batch: %q", got)
	}
	if c := h.take(); len(c) != 1 || c[0].name != abi.HostRequestInput || !strings.Contains(c[0].input, `"client_roots":{"method":"roots/list"}`) {
		t.Errorf("request_input calls %v", c)
	}

	p2, _ := loadOK(t, "full.js", loadOpts{replies: map[string]string{abi.HostListRoots: "error:no roots here"}})
	if got := resultText(callTool(t, p2, "host_error", nil)); got != "HostError list_roots -32602 true: list_roots: no roots here" {
		t.Errorf("host_error: %q", got)
	}
}

func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string
	}{
		{"syntax.js", []string{"loading the plugin failed: SyntaxError: ", "at syntax.js:4"}},
		{"throws.js", []string{"Error: settings.apiKey is not configured", "throws.js:2"}},
		{"badhandler.js", []string{"TypeError", "mcphost.tool x: the handler must be a function"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			_, _, err := load(t, tc.file, loadOpts{})
			if err == nil {
				t.Fatal("loaded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			t.Log(err)
		})
	}
	// A top level that never ends is stopped by the timeout.
	_, _, err := load(t, "spin_top.js", loadOpts{limits: sandbox.Limits{Timeout: 300 * time.Millisecond}})
	if !errors.Is(err, sandbox.ErrTimeout) || !strings.Contains(err.Error(), "loading the plugin failed") {
		t.Errorf("spin_top.js: %v", err)
	}
	// A plugin whose top level fails keeps failing with the same error.
	p, _, err := load(t, "throws.js", loadOpts{})
	if _, err2 := p.Call(context.Background(), abi.ExportListPrompts, []byte(`{}`)); err2 == nil || !strings.Contains(err2.Error(), "apiKey") {
		t.Errorf("second call: %v (first %v)", err2, err)
	}
	// Configured, it loads.
	loadOK(t, "throws.js", loadOpts{config: map[string]string{"settings": `{"apiKey":"k"}`}})
}

func TestLimits(t *testing.T) {
	// The timeout also bounds the next call, on a new instance: starting
	// the engine and the plugin took over 500 ms under -race on a loaded
	// 2-core machine.
	p, _ := loadOK(t, "full.js", loadOpts{limits: sandbox.Limits{Timeout: 3 * time.Second, MemoryMiB: 64}})
	start := time.Now()
	_, err := call[abi.CallToolResult](t, p, abi.ExportCallTool, map[string]any{"request": map[string]any{"name": "spin"}})
	if !errors.Is(err, sandbox.ErrTimeout) {
		t.Errorf("spin: %v, want a timeout", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("spin stopped after %s", d)
	}
	// The instance was replaced: the plugin still works.
	if r := callTool(t, p, "add", map[string]any{"a": 1, "b": 1}); resultText(r) != `{"sum":2}` {
		t.Errorf("after the timeout: %+v", r)
	}
	// Running out of memory is contained too: an error or a trap, never a hang.
	p, _ = loadOK(t, "full.js", loadOpts{limits: sandbox.Limits{Timeout: 20 * time.Second, MemoryMiB: 16}})
	r, err := call[abi.CallToolResult](t, p, abi.ExportCallTool, map[string]any{"request": map[string]any{"name": "hog"}})
	if err == nil && !r.IsError {
		t.Errorf("hog: %+v", r)
	}
	t.Logf("hog: %v %v", err, resultText(r))
	if r := callTool(t, p, "add", map[string]any{"a": 1, "b": 2}); resultText(r) != `{"sum":3}` {
		t.Errorf("after running out of memory: %+v", r)
	}
}

func TestFetch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"method": r.Method, "body": string(body), "x": r.Header.Get("X-Test")})
	}))
	defer srv.Close()
	p, _ := loadOK(t, "full.js", loadOpts{config: map[string]string{"url": srv.URL + "/echo"}, hosts: []string{"127.0.0.1:*"}})
	got := resultText(callTool(t, p, "fetch", map[string]any{"body": "héllo"}))
	if want := `200 true {"body":"héllo","method":"POST","x":"yes"}` + "\n POST"; got != want {
		t.Errorf("fetch: %q, want %q", got, want)
	}
	// A host not allowed is an error the plugin can catch, naming the
	// grant that would allow it.
	p2, _ := loadOK(t, "full.js", loadOpts{config: map[string]string{"url": srv.URL}})
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	want := "fallback: HTTP request to '" + srv.URL + "' is not allowed: host 127.0.0.1 is not in the allowed_hosts of plugin full" +
		` (add "127.0.0.1:` + port + `" to allowed_hosts in [plugins.full])`
	if got := resultText(callTool(t, p2, "fetchsafe", nil)); got != want {
		t.Errorf("fetch from a host not allowed: %q, want %q", got, want)
	}
	if got := resultText(callTool(t, p, "fetchsafe", nil)); !strings.HasPrefix(got, "200 {") {
		t.Errorf("fetchsafe from an allowed host: %q", got)
	}
	// Uncaught, the error fails the tool.
	if r, err := call[abi.CallToolResult](t, p2, abi.ExportCallTool, map[string]any{"request": map[string]any{"name": "fetch"}}); err == nil && !r.IsError {
		t.Errorf("fetch from a host not allowed: %+v", r)
	}
}
