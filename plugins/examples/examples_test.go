package examples_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	extism "github.com/extism/go-sdk"
	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/plugintest"
)

// The example plugins are built once per test run, with the flags of
// `make examples`, and run with the Extism Go SDK.

var examples = []string{"prompts", "files", "tools"}

// wasmPath builds an example (once per run) and returns its path, with its
// manifest embedded as `make examples` does.
func wasmPath(t *testing.T, name string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds WebAssembly plugins")
	}
	return plugintest.Build(t, "plugins/examples/"+name)
}

// load loads an example with manifest m and a fresh plugintest.Host.
func load(t *testing.T, name string, m extism.Manifest) *plugintest.Plugin {
	t.Helper()
	return plugintest.Load(t, wasmPath(t, name), m, nil)
}

// TestImportsMatchManifests checks that each example imports exactly the
// host functions its manifest declares.
func TestImportsMatchManifests(t *testing.T) {
	for _, name := range examples {
		imported, exports := plugintest.InspectWasm(t, wasmPath(t, name))
		m := plugintest.ReadManifest(t, filepath.Join(name, "manifest.json"))
		declared := slices.Sorted(slices.Values(m.Needs.HostFunctions))
		if !slices.Equal(imported, declared) {
			t.Errorf("%s imports %v from %s, manifest declares %v", name, imported, abi.HostModule, declared)
		}
		for _, e := range []string{"_initialize", abi.ExportListTools, abi.ExportCallTool, abi.ExportListPrompts, abi.ExportGetPrompt,
			abi.ExportListResources, abi.ExportListResourceTemplates, abi.ExportReadResource, abi.ExportComplete} {
			if !slices.Contains(exports, e) {
				t.Errorf("%s does not export %s", name, e)
			}
		}
		if m.ABI != abi.Version || m.Name != name {
			t.Errorf("%s manifest: abi %d name %q", name, m.ABI, m.Name)
		}
	}
}

func TestPromptsPlugin(t *testing.T) {
	p := load(t, "prompts", extism.Manifest{})

	var list abi.ListPromptsResult
	p.OK(abi.ExportListPrompts, abi.ListInput{}, &list)
	var names []string
	for _, pr := range list.Prompts {
		names = append(names, pr.Name)
	}
	if !slices.Equal(names, []string{"code_review", "git-commit", "explain-code"}) {
		t.Errorf("prompts = %v", names)
	}
	var tools abi.ListToolsResult
	p.OK(abi.ExportListTools, abi.ListInput{}, &tools)
	if tools.Tools == nil || len(tools.Tools) != 0 {
		t.Errorf("tools = %+v", tools)
	}

	var r abi.GetPromptResult
	p.OK(abi.ExportGetPrompt, plugintest.Input(abi.GetPromptParams{Name: "code_review", Arguments: map[string]string{
		"code": "def f(x):\n    return eval(x)\n", "language": "py", "focus": "security",
	}}, nil), &r)
	if len(r.Messages) != 1 || r.Messages[0].Role != "user" {
		t.Fatalf("code_review = %+v", r)
	}
	text := r.Messages[0].Content.Text
	for _, want := range []string{"the following Python code", "Concentrate on security", "```python\ndef f(x):\n    return eval(x)\n```"} {
		if !strings.Contains(text, want) {
			t.Errorf("code_review text lacks %q:\n%s", want, text)
		}
	}
	if r.Description != "Code review of Python code focusing on security" {
		t.Errorf("description %q", r.Description)
	}

	p.OK(abi.ExportGetPrompt, plugintest.Input(abi.GetPromptParams{Name: "git-commit", Arguments: map[string]string{
		"diff": "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",
	}}, nil), &r)
	if !strings.Contains(r.Messages[0].Content.Text, "Conventional Commits") || !strings.Contains(r.Messages[0].Content.Text, "```diff\n--- a/x") {
		t.Errorf("git-commit text:\n%s", r.Messages[0].Content.Text)
	}
	p.OK(abi.ExportGetPrompt, plugintest.Input(abi.GetPromptParams{Name: "explain-code", Arguments: map[string]string{
		"code": "fn main() {}", "language": "rs", "audience": "beginner",
	}}, nil), &r)
	if !strings.Contains(r.Messages[0].Content.Text, "Explain what this Rust code does") || r.Description != "Explanation of this Rust code for a beginner reader" {
		t.Errorf("explain-code: %q\n%s", r.Description, r.Messages[0].Content.Text)
	}

	e := p.Fail(abi.ExportGetPrompt, plugintest.Input(abi.GetPromptParams{Name: "code_review", Arguments: map[string]string{"language": "go"}}, nil))
	if e.Code != abi.CodeInvalidParams || !strings.Contains(e.Message, `"code"`) {
		t.Errorf("missing code: %+v", e)
	}
	e = p.Fail(abi.ExportGetPrompt, plugintest.Input(abi.GetPromptParams{Name: "git-commit", Arguments: map[string]string{"diff": "x", "style": "haiku"}}, nil))
	if e.Code != abi.CodeInvalidParams || !strings.Contains(e.Message, "haiku") {
		t.Errorf("bad style: %+v", e)
	}
	if e := p.Fail(abi.ExportGetPrompt, plugintest.Input(abi.GetPromptParams{Name: "nope"}, nil)); e.Code != abi.CodeInvalidParams {
		t.Errorf("unknown prompt: %+v", e)
	}

	complete := func(prompt, arg, value string) []string {
		var r abi.CompleteResult
		p.OK(abi.ExportComplete, plugintest.Input(abi.CompleteParams{
			Ref:      abi.CompleteRef{Type: abi.RefPrompt, Name: prompt},
			Argument: abi.CompleteArgument{Name: arg, Value: value},
		}, nil), &r)
		return r.Completion.Values
	}
	for value, want := range map[string]string{"py": "python", "js": "javascript", "ts": "typescript", "rs": "rust", "gol": "go", "C#": "csharp"} {
		if got := complete("code_review", "language", value); len(got) == 0 || got[0] != want {
			t.Errorf("language completion of %q = %v, want %s first", value, got, want)
		}
	}
	if got := complete("explain-code", "language", ""); len(got) < 30 {
		t.Errorf("all languages: %d values", len(got))
	}
	if got := complete("git-commit", "style", "c"); !slices.Equal(got, []string{"conventional"}) {
		t.Errorf("style completion = %v", got)
	}
	if got := complete("explain-code", "audience", "E"); !slices.Equal(got, []string{"expert"}) {
		t.Errorf("audience completion = %v", got)
	}
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFilesPlugin(t *testing.T) {
	tmp := t.TempDir()
	data := filepath.Join(tmp, "data")
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
	writeFiles(t, tmp, map[string]string{
		"outside.txt":             "not shared",
		"data/hello.txt":          "Hello, world\n",
		"data/docs/guide.md":      "# Guide\n",
		"data/img.png":            png,
		"data/.secret":            "hidden",
		"data/.git/config":        "hidden too",
		"data/sub dir/x y.json":   `{"ok":true}`,
		"data/noext":              "plain text without extension",
		"data/blob":               "\x00\x01\x02",
		"data/docs/deep/notes.go": "package notes\n",
	})
	if err := os.Symlink(filepath.Join(tmp, "outside.txt"), filepath.Join(data, "link.txt")); err != nil {
		t.Fatal(err)
	}
	p := load(t, "files", extism.Manifest{AllowedPaths: map[string]string{data: "/data"}})

	var list abi.ListResourcesResult
	p.OK(abi.ExportListResources, abi.ListInput{}, &list)
	got := map[string]string{}
	for _, r := range list.Resources {
		got[r.URI] = r.Name + "|" + r.MimeType
	}
	want := map[string]string{
		"file:///blob":                 "blob|",
		"file:///docs/deep/notes.go":   "docs/deep/notes.go|text/x-go",
		"file:///docs/guide.md":        "docs/guide.md|text/markdown",
		"file:///hello.txt":            "hello.txt|text/plain",
		"file:///img.png":              "img.png|image/png",
		"file:///noext":                "noext|",
		"file:///sub%20dir/x%20y.json": "sub dir/x y.json|application/json",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("list_resources\n got %v\nwant %v", got, want)
	}
	if list.Resources[0].Size == nil {
		t.Errorf("resource without size: %+v", list.Resources[0])
	}

	var templates abi.ListResourceTemplatesResult
	p.OK(abi.ExportListResourceTemplates, abi.ListInput{}, &templates)
	if len(templates.ResourceTemplates) != 1 || templates.ResourceTemplates[0].URITemplate != "file:///{+path}" {
		t.Errorf("templates = %+v", templates)
	}

	read := p.ReadResource
	p.Host.Reset()
	if c := read("file:///hello.txt"); c.Text != "Hello, world\n" || c.MimeType != "text/plain" || c.URI != "file:///hello.txt" {
		t.Errorf("hello.txt = %+v", c)
	}
	logs := p.Host.Calls(abi.HostNotifyLoggingMessage)
	if len(logs) != 1 || logs[0].Input != `{"level":"debug","data":{"data":{"bytes":13,"mimeType":"text/plain","text":true},"message":"read hello.txt"}}` {
		t.Errorf("log calls = %v", logs)
	}
	if c := read("file:///img.png"); c.Blob != base64.StdEncoding.EncodeToString([]byte(png)) || c.MimeType != "image/png" || c.Text != "" {
		t.Errorf("img.png = %+v", c)
	}
	if c := read("file:///sub%20dir/x%20y.json"); c.Text != `{"ok":true}` || c.MimeType != "application/json" {
		t.Errorf("x y.json = %+v", c)
	}
	if c := read("file:///noext"); c.Text == "" || c.MimeType != "text/plain" {
		t.Errorf("noext = %+v", c)
	}
	if c := read("file:///blob"); c.Blob != "AAEC" || c.MimeType != "application/octet-stream" {
		t.Errorf("blob = %+v", c)
	}
	if c := read("file:///docs"); c.Text != "deep/\nguide.md\n" {
		t.Errorf("docs listing = %+v", c)
	}
	for uri, code := range map[string]int{
		"file:///../outside.txt":             abi.CodeInvalidParams,
		"file:///docs/../../outside.txt":     abi.CodeInvalidParams,
		"file:///docs/%2E%2E/../outside.txt": abi.CodeInvalidParams,
		"file:///.secret":                    abi.CodeInvalidParams,
		"file:///.git/config":                abi.CodeInvalidParams,
		"file:///link.txt":                   abi.CodeInvalidParams,
		"file:///missing.txt":                abi.CodeResourceNotFound,
		"http://example.com/hello.txt":       abi.CodeResourceNotFound,
	} {
		if e := p.Fail(abi.ExportReadResource, plugintest.Input(abi.ReadResourceParams{URI: uri}, nil)); e.Code != code {
			t.Errorf("%s: error %+v, want code %d", uri, e, code)
		}
	}

	complete := func(value string) []string {
		var r abi.CompleteResult
		p.OK(abi.ExportComplete, plugintest.Input(abi.CompleteParams{
			Ref:      abi.CompleteRef{Type: abi.RefResource, URI: "file:///{+path}"},
			Argument: abi.CompleteArgument{Name: "path", Value: value},
		}, nil), &r)
		return r.Completion.Values
	}
	for value, want := range map[string][]string{
		"do":         {"docs/"},
		"docs/":      {"docs/deep/", "docs/guide.md"},
		"docs/G":     {"docs/guide.md"},
		"":           {"blob", "docs/", "hello.txt", "img.png", "noext", "sub dir/"},
		"../":        {},
		"nothing/x":  {},
		"sub dir/x ": {"sub dir/x y.json"},
	} {
		if got := complete(value); !slices.Equal(got, want) {
			t.Errorf("path completion of %q = %q, want %q", value, got, want)
		}
	}

	// The operator can lower the size limit through configuration.
	small := load(t, "files", extism.Manifest{AllowedPaths: map[string]string{data: "/data"}, Config: map[string]string{"max_file_bytes": "5"}})
	if e := small.Fail(abi.ExportReadResource, plugintest.Input(abi.ReadResourceParams{URI: "file:///hello.txt"}, nil)); e.Code != abi.CodeInvalidParams || !strings.Contains(e.Message, "limit of 5") {
		t.Errorf("size limit: %+v", e)
	}
	// Without a mount the plugin lists nothing and reports why.
	bare := load(t, "files", extism.Manifest{})
	p.OK(abi.ExportListResources, abi.ListInput{}, &list)
	bare.OK(abi.ExportListResources, abi.ListInput{}, &list)
	if len(list.Resources) != 0 || len(bare.Host.Calls(abi.HostNotifyLoggingMessage)) != 1 {
		t.Errorf("unmounted: %+v, logs %v", list, bare.Host.AllCalls())
	}
}

func TestToolsPlugin(t *testing.T) {
	p := load(t, "tools", extism.Manifest{})

	tools, callTool := toolCaller(t, p)
	for name, tool := range tools {
		if tool.OutputSchema == nil {
			t.Errorf("%s has no output schema", name)
		}
	}
	if len(tools) != 5 {
		t.Fatalf("tools: %v", tools)
	}
	if !strings.Contains(string(tools["hash"].InputSchema), `"enum":["sha256","sha512","sha1","md5"]`) {
		t.Errorf("hash input schema %s", tools["hash"].InputSchema)
	}
	if a := tools["text_stats"].Annotations; a == nil || a.ReadOnlyHint == nil || !*a.ReadOnlyHint || tools["text_stats"].Title != "Text statistics" {
		t.Errorf("text_stats annotations %+v", a)
	}

	// call runs a tool (toolCaller checks its structured output against the
	// declared output schema) and checks that its text content says the same.
	call := func(name string, args string, meta map[string]any) abi.CallToolResult {
		t.Helper()
		r := callTool(name, args, meta)
		if r.IsError {
			return r
		}
		raw, _ := json.Marshal(r.StructuredContent)
		var fromText any
		if len(r.Content) != 1 || json.Unmarshal([]byte(r.Content[0].Text), &fromText) != nil || !reflect.DeepEqual(fromText, r.StructuredContent) {
			t.Errorf("%s text content %+v differs from %s", name, r.Content, raw)
		}
		return r
	}
	structured := func(r abi.CallToolResult, v any) {
		t.Helper()
		raw, _ := json.Marshal(r.StructuredContent)
		if err := json.Unmarshal(raw, v); err != nil {
			t.Fatal(err)
		}
	}

	var stats struct {
		Lines, Words, UniqueWords, Characters, Bytes, Sentences int
		AverageWordLength                                       float64 `json:"average_word_length"`
		TopWords                                                []struct {
			Word  string
			Count int
		} `json:"top_words"`
		Unique int `json:"unique_words"`
	}
	structured(call("text_stats", `{"text":"The cat saw the hat. The end!\nÉté is here","top":2}`, nil), &stats)
	if stats.Lines != 2 || stats.Words != 10 || stats.Unique != 8 || stats.Sentences != 3 || stats.Characters != 41 || stats.Bytes != 43 ||
		len(stats.TopWords) != 2 || stats.TopWords[0].Word != "the" || stats.TopWords[0].Count != 3 || stats.AverageWordLength != 3 {
		t.Errorf("text_stats = %+v", stats)
	}
	structured(call("text_stats", `{"text":"the the cat","ignore_stopwords":true}`, nil), &stats)
	if len(stats.TopWords) != 1 || stats.TopWords[0].Word != "cat" {
		t.Errorf("text_stats without stopwords = %+v", stats.TopWords)
	}

	var digest struct {
		Algorithm, Encoding, Digest string
		Bits                        int
		Insecure                    bool
	}
	structured(call("hash", `{"text":"abc"}`, nil), &digest)
	if digest.Digest != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" || digest.Algorithm != "sha256" || digest.Bits != 256 {
		t.Errorf("sha256 = %+v", digest)
	}
	structured(call("hash", `{"text":"abc","algorithm":"md5","encoding":"base64"}`, nil), &digest)
	if digest.Digest != "kAFQmDzST7DWlj99KOF/cg==" || !digest.Insecure {
		t.Errorf("md5 = %+v", digest)
	}
	if r := call("hash", `{"text":"abc","algorithm":"sha3"}`, nil); !r.IsError || !strings.Contains(r.Content[0].Text, `"algorithm": must be one of "sha256", "sha512", "sha1", "md5"`) {
		t.Errorf("bad algorithm = %+v", r)
	}
	if r := call("hash", `{}`, nil); !r.IsError || !strings.Contains(r.Content[0].Text, `missing required argument "text"`) {
		t.Errorf("missing text = %+v", r)
	}

	doc := `{"items":[{"name":"a","tags":["x"]},{"name":"b"}],"a.b":{"c":1.5},"n":null}`
	for path, want := range map[string]string{
		"items[1].name":    `{"found":true,"value":"b","type":"string"}`,
		"/items/0/tags/0":  `{"found":true,"value":"x","type":"string"}`,
		"items[-1]":        `{"found":true,"value":{"name":"b"},"type":"object"}`,
		`["a.b"].c`:        `{"found":true,"value":1.5,"type":"number"}`,
		"n":                `{"found":true,"value":null,"type":"null"}`,
		"":                 ``,
		"items[5].name":    `{"found":false,"value":null,"missing":"5"}`,
		"items.0.nickname": `{"found":false,"value":null,"missing":"nickname"}`,
	} {
		args, _ := json.Marshal(map[string]string{"document": doc, "path": path})
		r := call("json_query", string(args), nil)
		raw, _ := json.Marshal(r.StructuredContent)
		if want == "" {
			if !strings.Contains(string(raw), `"found":true`) || !strings.Contains(string(raw), `"type":"object"`) {
				t.Errorf("json_query whole document = %s", raw)
			}
			continue
		}
		var gotV, wantV any
		json.Unmarshal(raw, &gotV)
		json.Unmarshal([]byte(want), &wantV)
		if fmt.Sprint(gotV) != fmt.Sprint(wantV) {
			t.Errorf("json_query %q = %s, want %s", path, raw, want)
		}
	}
	if r := call("json_query", `{"document":"{bad","path":"a"}`, nil); !r.IsError || !strings.Contains(r.Content[0].Text, "not valid JSON") {
		t.Errorf("bad document = %+v", r)
	}

	var ids struct {
		Version int
		UUIDs   []string
	}
	structured(call("uuid", `{"count":3,"version":7}`, nil), &ids)
	v7 := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	if len(ids.UUIDs) != 3 || ids.UUIDs[0] == ids.UUIDs[1] {
		t.Errorf("uuids = %v", ids.UUIDs)
	}
	for _, u := range ids.UUIDs {
		if !v7.MatchString(u) {
			t.Errorf("%s is not a version 7 UUID", u)
		}
	}
	structured(call("uuid", `{}`, nil), &ids)
	if len(ids.UUIDs) != 1 || ids.UUIDs[0][14] != '4' {
		t.Errorf("default uuid = %v", ids.UUIDs)
	}

	// count_primes reports progress when the request has a token.
	p.Host.Reset()
	var primes struct{ Limit, Count, Largest int }
	structured(call("count_primes", `{"limit":1000000}`, map[string]any{"progressToken": "p1"}), &primes)
	if primes.Count != 78498 || primes.Largest != 999983 {
		t.Errorf("count_primes = %+v", primes)
	}
	progress := p.Host.Calls(abi.HostNotifyProgress)
	if len(progress) < 3 || len(progress) > 21 {
		t.Fatalf("%d progress notifications", len(progress))
	}
	last := -1.0
	for _, c := range progress {
		var pp abi.ProgressParams
		if err := json.Unmarshal([]byte(c.Input), &pp); err != nil {
			t.Fatal(err)
		}
		if pp.ProgressToken != "p1" || pp.Total == nil || *pp.Total != 1000000 || pp.Progress <= last || pp.Message == "" {
			t.Errorf("progress %s", c.Input)
		}
		last = pp.Progress
	}
	if last != 1000000 {
		t.Errorf("last progress %v", last)
	}
	p.Host.Reset()
	structured(call("count_primes", `{"limit":2}`, nil), &primes)
	if primes.Count != 1 || primes.Largest != 2 || len(p.Host.Calls(abi.HostNotifyProgress)) != 0 {
		t.Errorf("count_primes(2) = %+v, progress %v", primes, p.Host.AllCalls())
	}
	if r := call("count_primes", `{"limit":1}`, nil); !r.IsError {
		t.Errorf("count_primes(1) = %+v", r)
	}

	// Protocol errors.
	if e := p.Fail(abi.ExportCallTool, plugintest.Input(abi.CallToolParams{Name: "nope"}, nil)); e.Code != abi.CodeInvalidParams || e.Message != `unknown tool: "nope"` {
		t.Errorf("unknown tool: %+v", e)
	}
	if e := p.Fail(abi.ExportCallTool, `{"request":`); e.Code != abi.CodeInvalidParams {
		t.Errorf("invalid input: %+v", e)
	}
}
