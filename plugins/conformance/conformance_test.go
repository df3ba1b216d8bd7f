//go:build !wasip1

package conformance_test

// These tests run the conformance plugin with the Extism Go SDK (as
// plugins/examples does) and check each fixture against what the scenarios
// of @modelcontextprotocol/conformance 0.1.16 check (README.md), plus the
// exact values of the suite's reference server where the suite leaves them
// open. The suite itself, over HTTP, is scripts/conformance.sh.

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// redPixelPNG is the reference server's image (base64).
const redPixelPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="

func wasmPath(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a WebAssembly plugin")
	}
	return plugintest.Build(t, "plugins/conformance")
}

// load loads the conformance plugin with a fresh plugintest.Host.
func load(t *testing.T) *plugintest.Plugin {
	t.Helper()
	return plugintest.Load(t, wasmPath(t), extism.Manifest{}, nil)
}

// text returns the text of a result that must be one text block.
func text(t *testing.T, r abi.CallToolResult) string {
	t.Helper()
	if len(r.Content) != 1 || r.Content[0].Type != abi.ContentText || r.Content[0].Text == "" {
		t.Fatalf("want one text block, got %+v", r)
	}
	return r.Content[0].Text
}

// asJSON decodes raw into generic JSON (numbers as float64).
func asJSON(t *testing.T, raw string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return v
}

func validates(t *testing.T, s *jsonschema.Schema, doc string) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(v)
}

var wantTools = []string{
	"test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource",
	"test_multiple_content_types", "test_tool_with_logging", "test_tool_with_progress",
	"test_error_handling", "test_reconnection", "test_sampling", "test_elicitation",
	"test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums", "json_schema_2020_12_tool",
	"test_missing_capability", "test_logging_tool", "test_streaming_elicitation", "test_custom_header",
	"test_input_required_result_elicitation", "test_input_required_result_sampling",
	"test_input_required_result_list_roots", "test_input_required_result_request_state",
	"test_input_required_result_tampered_state", "test_input_required_result_multiple_inputs",
	"test_input_required_result_multi_round", "test_input_required_result_capabilities",
	"test_trigger_tool_change", "test_trigger_prompt_change",
	"greet", "slow_compute", "failing_job", "protocol_error_job", "confirm_delete", "multi_input", "test_tool_with_task",
}

// TestManifestAndConfig: the plugin imports exactly the host functions its
// manifest declares, and plugins/conformance/mcphost.toml grants exactly
// those.
func TestManifestAndConfig(t *testing.T) {
	imported, _ := plugintest.InspectWasm(t, wasmPath(t))
	m := plugintest.ReadManifest(t, "manifest.json")
	declared := slices.Sorted(slices.Values(m.Needs.HostFunctions))
	want := []string{abi.HostCreateElicitation, abi.HostCreateMessage, abi.HostNotifyLoggingMessage, abi.HostNotifyProgress,
		abi.HostNotifyPromptListChanged, abi.HostNotifyToolListChanged, abi.HostRequestInput}
	if !slices.Equal(imported, want) || !slices.Equal(declared, want) {
		t.Errorf("imports %v, manifest declares %v, want %v", imported, declared, want)
	}
	if m.ABI != abi.Version || m.Name != "conformance" {
		t.Errorf("manifest abi %d name %q", m.ABI, m.Name)
	}

	cfg, err := config.Load(filepath.Join(".", "mcphost.toml"))
	if err != nil {
		t.Fatal(err)
	}
	pc, ok := cfg.Plugins["conformance"]
	if !ok {
		t.Fatalf("mcphost.toml has no [plugins.conformance]")
	}
	if granted := slices.Sorted(slices.Values(pc.HostFunctions)); !slices.Equal(granted, want) {
		t.Errorf("mcphost.toml grants %v, want %v", granted, want)
	}
}

// TestToolsList: tools-list (name, description, inputSchema on every tool)
// and json-schema-2020-12 (SEP-1613 keywords preserved).
func TestToolsList(t *testing.T) {
	p := load(t)
	var list abi.ListToolsResult
	p.OK(abi.ExportListTools, abi.ListInput{}, &list)
	var names []string
	tools := map[string]abi.Tool{}
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		tools[tool.Name] = tool
		if tool.Description == "" || len(tool.InputSchema) == 0 {
			t.Errorf("tool %s: description %q, inputSchema %s", tool.Name, tool.Description, tool.InputSchema)
		}
		if s := asJSON(t, string(tool.InputSchema)); s["type"] != "object" {
			t.Errorf("tool %s: inputSchema type %v", tool.Name, s["type"])
		}
		plugintest.CompileSchema(t, tool.InputSchema)
		// The suite's client validates structuredContent against an
		// outputSchema; the fixtures return plain content.
		if tool.OutputSchema != nil {
			t.Errorf("tool %s has an outputSchema %s", tool.Name, tool.OutputSchema)
		}
	}
	if !slices.Equal(names, wantTools) {
		t.Errorf("tools %v\nwant %v", names, wantTools)
	}

	s := asJSON(t, string(tools["json_schema_2020_12_tool"].InputSchema))
	if s["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %v", s["$schema"])
	}
	if defs, _ := s["$defs"].(map[string]any); defs["address"] == nil {
		t.Errorf("$defs = %v", s["$defs"])
	}
	if ap, ok := s["additionalProperties"]; !ok || ap != false {
		t.Errorf("additionalProperties = %v", ap)
	}
	js := plugintest.CompileSchema(t, tools["json_schema_2020_12_tool"].InputSchema)
	if err := validates(t, js, `{"name":"n","address":{"street":"s","city":"c"}}`); err != nil {
		t.Error(err)
	}
	if validates(t, js, `{"address":{"city":1}}`) == nil || validates(t, js, `{"other":1}`) == nil {
		t.Error("json_schema_2020_12_tool schema accepts bad arguments ($ref or additionalProperties lost)")
	}
	// SEP-2106 (2026-07-28): composition, conditional and anchor keywords
	// reach the client, and they constrain: name or address (allOf of an
	// anyOf), and a name with an address (if/then/else).
	if all, _ := s["allOf"].([]any); len(all) == 0 || all[0].(map[string]any)["anyOf"] == nil {
		t.Errorf("allOf = %v, want an allOf holding an anyOf", s["allOf"])
	}
	if s["if"] == nil || s["then"] == nil || s["else"] == nil {
		t.Errorf("if/then/else = %v/%v/%v", s["if"], s["then"], s["else"])
	}
	if address, _ := s["$defs"].(map[string]any)["address"].(map[string]any); address["$anchor"] == nil {
		t.Errorf("$defs.address = %v, want an $anchor", address)
	}
	if validates(t, js, `{}`) == nil || validates(t, js, `{"address":{"city":"c"}}`) == nil || validates(t, js, `{"name":"n"}`) != nil {
		t.Error("json_schema_2020_12_tool: allOf/anyOf or if/then/else do not constrain the arguments")
	}

	for tool, arg := range map[string]string{"test_sampling": "prompt", "test_elicitation": "message"} {
		s := asJSON(t, string(tools[tool].InputSchema))
		props, _ := s["properties"].(map[string]any)
		if prop, _ := props[arg].(map[string]any); prop["type"] != "string" || !reflect.DeepEqual(s["required"], []any{arg}) {
			t.Errorf("%s inputSchema %s: want a required string %q", tool, tools[tool].InputSchema, arg)
		}
	}
}

// TestContentTools: tools-call-simple-text, -image, -audio,
// -embedded-resource, -mixed-content and -error.
func TestContentTools(t *testing.T) {
	p := load(t)

	if got := text(t, p.CallTool("test_simple_text", "", nil)); got != "This is a simple text response for testing." {
		t.Errorf("test_simple_text = %q", got)
	}

	r := p.CallTool("test_image_content", "{}", nil)
	if len(r.Content) != 1 || !reflect.DeepEqual(r.Content[0], abi.Content{Type: abi.ContentImage, Data: redPixelPNG, MimeType: "image/png"}) {
		t.Errorf("test_image_content = %+v", r)
	}

	r = p.CallTool("test_audio_content", "{}", nil)
	if len(r.Content) != 1 || r.Content[0].Type != abi.ContentAudio || r.Content[0].MimeType != "audio/wav" {
		t.Fatalf("test_audio_content = %+v", r)
	}
	checkWAV(t, r.Content[0].Data)

	r = p.CallTool("test_embedded_resource", "{}", nil)
	want := abi.ResourceContents{URI: "test://embedded-resource", MimeType: "text/plain", Text: "This is an embedded resource content."}
	if len(r.Content) != 1 || r.Content[0].Type != abi.ContentResource || r.Content[0].Resource == nil || !reflect.DeepEqual(*r.Content[0].Resource, want) {
		t.Errorf("test_embedded_resource = %+v", r)
	}

	r = p.CallTool("test_multiple_content_types", "{}", nil)
	var types []string
	for _, c := range r.Content {
		types = append(types, c.Type)
	}
	if !slices.Equal(types, []string{abi.ContentText, abi.ContentImage, abi.ContentResource}) ||
		r.Content[0].Text != "Multiple content types test:" ||
		r.Content[1].Data != redPixelPNG || r.Content[1].MimeType != "image/png" ||
		!reflect.DeepEqual(*r.Content[2].Resource, abi.ResourceContents{URI: "test://mixed-content-resource", MimeType: "application/json", Text: `{"test":"data","value":123}`}) {
		t.Errorf("test_multiple_content_types = %+v", r)
	}

	r = p.CallTool("test_error_handling", "{}", nil)
	if !r.IsError || text(t, r) != "This tool intentionally returns an error for testing" {
		t.Errorf("test_error_handling = %+v", r)
	}

	r = p.CallTool("test_reconnection", "{}", nil)
	if r.IsError || !strings.Contains(text(t, r), "Reconnection test completed successfully") {
		t.Errorf("test_reconnection = %+v", r)
	}

	r = p.CallTool("json_schema_2020_12_tool", `{"name":"n","address":{"city":"c"}}`, nil)
	if r.IsError || text(t, r) != `JSON Schema 2020-12 tool called with: {"address":{"city":"c"},"name":"n"}` {
		t.Errorf("json_schema_2020_12_tool = %+v", r)
	}
}

// checkWAV checks that data (base64) is a consistent PCM WAV file.
func checkWAV(t *testing.T, data string) {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil || len(b) < 44 {
		t.Fatalf("audio data %q: %v", data, err)
	}
	le := binary.LittleEndian
	channels, rate, byteRate := le.Uint16(b[22:]), le.Uint32(b[24:]), le.Uint32(b[28:])
	align, bits := le.Uint16(b[32:]), le.Uint16(b[34:])
	if string(b[0:4]) != "RIFF" || string(b[8:16]) != "WAVEfmt " || le.Uint32(b[4:]) != uint32(len(b)-8) ||
		le.Uint32(b[16:]) != 16 || le.Uint16(b[20:]) != 1 || string(b[36:40]) != "data" ||
		le.Uint32(b[40:]) != uint32(len(b)-44) || le.Uint32(b[40:]) == 0 ||
		byteRate != rate*uint32(channels)*uint32(bits)/8 || align != channels*bits/8 {
		t.Errorf("not a consistent PCM WAV file: % x", b)
	}
}

// TestLoggingTool: tools-call-with-logging wants at least 3 log messages,
// sent during the call (about 50 ms apart).
func TestLoggingTool(t *testing.T) {
	p := load(t)
	start := time.Now()
	r := p.CallTool("test_tool_with_logging", "{}", nil)
	if r.IsError || text(t, r) == "" {
		t.Errorf("test_tool_with_logging = %+v", r)
	}
	logs := p.Host.Calls(abi.HostNotifyLoggingMessage)
	var got []string
	for _, l := range logs {
		got = append(got, l.Input)
	}
	want := []string{
		`{"level":"info","data":"Tool execution started"}`,
		`{"level":"info","data":"Tool processing data"}`,
		`{"level":"info","data":"Tool execution completed"}`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("log messages\n got %q\nwant %q", got, want)
	}
	if gap := logs[2].At.Sub(logs[0].At); gap < 100*time.Millisecond || time.Since(start) < 100*time.Millisecond {
		t.Errorf("log messages %v apart, want the 50 ms pauses between them", gap)
	}
}

// TestProgressTool: tools-call-with-progress wants at least 3 increasing
// progress notifications carrying the request's token (the suite's client
// sends its request id, a number, as the token).
func TestProgressTool(t *testing.T) {
	p := load(t)
	for _, token := range []any{float64(7), "progress-test-1"} {
		p.Host.Reset()
		r := p.CallTool("test_tool_with_progress", "{}", map[string]any{"progressToken": token})
		if r.IsError || text(t, r) != fmt.Sprintf("Progress reported with token %v", token) {
			t.Errorf("test_tool_with_progress = %+v", r)
		}
		calls := p.Host.Calls(abi.HostNotifyProgress)
		if len(calls) != 3 {
			t.Fatalf("token %v: %d progress notifications, want 3", token, len(calls))
		}
		for i, c := range calls {
			var n abi.ProgressParams
			if err := json.Unmarshal([]byte(c.Input), &n); err != nil {
				t.Fatal(err)
			}
			want := abi.ProgressParams{ProgressToken: token, Progress: float64(50 * i), Message: fmt.Sprintf("Completed step %d of 100", 50*i)}
			if n.Total == nil || *n.Total != 100 || n.ProgressToken != want.ProgressToken || n.Progress != want.Progress || n.Message != want.Message {
				t.Errorf("progress %d = %s", i, c.Input)
			}
		}
		if gap := calls[2].At.Sub(calls[0].At); gap < 100*time.Millisecond {
			t.Errorf("progress notifications %v apart, want the 50 ms pauses between them", gap)
		}
	}
	// Without a token the tool runs and notifies nothing.
	p.Host.Reset()
	if r := p.CallTool("test_tool_with_progress", "{}", nil); r.IsError || len(p.Host.Calls(abi.HostNotifyProgress)) != 0 {
		t.Errorf("without a token: %+v, %d notifications", r, len(p.Host.Calls(abi.HostNotifyProgress)))
	}
}

// TestSamplingTool: tools-call-sampling wants a sampling/createMessage
// request and content in the result.
func TestSamplingTool(t *testing.T) {
	p := load(t)
	// What the suite's client answers.
	p.Host.Reply(abi.HostCreateMessage, func(string) string {
		return `{"role":"assistant","content":{"type":"text","text":"This is a test response from the client"},"model":"test-model","stopReason":"endTurn"}`
	})
	r := p.CallTool("test_sampling", `{"prompt":"Test prompt for sampling"}`, nil)
	if r.IsError || text(t, r) != "LLM response: This is a test response from the client" {
		t.Errorf("test_sampling = %+v", r)
	}
	calls := p.Host.Calls(abi.HostCreateMessage)
	if len(calls) != 1 {
		t.Fatalf("%d create_message calls", len(calls))
	}
	want := `{"messages":[{"role":"user","content":{"type":"text","text":"Test prompt for sampling"}}],"maxTokens":100}`
	if !reflect.DeepEqual(asJSON(t, calls[0].Input), asJSON(t, want)) {
		t.Errorf("sampling request %s\nwant %s", calls[0].Input, want)
	}

	// A client without sampling: a tool error naming the cause.
	p.Host.Reset()
	p.Host.Reply(abi.HostCreateMessage, func(string) string {
		return `{"error":{"code":-32601,"message":"the client did not declare the sampling capability"}}`
	})
	r = p.CallTool("test_sampling", `{"prompt":"x"}`, nil)
	if !r.IsError || !strings.Contains(text(t, r), "sampling capability") {
		t.Errorf("test_sampling without sampling = %+v", r)
	}
	// The prompt is required.
	if r := p.CallTool("test_sampling", `{}`, nil); !r.IsError || len(p.Host.Calls(abi.HostCreateMessage)) != 1 {
		t.Errorf("test_sampling without prompt = %+v", r)
	}
}

// elicitation runs tool, answering its elicitation with answer, and returns
// the elicitation request and the tool's text.
func elicitation(t *testing.T, p *plugintest.Plugin, tool, args, answer string) (req map[string]any, schema *jsonschema.Schema, out string) {
	t.Helper()
	p.Host.Reset()
	p.Host.Reply(abi.HostCreateElicitation, func(string) string { return answer })
	r := p.CallTool(tool, args, nil)
	if r.IsError {
		t.Fatalf("%s = %+v", tool, r)
	}
	calls := p.Host.Calls(abi.HostCreateElicitation)
	if len(calls) != 1 {
		t.Fatalf("%s: %d create_elicitation calls", tool, len(calls))
	}
	req = asJSON(t, calls[0].Input)
	raw, _ := json.Marshal(req["requestedSchema"])
	schema = plugintest.CompileSchema(t, raw)
	// The suite's client checks its answer against the schema.
	var a struct {
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal([]byte(answer), &a); err == nil && a.Content != nil {
		if err := validates(t, schema, string(a.Content)); err != nil {
			t.Errorf("%s: the suite's answer %s does not fit the schema: %v", tool, a.Content, err)
		}
	}
	return req, schema, text(t, r)
}

// checkFlat checks what the host forwards: an object schema whose
// properties are strings, numbers, integers, booleans or arrays with items.
func checkFlat(t *testing.T, req map[string]any) map[string]map[string]any {
	t.Helper()
	s, _ := req["requestedSchema"].(map[string]any)
	if s["type"] != "object" {
		t.Fatalf("requestedSchema %v is not an object schema", s)
	}
	props := map[string]map[string]any{}
	for name, v := range s["properties"].(map[string]any) {
		prop := v.(map[string]any)
		switch prop["type"] {
		case "string", "number", "integer", "boolean":
		case "array":
			if prop["items"] == nil {
				t.Errorf("property %s: array without items", name)
			}
		default:
			t.Errorf("property %s: type %v is not flat", name, prop["type"])
		}
		props[name] = prop
	}
	return props
}

// TestElicitationTool: tools-call-elicitation.
func TestElicitationTool(t *testing.T) {
	p := load(t)
	req, schema, out := elicitation(t, p, "test_elicitation", `{"message":"Please provide your information"}`,
		`{"action":"accept","content":{"username":"testuser","email":"test@example.com"}}`)
	if req["message"] != "Please provide your information" {
		t.Errorf("message = %v", req["message"])
	}
	props := checkFlat(t, req)
	if props["username"]["type"] != "string" || props["email"]["type"] != "string" {
		t.Errorf("schema properties %v", props)
	}
	if validates(t, schema, `{"username":"u"}`) == nil {
		t.Error("username and email should be required")
	}
	if out != `User response: action=accept, content={"email":"test@example.com","username":"testuser"}` {
		t.Errorf("test_elicitation = %q", out)
	}

	_, _, out = elicitation(t, p, "test_elicitation", `{"message":"m"}`, `{"action":"decline"}`)
	if out != "User response: action=decline, content={}" {
		t.Errorf("declined: %q", out)
	}

	p.Host.Reset()
	p.Host.Reply(abi.HostCreateElicitation, func(string) string {
		return `{"error":{"code":-32601,"message":"the client did not declare the elicitation capability (2025-06-18 or later)"}}`
	})
	if r := p.CallTool("test_elicitation", `{"message":"m"}`, nil); !r.IsError || !strings.Contains(text(t, r), "elicitation capability") {
		t.Errorf("without elicitation: %+v", r)
	}
}

// TestElicitationSEP1034Defaults: elicitation-sep1034-defaults checks the
// type and default of each field.
func TestElicitationSEP1034Defaults(t *testing.T) {
	p := load(t)
	req, _, out := elicitation(t, p, "test_elicitation_sep1034_defaults", "{}",
		`{"action":"accept","content":{"name":"Jane Smith","age":25,"score":88,"status":"inactive","verified":false}}`)
	props := checkFlat(t, req)
	for name, want := range map[string][2]any{
		"name":     {"string", "John Doe"},
		"age":      {"integer", float64(30)},
		"score":    {"number", 95.5},
		"status":   {"string", "active"},
		"verified": {"boolean", true},
	} {
		prop := props[name]
		if prop["type"] != want[0] || prop["default"] != want[1] {
			t.Errorf("%s: %v, want type %v default %v", name, prop, want[0], want[1])
		}
	}
	if enum, _ := props["status"]["enum"].([]any); !slices.Equal(enum, []any{"active", "inactive", "pending"}) {
		t.Errorf("status enum %v", props["status"]["enum"])
	}
	if want := `Elicitation completed: action=accept, content={"age":25,"name":"Jane Smith","score":88,"status":"inactive","verified":false}`; out != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
}

// TestElicitationSEP1330Enums: elicitation-sep1330-enums checks the five
// enum forms.
func TestElicitationSEP1330Enums(t *testing.T) {
	p := load(t)
	req, schema, out := elicitation(t, p, "test_elicitation_sep1330_enums", "{}",
		`{"action":"accept","content":{"untitledSingle":"option1","titledSingle":"value1","legacyEnum":"opt1","untitledMulti":["option1","option2"],"titledMulti":["value1","value2"]}}`)
	props := checkFlat(t, req)
	titled := func(field string, v any) {
		t.Helper()
		opts, ok := v.([]any)
		if !ok || len(opts) == 0 {
			t.Errorf("%s: no titled options in %v", field, v)
			return
		}
		for _, o := range opts {
			o, _ := o.(map[string]any)
			if _, ok := o["const"].(string); !ok {
				t.Errorf("%s: option %v has no string const", field, o)
			}
			if _, ok := o["title"].(string); !ok {
				t.Errorf("%s: option %v has no string title", field, o)
			}
		}
	}

	us := props["untitledSingle"]
	if us["type"] != "string" || us["enum"] == nil || us["oneOf"] != nil || us["enumNames"] != nil {
		t.Errorf("untitledSingle %v", us)
	}
	ts := props["titledSingle"]
	if ts["type"] != "string" || ts["enum"] != nil {
		t.Errorf("titledSingle %v", ts)
	}
	titled("titledSingle.oneOf", ts["oneOf"])
	le := props["legacyEnum"]
	enum, _ := le["enum"].([]any)
	names, _ := le["enumNames"].([]any)
	if le["type"] != "string" || len(enum) == 0 || len(names) != len(enum) {
		t.Errorf("legacyEnum %v", le)
	}
	um := props["untitledMulti"]
	umi, _ := um["items"].(map[string]any)
	if um["type"] != "array" || umi["type"] != "string" || umi["enum"] == nil || umi["anyOf"] != nil {
		t.Errorf("untitledMulti %v", um)
	}
	tm := props["titledMulti"]
	tmi, _ := tm["items"].(map[string]any)
	if tm["type"] != "array" || tmi["enum"] != nil {
		t.Errorf("titledMulti %v", tm)
	}
	titled("titledMulti.items.anyOf", tmi["anyOf"])

	for _, bad := range []string{`{"titledSingle":"value4"}`, `{"titledMulti":["value9"]}`, `{"untitledMulti":[]}`, `{"legacyEnum":"Option One"}`} {
		if validates(t, schema, bad) == nil {
			t.Errorf("schema accepts %s", bad)
		}
	}
	if !strings.HasPrefix(out, "Elicitation completed: action=accept, content={") || !strings.Contains(out, `"titledMulti":["value1","value2"]`) {
		t.Errorf("test_elicitation_sep1330_enums = %q", out)
	}
}

// TestResources: resources-list, resources-read-text, resources-read-binary,
// resources-templates-read, and the URI of resources-subscribe.
func TestResources(t *testing.T) {
	p := load(t)
	var list abi.ListResourcesResult
	p.OK(abi.ExportListResources, abi.ListInput{}, &list)
	got := map[string]string{}
	for _, r := range list.Resources {
		if r.URI == "" || r.Name == "" || r.Description == "" {
			t.Errorf("resource %+v lacks uri, name or description", r)
		}
		got[r.URI] = r.MimeType
	}
	want := map[string]string{"test://static-text": "text/plain", "test://static-binary": "image/png", "test://watched-resource": "text/plain"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("resources %v, want %v", got, want)
	}

	var templates abi.ListResourceTemplatesResult
	p.OK(abi.ExportListResourceTemplates, abi.ListInput{}, &templates)
	if len(templates.ResourceTemplates) != 1 || templates.ResourceTemplates[0].URITemplate != "test://template/{id}/data" ||
		templates.ResourceTemplates[0].Name == "" || templates.ResourceTemplates[0].MimeType != "application/json" {
		t.Errorf("templates %+v", templates)
	}

	read := p.ReadResource
	for uri, want := range map[string]abi.ResourceContents{
		"test://static-text":       {URI: "test://static-text", MimeType: "text/plain", Text: "This is the content of the static text resource."},
		"test://static-binary":     {URI: "test://static-binary", MimeType: "image/png", Blob: redPixelPNG},
		"test://watched-resource":  {URI: "test://watched-resource", MimeType: "text/plain", Text: "Watched resource content"},
		"test://template/123/data": {URI: "test://template/123/data", MimeType: "application/json", Text: `{"id":"123","templateTest":true,"data":"Data for ID: 123"}`},
		"test://template/a%20b/data": {URI: "test://template/a%20b/data", MimeType: "application/json",
			Text: `{"id":"a b","templateTest":true,"data":"Data for ID: a b"}`},
	} {
		if got := read(uri); !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %+v, want %+v", uri, got, want)
		}
	}
	for _, uri := range []string{"test://template//data", "test://template/1/2/data", "test://nothing"} {
		if e := p.Fail(abi.ExportReadResource, plugintest.Input(abi.ReadResourceParams{URI: uri}, nil)); e.Code != abi.CodeResourceNotFound {
			t.Errorf("%s: %+v", uri, e)
		}
	}
}

// TestPrompts: prompts-list, prompts-get-simple, prompts-get-with-args,
// prompts-get-embedded-resource, prompts-get-with-image.
func TestPrompts(t *testing.T) {
	p := load(t)
	var list abi.ListPromptsResult
	p.OK(abi.ExportListPrompts, abi.ListInput{}, &list)
	args := map[string][]string{}
	var names []string
	for _, pr := range list.Prompts {
		if pr.Description == "" {
			t.Errorf("prompt %s has no description", pr.Name)
		}
		names = append(names, pr.Name)
		for _, a := range pr.Arguments {
			if !a.Required || a.Description == "" {
				t.Errorf("prompt %s argument %+v", pr.Name, a)
			}
			args[pr.Name] = append(args[pr.Name], a.Name)
		}
	}
	if !slices.Equal(names, []string{"test_input_required_result_prompt", "test_simple_prompt", "test_prompt_with_arguments", "test_prompt_with_embedded_resource", "test_prompt_with_image"}) {
		t.Errorf("prompts %v", names)
	}
	if !reflect.DeepEqual(args, map[string][]string{"test_prompt_with_arguments": {"arg1", "arg2"}, "test_prompt_with_embedded_resource": {"resourceUri"}}) {
		t.Errorf("prompt arguments %v", args)
	}

	get := func(name string, args map[string]string) []abi.PromptMessage {
		t.Helper()
		var r abi.GetPromptResult
		p.OK(abi.ExportGetPrompt, plugintest.Input(abi.GetPromptParams{Name: name, Arguments: args}, nil), &r)
		for i, m := range r.Messages {
			if m.Role != "user" || m.Content.Type == "" {
				t.Errorf("%s message %d: %+v", name, i, m)
			}
		}
		return r.Messages
	}
	userText := func(s string) abi.PromptMessage {
		return abi.PromptMessage{Role: "user", Content: abi.Content{Type: abi.ContentText, Text: s}}
	}

	if got := get("test_simple_prompt", nil); !reflect.DeepEqual(got, []abi.PromptMessage{userText("This is a simple prompt for testing.")}) {
		t.Errorf("test_simple_prompt = %+v", got)
	}
	if got := get("test_prompt_with_arguments", map[string]string{"arg1": "hello", "arg2": "world"}); !reflect.DeepEqual(got,
		[]abi.PromptMessage{userText("Prompt with arguments: arg1='hello', arg2='world'")}) {
		t.Errorf("test_prompt_with_arguments = %+v", got)
	}
	got := get("test_prompt_with_arguments", map[string]string{"arg1": "testValue1", "arg2": "testValue2"})
	if b, _ := json.Marshal(got); !bytes.Contains(b, []byte("testValue1")) || !bytes.Contains(b, []byte("testValue2")) {
		t.Errorf("arguments not substituted: %s", b)
	}
	if e := p.Fail(abi.ExportGetPrompt, plugintest.Input(abi.GetPromptParams{Name: "test_prompt_with_arguments", Arguments: map[string]string{"arg1": "x"}}, nil)); e.Code != abi.CodeInvalidParams || !strings.Contains(e.Message, "arg2") {
		t.Errorf("missing arg2: %+v", e)
	}

	got = get("test_prompt_with_embedded_resource", map[string]string{"resourceUri": "test://example-resource"})
	if len(got) != 2 || got[0].Content.Type != abi.ContentResource || got[0].Content.Resource == nil ||
		!reflect.DeepEqual(*got[0].Content.Resource, abi.ResourceContents{URI: "test://example-resource", MimeType: "text/plain", Text: "Embedded resource content for testing."}) ||
		!reflect.DeepEqual(got[1], userText("Please process the embedded resource above.")) {
		t.Errorf("test_prompt_with_embedded_resource = %+v", got)
	}

	got = get("test_prompt_with_image", nil)
	if len(got) != 2 || !reflect.DeepEqual(got[0].Content, abi.Content{Type: abi.ContentImage, Data: redPixelPNG, MimeType: "image/png"}) ||
		!reflect.DeepEqual(got[1], userText("Please analyze the image above.")) {
		t.Errorf("test_prompt_with_image = %+v", got)
	}
}

// TestCompletion: completion-complete asks for arg1 of
// test_prompt_with_arguments and wants a values array.
func TestCompletion(t *testing.T) {
	p := load(t)
	complete := func(ref abi.CompleteRef, arg, value string) []string {
		t.Helper()
		var raw json.RawMessage
		p.OK(abi.ExportComplete, plugintest.Input(abi.CompleteParams{Ref: ref, Argument: abi.CompleteArgument{Name: arg, Value: value}}, nil), &raw)
		var r struct {
			Completion struct {
				Values *[]string `json:"values"`
			} `json:"completion"`
		}
		if err := json.Unmarshal(raw, &r); err != nil || r.Completion.Values == nil {
			t.Fatalf("completion %s: no values array", raw)
		}
		return *r.Completion.Values
	}
	prompt := abi.CompleteRef{Type: abi.RefPrompt, Name: "test_prompt_with_arguments"}
	for value, want := range map[string][]string{"test": {"testValue1"}, "par": {"paris", "park", "party"}, "zzz": {}} {
		if got := complete(prompt, "arg1", value); !slices.Equal(got, want) {
			t.Errorf("arg1 %q: %q, want %q", value, got, want)
		}
	}
	if got := complete(abi.CompleteRef{Type: abi.RefResource, URI: "test://template/{id}/data"}, "id", "12"); !slices.Equal(got, []string{"123"}) {
		t.Errorf("template id completion: %q", got)
	}
}

// TestStatelessDiagnosticTools: the tools server-stateless (2026-07-28)
// calls: test_missing_capability asks the client's model (the client that
// did not declare sampling gets -32021 from the host),
// test_logging_tool logs once (the host sends it only with a logLevel),
// test_streaming_elicitation asks the user.
func TestStatelessDiagnosticTools(t *testing.T) {
	p := load(t)
	for tool, fn := range map[string]string{
		"test_missing_capability":    abi.HostCreateMessage,
		"test_logging_tool":          abi.HostNotifyLoggingMessage,
		"test_streaming_elicitation": abi.HostCreateElicitation,
	} {
		p.Host.Reset()
		p.CallTool(tool, "{}", nil)
		if calls := p.Host.Calls(fn); len(calls) != 1 {
			t.Errorf("%s made %d %s calls, want 1", tool, len(calls), fn)
		}
	}
}

// TestCustomHeaderTool: http-custom-header-server-validation (2026-07-28)
// needs a tool with a string parameter marked x-mcp-header; the tool
// answers with the value.
func TestCustomHeaderTool(t *testing.T) {
	p := load(t)
	var tools abi.ListToolsResult
	p.OK(abi.ExportListTools, abi.ListInput{}, &tools)
	for _, tool := range tools.Tools {
		if tool.Name != "test_custom_header" {
			continue
		}
		region, _ := asJSON(t, string(tool.InputSchema))["properties"].(map[string]any)["region"].(map[string]any)
		if region["type"] != "string" || region["x-mcp-header"] != "Region" {
			t.Errorf("region = %v, want a string marked x-mcp-header Region", region)
		}
	}
	if got := text(t, p.CallTool("test_custom_header", `{"region":"us-west1"}`, nil)); got != "Region: us-west1" {
		t.Errorf("test_custom_header = %q", got)
	}
}

// callWithCaps runs call_tool for name with a context naming the client's
// capabilities.
func callWithCaps(t *testing.T, p *plugintest.Plugin, name, caps string) abi.CallToolResult {
	t.Helper()
	in := plugintest.Input(abi.CallToolParams{Name: name}, nil)
	in.Context.ProtocolVersion = "2026-07-28"
	in.Context.ClientCapabilities = json.RawMessage(caps)
	var r abi.CallToolResult
	p.OK(abi.ExportCallTool, in, &r)
	return r
}

// TestInputRequiredFixtures: the input-required-result-* scenarios of
// 0.2.0-alpha.12 (SEP-2322) want their questions under given keys, several
// at once, and only those the client declared it can answer.
func TestInputRequiredFixtures(t *testing.T) {
	p := load(t)
	reply := func(in string) string {
		var q struct {
			InputRequests map[string]struct {
				Method string `json:"method"`
			} `json:"inputRequests"`
		}
		_ = json.Unmarshal([]byte(in), &q)
		answers := map[string]any{}
		for key, r := range q.InputRequests {
			switch r.Method {
			case "elicitation/create":
				answers[key] = map[string]any{"action": "accept", "content": map[string]any{"name": "Alice", "ok": true, "color": "blue"}}
			case "sampling/createMessage":
				answers[key] = map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "Paris"}, "model": "m"}
			case "roots/list":
				answers[key] = map[string]any{"roots": []any{map[string]any{"uri": "file:///test/root", "name": "Test Root"}}}
			}
		}
		out, _ := json.Marshal(map[string]any{"inputResponses": answers})
		return string(out)
	}
	reset := func() {
		p.Host.Reset()
		p.Host.Reply(abi.HostRequestInput, reply)
	}
	all := `{"elicitation":{},"sampling":{},"roots":{}}`
	for tool, want := range map[string]string{
		"test_input_required_result_elicitation":     "Hello, Alice!",
		"test_input_required_result_request_state":   "state-ok",
		"test_input_required_result_multiple_inputs": "Alice",
		"test_input_required_result_multi_round":     "Alice likes blue",
		"test_input_required_result_tampered_state":  "state-ok",
	} {
		reset()
		if got := text(t, callWithCaps(t, p, tool, all)); !strings.Contains(got, want) {
			t.Errorf("%s = %q, want it to contain %q", tool, got, want)
		}
	}
	keys := func() []string {
		var ks []string
		for _, c := range p.Host.Calls(abi.HostRequestInput) {
			var q struct {
				InputRequests map[string]json.RawMessage `json:"inputRequests"`
			}
			_ = json.Unmarshal([]byte(c.Input), &q)
			for k := range q.InputRequests {
				ks = append(ks, k)
			}
		}
		slices.Sort(ks)
		return ks
	}
	reset()
	callWithCaps(t, p, "test_input_required_result_elicitation", all)
	if got := keys(); !slices.Equal(got, []string{"user_name"}) {
		t.Errorf("elicitation asks %v, want user_name", got)
	}
	reset()
	callWithCaps(t, p, "test_input_required_result_multiple_inputs", all)
	if got := keys(); !slices.Equal(got, []string{"client_roots", "greeting", "user_name"}) {
		t.Errorf("multiple inputs ask %v, want client_roots, greeting, user_name at once", got)
	}
	reset()
	callWithCaps(t, p, "test_input_required_result_multi_round", all)
	if got := keys(); !slices.Equal(got, []string{"step1", "step2"}) {
		t.Errorf("multi round asks %v, want step1 then step2", got)
	}
	reset()
	callWithCaps(t, p, "test_input_required_result_capabilities", `{"sampling":{}}`)
	if got := keys(); !slices.Equal(got, []string{"capital_question"}) {
		t.Errorf("a sampling-only client is asked %v, want only the sampling question", got)
	}
	reset()
	callWithCaps(t, p, "test_input_required_result_capabilities", all)
	if got := keys(); !slices.Equal(got, []string{"capital_question", "user_name"}) {
		t.Errorf("a client that can do both is asked %v, want both questions", got)
	}
}

// TestTasksExtensionFixtures: the tasks-* scenarios of 0.2.0-alpha.12
// (SEP-2663) want these tools, with their task support, outcomes and
// questions; the host decides when a call becomes a task.
func TestTasksExtensionFixtures(t *testing.T) {
	p := load(t)
	var list abi.ListToolsResult
	p.OK(abi.ExportListTools, abi.ListInput{}, &list)
	support := map[string]string{}
	for _, tool := range list.Tools {
		if tool.Execution != nil {
			support[tool.Name] = tool.Execution.TaskSupport
		}
	}
	want := map[string]string{"slow_compute": "optional", "failing_job": "required", "protocol_error_job": "optional",
		"confirm_delete": "optional", "multi_input": "optional", "test_tool_with_task": "required"}
	for name, ts := range want {
		if support[name] != ts {
			t.Errorf("%s: taskSupport %q, want %q", name, support[name], ts)
		}
	}
	if support["greet"] != "" {
		t.Errorf("greet declares taskSupport %q, want none", support["greet"])
	}
	if got := text(t, p.CallTool("greet", `{"name":"sep-2243"}`, nil)); got != "Hello, sep-2243!" {
		t.Errorf("greet = %q", got)
	}
	if got := text(t, p.CallTool("slow_compute", `{"seconds":0,"label":"now"}`, nil)); !strings.Contains(got, "now") {
		t.Errorf("slow_compute = %q", got)
	}
	if r := p.CallTool("failing_job", `{}`, nil); !r.IsError {
		t.Errorf("failing_job = %+v, want a tool error", r)
	}
	if e := p.Fail(abi.ExportCallTool, plugintest.Input(abi.CallToolParams{Name: "protocol_error_job"}, nil)); e.Code != abi.CodeInternalError {
		t.Errorf("protocol_error_job: %+v, want an internal error", e)
	}
	p.Host.Reply(abi.HostCreateElicitation, func(string) string { return `{"action":"accept","content":{"confirm":true,"name":"Alice"}}` })
	if got := text(t, p.CallTool("confirm_delete", `{"filename":"a.txt"}`, nil)); got != "Deleted a.txt" {
		t.Errorf("confirm_delete = %q", got)
	}
	if got := text(t, p.CallTool("test_tool_with_task", `{}`, nil)); !strings.Contains(got, "Alice") {
		t.Errorf("test_tool_with_task = %q, want the name asked", got)
	}
	p.Host.Reply(abi.HostRequestInput, func(in string) string {
		if !strings.Contains(in, `"first"`) || !strings.Contains(in, `"second"`) {
			t.Errorf("multi_input asks %s, want first and second at once", in)
		}
		return `{"inputResponses":{"first":{"action":"accept","content":{"name":"a"}},"second":{"action":"accept","content":{"name":"b"}}}}`
	})
	if got := text(t, p.CallTool("multi_input", `{}`, nil)); got != "Answers: a, b" {
		t.Errorf("multi_input = %q", got)
	}
}

// TestTriggersChangeTheListsAndAnnounceIt: sep-2575's list changes. Each
// trigger changes its list for real (an item whose description differs at
// every call) and announces that list's change, once.
func TestTriggersChangeTheListsAndAnnounceIt(t *testing.T) {
	p := load(t)
	// description is that of the item name in the list an export answers.
	description := func(export, list, name string) func() string {
		return func() string {
			var res map[string]json.RawMessage
			p.OK(export, abi.ListInput{}, &res)
			var items []struct{ Name, Description string }
			if err := json.Unmarshal(res[list], &items); err != nil {
				t.Fatalf("%s: %v", export, err)
			}
			for _, item := range items {
				if item.Name == name {
					return item.Description
				}
			}
			return ""
		}
	}
	for _, tc := range []struct {
		trigger, announce string
		description       func() string
	}{
		{"test_trigger_tool_change", abi.HostNotifyToolListChanged, description(abi.ExportListTools, "tools", "test_dynamic_tool")},
		{"test_trigger_prompt_change", abi.HostNotifyPromptListChanged, description(abi.ExportListPrompts, "prompts", "test_dynamic_prompt")},
	} {
		var seen []string
		for i := range 2 {
			if r := p.CallTool(tc.trigger, "{}", nil); r.IsError {
				t.Fatalf("%s: %+v", tc.trigger, r)
			}
			if n := len(p.Host.Calls(tc.announce)); n != i+1 {
				t.Errorf("%s #%d: %d calls of %s, want %d", tc.trigger, i+1, n, tc.announce, i+1)
			}
			seen = append(seen, tc.description())
		}
		if seen[0] == "" || seen[0] == seen[1] {
			t.Errorf("%s: descriptions %q, want a new one at every call", tc.trigger, seen)
		}
	}
}
