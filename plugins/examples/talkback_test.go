package examples_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	extism "github.com/extism/go-sdk"
	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/plugintest"
)

// Tests of the examples that talk back to the client (summarize, notes,
// jobs), run with the Extism Go SDK and a fake host that answers the host
// functions with canned replies. The end-to-end tests through a real
// server and client are in internal/testrig/e2e/talkback_test.go.

var talkbackExamples = []string{"summarize", "notes", "jobs"}

// TestTalkbackImportsMatchManifests checks that each example imports
// exactly the host functions its manifest declares.
func TestTalkbackImportsMatchManifests(t *testing.T) {
	saved := examples
	examples = talkbackExamples
	defer func() { examples = saved }()
	TestImportsMatchManifests(t)
}

// toolCaller lists a plugin's tools and returns a function that calls one.
func toolCaller(t *testing.T, p *plugintest.Plugin) (map[string]abi.Tool, func(name, args string, meta map[string]any) abi.CallToolResult) {
	var list abi.ListToolsResult
	p.OK(abi.ExportListTools, abi.ListInput{}, &list)
	tools := map[string]abi.Tool{}
	for _, tool := range list.Tools {
		tools[tool.Name] = tool
		plugintest.CompileSchema(t, tool.InputSchema)
	}
	return tools, func(name, args string, meta map[string]any) abi.CallToolResult {
		t.Helper()
		r := p.CallTool(name, args, meta)
		if !r.IsError && tools[name].OutputSchema != nil {
			raw, _ := json.Marshal(r.StructuredContent)
			v, err := jsonschemaValue(raw)
			if err != nil {
				t.Fatal(err)
			}
			if err := plugintest.CompileSchema(t, tools[name].OutputSchema).Validate(v); err != nil {
				t.Errorf("%s structured output %s does not match its schema: %v", name, raw, err)
			}
		}
		return r
	}
}

func jsonschemaValue(raw []byte) (any, error) {
	var v any
	d := json.NewDecoder(strings.NewReader(string(raw)))
	d.UseNumber()
	return v, d.Decode(&v)
}

func structuredAs(t *testing.T, r abi.CallToolResult, v any) {
	t.Helper()
	if r.IsError {
		t.Fatalf("tool error: %+v", r.Content)
	}
	raw, _ := json.Marshal(r.StructuredContent)
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatal(err)
	}
}

func TestSummarizePlugin(t *testing.T) {
	p := load(t, "summarize", extism.Manifest{})
	tools, call := toolCaller(t, p)
	if tool := tools["summarize"]; len(tools) != 1 || tool.OutputSchema == nil || tool.Annotations == nil || !*tool.Annotations.ReadOnlyHint {
		t.Fatalf("tools = %+v", tools)
	}

	p.Host.Answer(abi.HostCreateMessage, `{"role":"assistant","content":{"type":"text","text":"  Cats sleep a lot.  "},"model":"test-model","stopReason":"endTurn"}`)
	var s struct {
		Summary, Style, Model string
		Words                 int
		Truncated             bool
	}
	structuredAs(t, call("summarize", `{"text":"Cats sleep sixteen hours a day.","style":"bullets","max_words":20}`, nil), &s)
	if s.Summary != "Cats sleep a lot." || s.Style != "bullets" || s.Model != "test-model" || s.Words != 4 || s.Truncated {
		t.Errorf("summary = %+v", s)
	}
	calls := p.Host.Calls(abi.HostCreateMessage)
	if len(calls) != 1 {
		t.Fatalf("create_message calls: %v", calls)
	}
	var sent struct {
		Messages []struct {
			Role    string
			Content abi.Content
		}
		SystemPrompt     string
		ModelPreferences struct {
			Hints                                             []struct{ Name string }
			CostPriority, SpeedPriority, IntelligencePriority float64
		}
		MaxTokens   int
		Temperature float64
	}
	if err := json.Unmarshal([]byte(calls[0].Input), &sent); err != nil {
		t.Fatal(err)
	}
	if len(sent.Messages) != 1 || sent.Messages[0].Role != "user" || !strings.Contains(sent.Messages[0].Content.Text, "Cats sleep sixteen hours a day.") ||
		!strings.Contains(sent.Messages[0].Content.Text, "bulleted list") || !strings.Contains(sent.Messages[0].Content.Text, "at most 20 words") {
		t.Errorf("messages = %+v", sent.Messages)
	}
	if !strings.Contains(sent.SystemPrompt, "summar") || len(sent.ModelPreferences.Hints) == 0 || sent.ModelPreferences.SpeedPriority == 0 ||
		sent.MaxTokens != 2*20+64 || sent.Temperature != 0.2 {
		t.Errorf("request = %s", calls[0].Input)
	}

	// A reply over the word limit is cut; the defaults apply.
	p.Host.Answer(abi.HostCreateMessage, `{"role":"assistant","content":[{"type":"text","text":"one two three\nfour five six seven"}],"model":"m"}`)
	structuredAs(t, call("summarize", `{"text":"x","max_words":5}`, nil), &s)
	if s.Summary != "one two three\nfour five …" || s.Words != 5 || !s.Truncated || s.Style != "paragraph" {
		t.Errorf("cut summary = %+v", s)
	}

	// The host's error (here: the client cannot sample) becomes a tool error.
	p.Host.Answer(abi.HostCreateMessage, `{"error":{"code":-32603,"message":"the client cannot serve this: the client did not declare the sampling capability"}}`)
	r := call("summarize", `{"text":"abc"}`, nil)
	if !r.IsError || !strings.Contains(r.Content[0].Text, "sampling") || !strings.Contains(r.Content[0].Text, "did not declare the sampling capability") {
		t.Errorf("without sampling: %+v", r)
	}
	if r := call("summarize", `{"text":"   "}`, nil); !r.IsError || !strings.Contains(r.Content[0].Text, "blank") {
		t.Errorf("blank text: %+v", r)
	}
}

func TestNotesPlugin(t *testing.T) {
	dir := t.TempDir()
	p := load(t, "notes", extism.Manifest{AllowedPaths: map[string]string{dir: "/notes"}})
	tools, call := toolCaller(t, p)
	for _, name := range []string{"add_note", "list_notes", "read_note", "delete_note", "roots"} {
		if _, ok := tools[name]; !ok {
			t.Errorf("no tool %s in %v", name, tools)
		}
	}
	if a := tools["delete_note"].Annotations; a == nil || a.DestructiveHint == nil || !*a.DestructiveHint {
		t.Errorf("delete_note annotations %+v", a)
	}

	type note struct {
		Name, Title, URI string
		Bytes            int64
		Replaced         bool
	}
	var n note
	structuredAs(t, call("add_note", `{"title":"Groceries: Friday!","text":"- milk\n- bread"}`, nil), &n)
	if n.Name != "groceries-friday" || n.URI != "note:///groceries-friday" || n.Replaced {
		t.Errorf("added %+v", n)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "groceries-friday.md")); err != nil || string(b) != "# Groceries: Friday!\n\n- milk\n- bread\n" {
		t.Errorf("file: %q %v", b, err)
	}
	if logs := p.Host.Calls(abi.HostNotifyLoggingMessage); len(logs) != 1 || !strings.Contains(logs[0].Input, `note \"groceries-friday\" added`) {
		t.Errorf("logs %v", logs)
	}
	if up := p.Host.Calls(abi.HostNotifyResourceUpdated); len(up) != 1 || up[0].Input != `{"uri":"note:///groceries-friday"}` {
		t.Errorf("resource updated calls %v", up)
	}
	if lc := p.Host.Calls(abi.HostNotifyResourceListChanged); len(lc) != 1 {
		t.Errorf("list changed calls %v", lc)
	}
	if r := call("add_note", `{"title":"Groceries","text":"x","name":"groceries-friday"}`, nil); !r.IsError || !strings.Contains(r.Content[0].Text, "replace=true") {
		t.Errorf("overwrite without replace: %+v", r)
	}
	p.Host.Reset()
	structuredAs(t, call("add_note", `{"title":"Groceries","text":"- eggs","name":"groceries-friday","replace":true}`, nil), &n)
	if !n.Replaced || n.Title != "Groceries" {
		t.Errorf("replaced %+v", n)
	}
	if len(p.Host.Calls(abi.HostNotifyResourceUpdated)) != 1 || len(p.Host.Calls(abi.HostNotifyResourceListChanged)) != 0 {
		t.Errorf("replace notifications %v", p.Host.AllCalls())
	}
	if r := call("add_note", `{"title":"x","text":"y","name":"Bad Name"}`, nil); !r.IsError {
		t.Errorf("bad name accepted: %+v", r)
	}
	structuredAs(t, call("add_note", `{"title":"Ideas","text":"world peace"}`, nil), &n)
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("store holds %d files (temporaries left?)", len(entries))
	}

	var list struct{ Notes []note }
	structuredAs(t, call("list_notes", `{}`, nil), &list)
	if len(list.Notes) != 2 || list.Notes[0].Name != "groceries-friday" || list.Notes[1].Title != "Ideas" {
		t.Errorf("list = %+v", list)
	}
	if r := call("read_note", `{"name":"ideas"}`, nil); r.IsError || r.Content[0].Text != "# Ideas\n\nworld peace\n" {
		t.Errorf("read_note = %+v", r)
	}

	// Resources.
	var resources abi.ListResourcesResult
	p.OK(abi.ExportListResources, abi.ListInput{}, &resources)
	if len(resources.Resources) != 2 || resources.Resources[1].URI != "note:///ideas" || resources.Resources[1].Title != "Ideas" || resources.Resources[1].MimeType != "text/markdown" {
		t.Errorf("resources = %+v", resources)
	}
	var read abi.ReadResourceResult
	p.OK(abi.ExportReadResource, plugintest.Input(abi.ReadResourceParams{URI: "note:///ideas"}, nil), &read)
	if len(read.Contents) != 1 || read.Contents[0].Text != "# Ideas\n\nworld peace\n" {
		t.Errorf("read = %+v", read)
	}
	for _, uri := range []string{"note:///missing", "note:///..", "note:///UPPER"} {
		if e := p.Fail(abi.ExportReadResource, plugintest.Input(abi.ReadResourceParams{URI: uri}, nil)); e.Code != abi.CodeResourceNotFound {
			t.Errorf("%s: %+v", uri, e)
		}
	}
	var completion abi.CompleteResult
	p.OK(abi.ExportComplete, plugintest.Input(abi.CompleteParams{
		Ref: abi.CompleteRef{Type: abi.RefResource, URI: "note:///{name}"}, Argument: abi.CompleteArgument{Name: "name", Value: "gro"},
	}, nil), &completion)
	if !slices.Equal(completion.Completion.Values, []string{"groceries-friday"}) {
		t.Errorf("completion = %+v", completion)
	}

	// Deletion: only accept + confirm deletes.
	var del struct {
		Name, Title, Outcome string
		Deleted              bool
	}
	for reply, outcome := range map[string]string{
		`{"action":"decline"}`:                            "declined",
		`{"action":"cancel"}`:                             "cancelled",
		`{"action":"accept","content":{"confirm":false}}`: "not confirmed",
	} {
		p.Host.Answer(abi.HostCreateElicitation, reply)
		structuredAs(t, call("delete_note", `{"name":"ideas"}`, nil), &del)
		if del.Deleted || del.Outcome != outcome {
			t.Errorf("%s: %+v", reply, del)
		}
		if _, err := os.Stat(filepath.Join(dir, "ideas.md")); err != nil {
			t.Fatalf("%s deleted the note: %v", reply, err)
		}
	}
	p.Host.Answer(abi.HostCreateElicitation, "") // the fake host's error: not available
	if r := call("delete_note", `{"name":"ideas"}`, nil); !r.IsError || !strings.Contains(r.Content[0].Text, "NOT deleted") || !strings.Contains(r.Content[0].Text, "elicitation") {
		t.Errorf("without elicitation: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "ideas.md")); err != nil {
		t.Fatalf("deleted without confirmation: %v", err)
	}
	p.Host.Reset()
	p.Host.Answer(abi.HostCreateElicitation, `{"action":"accept","content":{"confirm":true}}`)
	structuredAs(t, call("delete_note", `{"name":"ideas"}`, nil), &del)
	if !del.Deleted || del.Outcome != "deleted" || del.Title != "Ideas" {
		t.Errorf("confirmed delete: %+v", del)
	}
	if _, err := os.Stat(filepath.Join(dir, "ideas.md")); !os.IsNotExist(err) {
		t.Errorf("note still there: %v", err)
	}
	el := p.Host.Calls(abi.HostCreateElicitation)
	if len(el) != 1 || !strings.Contains(el[0].Input, `Delete the note \"Ideas\"`) ||
		!strings.Contains(el[0].Input, `"requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean"`) {
		t.Errorf("elicitation request %v", el)
	}
	if up := p.Host.Calls(abi.HostNotifyResourceUpdated); len(up) != 1 || up[0].Input != `{"uri":"note:///ideas"}` {
		t.Errorf("updated after delete %v", up)
	}
	if r := call("delete_note", `{"name":"ideas"}`, nil); !r.IsError || !strings.Contains(r.Content[0].Text, "no note named") {
		t.Errorf("deleting a missing note: %+v", r)
	}

	// Roots.
	p.Host.Answer(abi.HostListRoots, `{"roots":[{"uri":"file:///home/me/project","name":"project"}]}`)
	var roots struct{ Roots []struct{ URI, Name string } }
	structuredAs(t, call("roots", `{}`, nil), &roots)
	if len(roots.Roots) != 1 || roots.Roots[0].URI != "file:///home/me/project" || roots.Roots[0].Name != "project" {
		t.Errorf("roots = %+v", roots)
	}
	p.Host.Answer(abi.HostListRoots, "")
	if r := call("roots", `{}`, nil); !r.IsError || !strings.Contains(r.Content[0].Text, "roots") {
		t.Errorf("roots unavailable: %+v", r)
	}

	// Without the mount the tools say what the operator must do.
	bare := load(t, "notes", extism.Manifest{})
	_, bareCall := toolCaller(t, bare)
	if r := bareCall("list_notes", `{}`, nil); !r.IsError || !strings.Contains(r.Content[0].Text, "mount") {
		t.Errorf("unmounted list_notes: %+v", r)
	}
	for name, args := range map[string]string{"add_note": `{"title":"a","text":"b"}`, "read_note": `{"name":"a"}`, "delete_note": `{"name":"a"}`} {
		if r := bareCall(name, args, nil); !r.IsError || !strings.Contains(r.Content[0].Text, "mount") {
			t.Errorf("unmounted %s: %+v", name, r)
		}
	}
}

// crunchDigest is what crunch computes, natively.
func crunchDigest(seed string, steps, rounds int) string {
	h := sha256.Sum256([]byte(seed))
	for range steps * rounds {
		h = sha256.Sum256(h[:])
	}
	return hex.EncodeToString(h[:])
}

func TestJobsPlugin(t *testing.T) {
	p := load(t, "jobs", extism.Manifest{})
	tools, call := toolCaller(t, p)
	crunch, ok := tools["crunch"]
	if !ok || crunch.Execution == nil || crunch.Execution.TaskSupport != "optional" || crunch.OutputSchema == nil {
		t.Fatalf("crunch = %+v", crunch)
	}
	var r struct {
		Steps, Rounds int
		Hashes        int64
		Digest        string
	}
	structuredAs(t, call("crunch", `{"steps":5,"rounds":100,"seed":"abc"}`, map[string]any{"progressToken": "job-1"}), &r)
	if r.Steps != 5 || r.Rounds != 100 || r.Hashes != 500 || r.Digest != crunchDigest("abc", 5, 100) {
		t.Errorf("crunch = %+v, want digest %s", r, crunchDigest("abc", 5, 100))
	}
	progress := p.Host.Calls(abi.HostNotifyProgress)
	if len(progress) != 5 {
		t.Fatalf("%d progress notifications, want 5", len(progress))
	}
	for i, c := range progress {
		var pp abi.ProgressParams
		if err := json.Unmarshal([]byte(c.Input), &pp); err != nil {
			t.Fatal(err)
		}
		if pp.ProgressToken != "job-1" || pp.Progress != float64(i+1) || pp.Total == nil || *pp.Total != 5 || !strings.HasPrefix(pp.Message, "step ") {
			t.Errorf("progress %d: %s", i, c.Input)
		}
	}
	var levels []string
	for _, c := range p.Host.Calls(abi.HostNotifyLoggingMessage) {
		var lm abi.LoggingMessageParams
		if err := json.Unmarshal([]byte(c.Input), &lm); err != nil {
			t.Fatal(err)
		}
		levels = append(levels, lm.Level)
	}
	if want := []string{"info", "debug", "debug", "debug", "debug", "debug", "notice"}; !slices.Equal(levels, want) {
		t.Errorf("log levels %v, want %v", levels, want)
	}
	// Without a progress token: no progress, same result; defaults apply.
	p.Host.Reset()
	structuredAs(t, call("crunch", `{"steps":2,"rounds":10}`, nil), &r)
	if r.Digest != crunchDigest("mcphost", 2, 10) || len(p.Host.Calls(abi.HostNotifyProgress)) != 0 {
		t.Errorf("without token: %+v, progress %v", r, p.Host.Calls(abi.HostNotifyProgress))
	}
	if r := call("crunch", `{"steps":0}`, nil); !r.IsError {
		t.Errorf("steps 0 accepted: %+v", r)
	}
}
