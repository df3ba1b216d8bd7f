//go:build !wasm

package pdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

type greetArgs struct {
	Name  string `json:"name" description:"Who to greet"`
	Times int    `json:"times,omitempty" jsonschema:"minimum=1,maximum=3"`
}

type greeting struct {
	Text  string `json:"text"`
	Count int    `json:"count"`
}

func registerTools(t *testing.T) {
	freshRegistry(t)
	Tool("greet", "Greets someone", func(ctx *Context, a greetArgs) (greeting, error) {
		n := a.Times
		if n == 0 {
			n = 1
		}
		return greeting{Text: strings.Repeat("hello "+a.Name+" ", n), Count: n}, nil
	}, WithTitle("Greeter"), ReadOnly(), Idempotent(), OpenWorld(false),
		WithIcons(abi.Icon{Src: "data:image/png;base64,AA==", MimeType: "image/png"}))
	Tool("echo", "Echoes text", func(ctx *Context, a struct {
		Text string `json:"text"`
	}) (string, error) {
		return a.Text, nil
	})
	Tool("raw", "Returns a full result", func(ctx *Context, _ struct{}) (*abi.CallToolResult, error) {
		return &abi.CallToolResult{Content: []abi.Content{Text("a"), Image([]byte{1, 2}, "image/png")}}, nil
	})
	Tool("list", "Returns a list", func(ctx *Context, _ struct{}) ([]string, error) {
		return []string{"x", "y"}, nil
	})
	Tool("fail", "Fails", func(ctx *Context, _ struct{}) (string, error) {
		return "", errors.New("disk on fire")
	})
	Tool("reject", "Rejects", func(ctx *Context, _ struct{}) (string, error) {
		return "", InvalidParams("no such thing")
	})
	Tool("boom", "Panics", func(ctx *Context, _ struct{}) (string, error) {
		var m map[string]int
		m["x"] = 1
		return "", nil
	})
	Tool("nilresult", "Returns nil", func(ctx *Context, _ struct{}) (*greeting, error) {
		return nil, nil
	})
	Tool("nilslice", "Returns a nil slice", func(ctx *Context, _ struct{}) ([]int, error) {
		return nil, nil
	})
	Tool("nilmap", "Returns a nil map", func(ctx *Context, _ struct{}) (map[string]int, error) {
		return nil, nil
	})
	Tool("dynamic", "Returns any", func(ctx *Context, a struct {
		Kind string `json:"kind"`
	}) (any, error) {
		switch a.Kind {
		case "text":
			return "plain", nil
		case "number":
			return 42, nil
		}
		return map[string]int{"a": 1}, nil
	})
	Tool("progress", "Reports progress", func(ctx *Context, _ struct{}) (string, error) {
		ctx.Progress(1, 2, "half")
		ctx.Progress(2, 0, "")
		ctx.Log(LevelDebug, "done", map[string]int{"n": 2})
		ctx.Log("", "plain", nil)
		return "ok", nil
	})
}

func listedTools(t *testing.T, k *fakeKernel) map[string]abi.Tool {
	var r abi.ListToolsResult
	k.ok(handleListTools, abi.ListInput{}, &r)
	m := map[string]abi.Tool{}
	for _, tool := range r.Tools {
		m[tool.Name] = tool
	}
	return m
}

func TestListTools(t *testing.T) {
	k := newFakeKernel(t)
	registerTools(t)
	// The list exports accept an empty input too.
	_, out, _ := k.call(handleListTools, "")
	if !strings.HasPrefix(out, `{"tools":[{"name":"greet","title":"Greeter","description":"Greets someone","inputSchema":{`) {
		t.Errorf("list_tools output %s", out)
	}
	tools := listedTools(t, k)
	greet := tools["greet"]
	if string(greet.InputSchema) != `{"type":"object","properties":{"name":{"type":"string","description":"Who to greet"},"times":{"type":"integer","minimum":1,"maximum":3}},"required":["name"]}` {
		t.Errorf("greet inputSchema %s", greet.InputSchema)
	}
	if string(greet.OutputSchema) != `{"type":"object","properties":{"text":{"type":"string"},"count":{"type":"integer"}},"required":["text","count"]}` {
		t.Errorf("greet outputSchema %s", greet.OutputSchema)
	}
	a := greet.Annotations
	if a == nil || !*a.ReadOnlyHint || !*a.IdempotentHint || *a.OpenWorldHint || a.DestructiveHint != nil {
		t.Errorf("greet annotations %+v", a)
	}
	if len(greet.Icons) != 1 || greet.Title != "Greeter" {
		t.Errorf("greet title/icons %q %v", greet.Title, greet.Icons)
	}
	if tools["echo"].OutputSchema != nil || tools["raw"].OutputSchema != nil || tools["dynamic"].OutputSchema != nil {
		t.Error("unstructured tools declare an output schema")
	}
	if string(tools["raw"].InputSchema) != `{"type":"object","additionalProperties":false}` {
		t.Errorf("no-argument inputSchema %s", tools["raw"].InputSchema)
	}
	if string(tools["list"].OutputSchema) != `{"type":"object","properties":{"result":{"type":["array","null"],"items":{"type":"string"}}},"required":["result"]}` {
		t.Errorf("wrapped outputSchema %s", tools["list"].OutputSchema)
	}
	// Empty registries list empty arrays, not null.
	freshRegistry(t)
	for _, c := range []struct {
		h    handler
		want string
	}{
		{handleListTools, `{"tools":[]}`},
		{handleListPrompts, `{"prompts":[]}`},
		{handleListResources, `{"resources":[]}`},
		{handleListResourceTemplates, `{"resourceTemplates":[]}`},
	} {
		if _, out, _ := k.call(c.h, abi.ListInput{}); out != c.want {
			t.Errorf("empty list = %s, want %s", out, c.want)
		}
	}
}

func callTool(t *testing.T, k *fakeKernel, name string, args string, ctx abi.Context) abi.CallToolResult {
	t.Helper()
	var r abi.CallToolResult
	in := request(abi.CallToolParams{Name: name, Arguments: json.RawMessage(args)}, ctx)
	if args == "" {
		in = request(abi.CallToolParams{Name: name}, ctx)
	}
	k.ok(handleCallTool, in, &r)
	return r
}

func TestCallTool(t *testing.T) {
	k := newFakeKernel(t)
	registerTools(t)

	r := callTool(t, k, "greet", `{"name":"Ada","times":2}`, abi.Context{})
	if r.IsError || mustJSON(t, r.StructuredContent) != `{"count":2,"text":"hello Ada hello Ada "}` ||
		len(r.Content) != 1 || r.Content[0].Text != `{"text":"hello Ada hello Ada ","count":2}` {
		t.Errorf("greet = %+v", r)
	}
	if r := callTool(t, k, "echo", `{"text":"hi"}`, abi.Context{}); r.IsError || r.Content[0].Type != "text" || r.Content[0].Text != "hi" || r.StructuredContent != nil {
		t.Errorf("echo = %+v", r)
	}
	// Empty text is still sent as "text": "".
	if _, out, _ := k.call(handleCallTool, request(abi.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"text":""}`)}, abi.Context{})); out != `{"content":[{"type":"text","text":""}]}` {
		t.Errorf("echo empty = %s", out)
	}
	if r := callTool(t, k, "raw", "", abi.Context{}); len(r.Content) != 2 || r.Content[1].Data != "AQI=" {
		t.Errorf("raw = %+v", r)
	}
	if r := callTool(t, k, "list", `{}`, abi.Context{}); mustJSON(t, r.StructuredContent) != `{"result":["x","y"]}` || r.Content[0].Text != `["x","y"]` {
		t.Errorf("list = %+v", r)
	}
	if r := callTool(t, k, "nilslice", `{}`, abi.Context{}); mustJSON(t, r.StructuredContent) != `{"result":null}` {
		t.Errorf("nilslice = %+v", r)
	}
	if r := callTool(t, k, "nilmap", `{}`, abi.Context{}); mustJSON(t, r.StructuredContent) != `{}` {
		t.Errorf("nilmap = %+v", r)
	}
	for kind, want := range map[string]string{"text": "null", "number": `{"result":42}`, "object": `{"a":1}`} {
		r := callTool(t, k, "dynamic", `{"kind":"`+kind+`"}`, abi.Context{})
		if got := mustJSON(t, r.StructuredContent); got != want {
			t.Errorf("dynamic %s structured = %s, want %s", kind, got, want)
		}
	}

	// Tool execution errors.
	if r := callTool(t, k, "fail", `{}`, abi.Context{}); !r.IsError || r.Content[0].Text != "disk on fire" {
		t.Errorf("fail = %+v", r)
	}
	if r := callTool(t, k, "boom", `{}`, abi.Context{}); !r.IsError || !strings.HasPrefix(r.Content[0].Text, "panic: ") {
		t.Errorf("boom = %+v", r)
	}
	for args, want := range map[string]string{
		`{}`:                         `invalid arguments: missing required argument "name"`,
		`{"name":5}`:                 `invalid arguments: "name": must be a string, not an integer`,
		`{"name":"x","times":9}`:     `invalid arguments: "times": must be <= 3`,
		`{"name":"x","times":"two"}`: `invalid arguments: "times": must be an integer, not a string`,
		`"just a string"`:            `invalid arguments: arguments: must be an object, not a string`,
	} {
		if r := callTool(t, k, "greet", args, abi.Context{}); !r.IsError || r.Content[0].Text != want {
			t.Errorf("greet %s = %+v, want %q", args, r, want)
		}
	}
	// Arguments the host validated against the listed inputSchema (as
	// mcphost does) are only decoded: the schema's bounds are not checked
	// again, in WebAssembly, at every call; decoding still fails on a type
	// the struct cannot hold.
	validated := abi.Context{ArgumentsValidated: true}
	if r := callTool(t, k, "greet", `{"name":"x","times":4}`, validated); r.IsError || mustJSON(t, r.StructuredContent) != `{"count":4,"text":"hello x hello x hello x hello x "}` {
		t.Errorf("greet with validated arguments beyond the schema's maximum = %+v, want the handler's result", r)
	}
	if r := callTool(t, k, "greet", `{"name":"x","times":"two"}`, validated); !r.IsError || !strings.Contains(r.Content[0].Text, "invalid arguments") {
		t.Errorf("greet with arguments the struct cannot hold = %+v, want invalid arguments", r)
	}

	// Protocol errors.
	for _, c := range []struct {
		in   any
		code int
		msg  string
	}{
		{request(abi.CallToolParams{Name: "nope"}, abi.Context{}), abi.CodeInvalidParams, `unknown tool: "nope"`},
		{request(abi.CallToolParams{Name: "reject"}, abi.Context{}), abi.CodeInvalidParams, "no such thing"},
		{request(abi.CallToolParams{Name: "nilresult"}, abi.Context{}), abi.CodeInternalError, "tool returned a nil result"},
		{`{"request":`, abi.CodeInvalidParams, "invalid input"},
		{`{"request":{"name":7}}`, abi.CodeInvalidParams, "invalid request"},
	} {
		e := k.fail(handleCallTool, c.in)
		if e.Code != c.code || !strings.Contains(e.Message, c.msg) {
			t.Errorf("%v: error %+v, want %d %q", c.in, e, c.code, c.msg)
		}
	}
}

func TestProgressAndLog(t *testing.T) {
	k := newFakeKernel(t)
	registerTools(t)
	callTool(t, k, "progress", `{}`, abi.Context{ID: json.RawMessage(`7`), Meta: map[string]any{"progressToken": "tok"}})
	want := []hostCall{
		{abi.HostNotifyProgress, `{"progressToken":"tok","progress":1,"total":2,"message":"half"}`},
		{abi.HostNotifyProgress, `{"progressToken":"tok","progress":2}`},
		{abi.HostNotifyLoggingMessage, `{"level":"debug","data":{"data":{"n":2},"message":"done"}}`},
		{abi.HostNotifyLoggingMessage, `{"level":"info","data":"plain"}`},
	}
	if !reflect.DeepEqual(k.calls, want) {
		t.Errorf("host calls\n got %q\nwant %q", k.calls, want)
	}
	// Without a progress token there is no progress notification; the
	// token may also come from the request's own _meta.
	k.calls = nil
	callTool(t, k, "progress", `{}`, abi.Context{})
	if len(k.calls) != 2 || k.calls[0].name != abi.HostNotifyLoggingMessage {
		t.Errorf("host calls without token %q", k.calls)
	}
	k.calls = nil
	k.ok(handleCallTool, request(abi.CallToolParams{Name: "progress", Meta: abi.Meta{"progressToken": 3}}, abi.Context{}), nil)
	if len(k.calls) != 4 || k.calls[0].input != `{"progressToken":3,"progress":1,"total":2,"message":"half"}` {
		t.Errorf("host calls with request token %q", k.calls)
	}
	// Host inputs are freed after the call (outputs stay for the host).
	for off := range k.blocks {
		if b := k.block(off); !strings.HasPrefix(string(b), `{"content"`) {
			t.Errorf("block %d (%q) leaked", off, b)
		}
	}
}

func TestHostFunctions(t *testing.T) {
	k := newFakeKernel(t)
	ctx := &Context{}
	k.replies[abi.HostCreateMessage] = `{"role":"assistant","content":{"type":"text","text":"Paris"},"model":"m1","stopReason":"endTurn"}`
	r, err := ctx.CreateMessage(CreateMessageParams{Messages: []SamplingMessage{{Role: RoleUser, Content: Text("Capital of France?")}}, MaxTokens: 10})
	if err != nil || r.Text() != "Paris" || r.Model != "m1" {
		t.Errorf("CreateMessage = %+v, %v", r, err)
	}
	if got := k.calls[0].input; got != `{"messages":[{"role":"user","content":{"type":"text","text":"Capital of France?"}}],"maxTokens":10}` {
		t.Errorf("create_message input %s", got)
	}
	k.replies[abi.HostCreateMessage] = `{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"model":"m2"}`
	if r, err := ctx.CreateMessage(CreateMessageParams{MaxTokens: 1}); err != nil || r.Text() != "ab" || len(r.Content) != 2 {
		t.Errorf("CreateMessage (array) = %+v, %v", r, err)
	}
	k.replies[abi.HostCreateMessage] = `{"error":{"code":-32601,"message":"sampling not supported"}}`
	_, err = ctx.CreateMessage(CreateMessageParams{MaxTokens: 1})
	var he *HostError
	if !errors.As(err, &he) || he.Code != -32601 || err.Error() != "create_message: sampling not supported" {
		t.Errorf("CreateMessage error = %v", err)
	}
	if _, ok := protocolError(err); ok {
		t.Error("a host error is a protocol error")
	}

	k.replies[abi.HostCreateElicitation] = `{"action":"accept","content":{"name":"Ada","age":36}}`
	v, action, err := ElicitAs[struct {
		Name string `json:"name"`
		Age  int    `json:"age"`
	}](ctx, "Who are you?")
	if err != nil || action != ActionAccept || v.Name != "Ada" || v.Age != 36 {
		t.Errorf("ElicitAs = %+v, %q, %v", v, action, err)
	}
	last := k.calls[len(k.calls)-1]
	if last.input != `{"message":"Who are you?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"}},"required":["name","age"]}}` {
		t.Errorf("create_elicitation input %s", last.input)
	}
	k.replies[abi.HostCreateElicitation] = `{"action":"decline"}`
	if _, action, err := ElicitAs[struct{}](ctx, "?"); err != nil || action != ActionDecline {
		t.Errorf("ElicitAs decline = %q, %v", action, err)
	}

	k.replies[abi.HostListRoots] = `{"roots":[{"uri":"file:///home/ada","name":"home"}]}`
	if roots, err := ctx.ListRoots(); err != nil || len(roots) != 1 || roots[0].Name != "home" {
		t.Errorf("ListRoots = %v, %v", roots, err)
	}
	delete(k.replies, abi.HostListRoots)
	if _, err := ctx.ListRoots(); err == nil {
		t.Error("ListRoots without a reply succeeded")
	}

	k.calls = nil
	NotifyToolListChanged()
	NotifyPromptListChanged()
	NotifyResourceListChanged()
	NotifyResourceUpdated("file:///a")
	NotifyElicitationComplete("elic-1")
	want := []hostCall{
		{abi.HostNotifyToolListChanged, ""}, {abi.HostNotifyPromptListChanged, ""},
		{abi.HostNotifyResourceListChanged, ""}, {abi.HostNotifyResourceUpdated, `{"uri":"file:///a"}`},
		{abi.HostNotifyElicitationComplete, `{"elicitationId":"elic-1"}`},
	}
	if !reflect.DeepEqual(k.calls, want) {
		t.Errorf("notifications %q", k.calls)
	}
}

func registerPrompts(t *testing.T) {
	freshRegistry(t)
	Prompt("review", "Review code", []PromptArg{
		{Name: "code", Required: true},
		{Name: "language"},
	}, func(ctx *Context, args map[string]string) (*abi.GetPromptResult, error) {
		return Messages(UserMessage("Review this "+args["language"]+" code:\n"+args["code"]), AssistantMessage("Sure.")), nil
	}, WithTitle("Code review"))
	Prompt("broken", "Fails", nil, func(ctx *Context, args map[string]string) (*abi.GetPromptResult, error) {
		return nil, errors.New("template missing")
	})
	Prompt("panics", "Panics", nil, func(ctx *Context, args map[string]string) (*abi.GetPromptResult, error) {
		panic("oops")
	})
	CompletePromptArg("review", "language", CompleteFrom("go", "python", "Perl", "rust"))
}

func TestPrompts(t *testing.T) {
	k := newFakeKernel(t)
	registerPrompts(t)
	var list abi.ListPromptsResult
	k.ok(handleListPrompts, abi.ListInput{}, &list)
	if len(list.Prompts) != 3 || list.Prompts[0].Title != "Code review" || !list.Prompts[0].Arguments[0].Required {
		t.Errorf("list_prompts = %+v", list)
	}
	var r abi.GetPromptResult
	k.ok(handleGetPrompt, request(abi.GetPromptParams{Name: "review", Arguments: map[string]string{"code": "x := 1", "language": "go"}}, abi.Context{}), &r)
	if r.Description != "Review code" || len(r.Messages) != 2 || r.Messages[0].Role != "user" ||
		r.Messages[0].Content.Text != "Review this go code:\nx := 1" || r.Messages[1].Role != "assistant" {
		t.Errorf("get_prompt = %+v", r)
	}
	for _, c := range []struct {
		params abi.GetPromptParams
		code   int
		msg    string
	}{
		{abi.GetPromptParams{Name: "review"}, abi.CodeInvalidParams, `prompt "review": missing required argument "code"`},
		{abi.GetPromptParams{Name: "review", Arguments: map[string]string{"code": "  "}}, abi.CodeInvalidParams, `missing required argument "code"`},
		{abi.GetPromptParams{Name: "nope"}, abi.CodeInvalidParams, `unknown prompt: "nope"`},
		{abi.GetPromptParams{Name: "broken"}, abi.CodeInternalError, "template missing"},
		{abi.GetPromptParams{Name: "panics"}, abi.CodeInternalError, "panic: oops"},
	} {
		e := k.fail(handleGetPrompt, request(c.params, abi.Context{}))
		if e.Code != c.code || !strings.Contains(e.Message, c.msg) {
			t.Errorf("%+v: error %+v, want %d %q", c.params, e, c.code, c.msg)
		}
	}
	RemovePrompt("broken")
	k.ok(handleListPrompts, abi.ListInput{}, &list)
	if len(list.Prompts) != 2 {
		t.Errorf("after RemovePrompt: %d prompts", len(list.Prompts))
	}
}

func complete(t *testing.T, k *fakeKernel, p abi.CompleteParams) abi.Completion {
	t.Helper()
	var r abi.CompleteResult
	k.ok(handleComplete, request(p, abi.Context{}), &r)
	return r.Completion
}

func TestComplete(t *testing.T) {
	k := newFakeKernel(t)
	registerPrompts(t)
	c := complete(t, k, abi.CompleteParams{Ref: abi.CompleteRef{Type: "prompt", Name: "review"}, Argument: abi.CompleteArgument{Name: "language", Value: "p"}})
	if !reflect.DeepEqual(c.Values, []string{"python", "Perl"}) || *c.Total != 2 || c.HasMore {
		t.Errorf("completion = %+v", c)
	}
	// The MCP "ref/" prefix is accepted too; arguments without completion
	// give no values (an empty array).
	c = complete(t, k, abi.CompleteParams{Ref: abi.CompleteRef{Type: "ref/prompt", Name: "review"}, Argument: abi.CompleteArgument{Name: "code", Value: "x"}})
	if c.Values == nil || len(c.Values) != 0 {
		t.Errorf("completion without completer = %+v", c)
	}
	_, out, _ := k.call(handleComplete, request(abi.CompleteParams{Ref: abi.CompleteRef{Type: "prompt", Name: "review"}, Argument: abi.CompleteArgument{Name: "code"}}, abi.Context{}))
	if out != `{"completion":{"values":[],"total":0}}` {
		t.Errorf("empty completion output %s", out)
	}

	var seen map[string]string
	var many []string
	for i := 0; i < 150; i++ {
		many = append(many, fmt.Sprintf("item%03d", i))
	}
	CompleteTemplateVar("db://{table}/{id}", "id", func(ctx *Context, value string, args map[string]string) []string {
		seen = args
		return FilterPrefix(many, value)
	})
	c = complete(t, k, abi.CompleteParams{
		Ref:      abi.CompleteRef{Type: "resource", URI: "db://{table}/{id}"},
		Argument: abi.CompleteArgument{Name: "id", Value: "ITEM"},
		Context:  &abi.CompleteContext{Arguments: map[string]string{"table": "users"}},
	})
	if len(c.Values) != 100 || *c.Total != 150 || !c.HasMore || c.Values[99] != "item099" || seen["table"] != "users" {
		t.Errorf("capped completion: %d values, total %v, hasMore %v, context %v", len(c.Values), *c.Total, c.HasMore, seen)
	}
	c = complete(t, k, abi.CompleteParams{Ref: abi.CompleteRef{Type: "resource", URI: "db://{table}/{id}"}, Argument: abi.CompleteArgument{Name: "id", Value: "item14"}})
	if len(c.Values) != 10 || c.HasMore {
		t.Errorf("filtered completion = %+v", c)
	}

	for _, p := range []abi.CompleteParams{
		{Ref: abi.CompleteRef{Type: "prompt", Name: "nope"}, Argument: abi.CompleteArgument{Name: "x"}},
		{Ref: abi.CompleteRef{Type: "tool", Name: "x"}},
	} {
		if e := k.fail(handleComplete, request(p, abi.Context{})); e.Code != abi.CodeInvalidParams {
			t.Errorf("%+v: error %+v", p, e)
		}
	}
}

func TestFilterPrefix(t *testing.T) {
	if got := FilterPrefix([]string{"Go", "gopher", "rust"}, "GO"); !reflect.DeepEqual(got, []string{"Go", "gopher"}) {
		t.Errorf("FilterPrefix = %v", got)
	}
	if got := FilterPrefix(nil, ""); got == nil || len(got) != 0 {
		t.Errorf("FilterPrefix(nil) = %#v", got)
	}
}

func registerResources(t *testing.T) {
	freshRegistry(t)
	Resource(abi.Resource{URI: "config://app", Name: "app", MimeType: "application/json"}, func(ctx *Context, uri string) (*abi.ReadResourceResult, error) {
		return &abi.ReadResourceResult{Contents: []abi.ResourceContents{{Text: `{"debug":true}`}}}, nil
	})
	Resource(abi.Resource{URI: "config://empty"}, func(ctx *Context, uri string) (*abi.ReadResourceResult, error) {
		return nil, nil
	})
	ResourceTemplate(abi.ResourceTemplate{URITemplate: "weather://{city}/current", Name: "weather", MimeType: "text/plain"},
		func(ctx *Context, uri string, vars map[string]string) (*abi.ReadResourceResult, error) {
			switch vars["city"] {
			case "atlantis":
				return nil, fmt.Errorf("city: %w", fs.ErrNotExist)
			case "error":
				return nil, errors.New("weather service down")
			}
			return TextResource(uri, "", "Sunny in "+vars["city"]), nil
		})
	ResourceTemplate(abi.ResourceTemplate{URITemplate: "file:///{+path}"}, func(ctx *Context, uri string, vars map[string]string) (*abi.ReadResourceResult, error) {
		return BlobResource("", "application/octet-stream", []byte(vars["path"])), nil
	})
	ResourceLister(func(ctx *Context) ([]abi.Resource, error) {
		return []abi.Resource{{URI: "file:///a.txt"}, {URI: "config://app"}, {URI: "file:///b.bin", Name: "b"}}, nil
	})
}

func readResource(t *testing.T, k *fakeKernel, uri string) abi.ReadResourceResult {
	t.Helper()
	var r abi.ReadResourceResult
	k.ok(handleReadResource, request(abi.ReadResourceParams{URI: uri}, abi.Context{}), &r)
	return r
}

func TestResources(t *testing.T) {
	k := newFakeKernel(t)
	registerResources(t)
	var list abi.ListResourcesResult
	k.ok(handleListResources, abi.ListInput{}, &list)
	var uris []string
	for _, r := range list.Resources {
		uris = append(uris, r.URI+"|"+r.Name)
	}
	if want := []string{"config://app|app", "config://empty|config://empty", "file:///a.txt|file:///a.txt", "file:///b.bin|b"}; !reflect.DeepEqual(uris, want) {
		t.Errorf("list_resources = %v, want %v", uris, want)
	}
	var templates abi.ListResourceTemplatesResult
	k.ok(handleListResourceTemplates, abi.ListInput{}, &templates)
	if len(templates.ResourceTemplates) != 2 || templates.ResourceTemplates[1].Name != "file:///{+path}" {
		t.Errorf("list_resource_templates = %+v", templates)
	}

	if r := readResource(t, k, "config://app"); len(r.Contents) != 1 || r.Contents[0].URI != "config://app" || r.Contents[0].MimeType != "application/json" {
		t.Errorf("read static = %+v", r)
	}
	if r := readResource(t, k, "weather://paris/current"); r.Contents[0].Text != "Sunny in paris" || r.Contents[0].MimeType != "text/plain" {
		t.Errorf("read template = %+v", r)
	}
	if r := readResource(t, k, "file:///dir/x.bin"); r.Contents[0].Blob != "ZGlyL3guYmlu" || r.Contents[0].URI != "file:///dir/x.bin" {
		t.Errorf("read blob = %+v", r)
	}
	for _, c := range []struct {
		uri  string
		code int
		msg  string
	}{
		{"nothing://here", abi.CodeResourceNotFound, "resource not found: nothing://here"},
		{"weather://atlantis/current", abi.CodeResourceNotFound, "resource not found"},
		{"config://empty", abi.CodeResourceNotFound, "resource not found"},
		{"weather://error/current", abi.CodeInternalError, "weather service down"},
		{"", abi.CodeInvalidParams, "missing uri"},
	} {
		e := k.fail(handleReadResource, request(abi.ReadResourceParams{URI: c.uri}, abi.Context{}))
		if e.Code != c.code || !strings.Contains(e.Message, c.msg) {
			t.Errorf("%s: error %+v, want %d %q", c.uri, e, c.code, c.msg)
		}
		if c.code == abi.CodeResourceNotFound && string(e.Data) != mustJSON(t, map[string]string{"uri": c.uri}) {
			t.Errorf("%s: error data %s", c.uri, e.Data)
		}
	}
	RemoveResource("config://app")
	if e := k.fail(handleReadResource, request(abi.ReadResourceParams{URI: "config://app"}, abi.Context{})); e.Code != abi.CodeResourceNotFound {
		t.Errorf("removed resource: %+v", e)
	}
}

func TestRegistrationRules(t *testing.T) {
	freshRegistry(t)
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s did not panic", name)
			}
		}()
		f()
	}
	noop := func(*Context, struct{}) (string, error) { return "", nil }
	mustPanic("empty tool name", func() { Tool("", "", noop) })
	mustPanic("bad tool name", func() { Tool("has space", "", noop) })
	mustPanic("slice arguments", func() {
		Tool("x", "", func(*Context, []string) (string, error) { return "", nil })
	})
	mustPanic("bad tag", func() {
		Tool("x", "", func(*Context, struct {
			A int `json:"a" jsonschema:"maximum=lots"`
		}) (string, error) {
			return "", nil
		})
	})
	mustPanic("chan result", func() {
		Tool("x", "", func(*Context, struct{}) (chan int, error) { return nil, nil })
	})
	mustPanic("bad template", func() { ResourceTemplate(abi.ResourceTemplate{URITemplate: "x://{"}, nil) })
	mustPanic("empty resource", func() { Resource(abi.Resource{}, nil) })
	mustPanic("empty prompt", func() { Prompt("", "", nil, nil) })

	// Registering again replaces in place; options override schemas.
	Tool("a", "first", noop)
	Tool("b", "second", noop)
	Tool("a", "replaced", noop, WithInputSchema(json.RawMessage(`{"type":"object"}`)), NoOutputSchema(),
		WithAnnotations(abi.ToolAnnotations{Title: "A"}), Destructive(false), WithMeta(abi.Meta{"k": "v"}))
	if len(reg.tools) != 2 || reg.tools[0].tool.Description != "replaced" || string(reg.tools[0].tool.InputSchema) != `{"type":"object"}` ||
		reg.tools[0].tool.Annotations.Title != "A" || *reg.tools[0].tool.Annotations.DestructiveHint || reg.tools[0].tool.Meta["k"] != "v" {
		t.Errorf("tools after replace: %+v", reg.tools[0].tool)
	}
	Tool("c", "structured", func(*Context, struct{}) (greeting, error) { return greeting{}, nil },
		WithOutputSchema(json.RawMessage(`{"type":"object","properties":{}}`)))
	if string(reg.tools[2].tool.OutputSchema) != `{"type":"object","properties":{}}` {
		t.Errorf("WithOutputSchema ignored: %s", reg.tools[2].tool.OutputSchema)
	}
	RemoveTool("a")
	if len(reg.tools) != 2 || reg.tools[0].tool.Name != "b" {
		t.Errorf("after RemoveTool: %d tools", len(reg.tools))
	}
}

func TestRunRecoversPanics(t *testing.T) {
	k := newFakeKernel(t)
	e := k.fail(func([]byte) (any, error) { panic(errors.New("kaput")) }, "")
	if e.Code != abi.CodeInternalError || e.Message != "panic: kaput" {
		t.Errorf("panic error = %+v", e)
	}
	// A value that cannot be encoded is an internal error.
	e = k.fail(func([]byte) (any, error) { return make(chan int), nil }, "")
	if e.Code != abi.CodeInternalError {
		t.Errorf("encoding error = %+v", e)
	}
}

func TestContentHelpers(t *testing.T) {
	for _, c := range []struct {
		got  any
		want string
	}{
		{Text("hi"), `{"type":"text","text":"hi"}`},
		{Image([]byte("png"), "image/png"), `{"type":"image","data":"cG5n","mimeType":"image/png"}`},
		{Audio([]byte("wav"), "audio/wav"), `{"type":"audio","data":"d2F2","mimeType":"audio/wav"}`},
		{ResourceLink("file:///a", "a", "text/plain"), `{"type":"resource_link","mimeType":"text/plain","uri":"file:///a","name":"a"}`},
		{EmbeddedText("file:///a", "text/plain", "x"), `{"type":"resource","resource":{"uri":"file:///a","mimeType":"text/plain","text":"x"}}`},
		{EmbeddedBlob("file:///b", "image/png", []byte{0}), `{"type":"resource","resource":{"uri":"file:///b","mimeType":"image/png","blob":"AA=="}}`},
		{ErrorResult("bad"), `{"content":[{"type":"text","text":"bad"}],"isError":true}`},
		{Result(), `{"content":[]}`},
		{StructuredResult(map[string]int{"n": 1}), `{"content":[{"type":"text","text":"{\"n\":1}"}],"structuredContent":{"n":1}}`},
		{StructuredResult("s"), `{"content":[{"type":"text","text":"\"s\""}],"structuredContent":{"result":"s"}}`},
		{StructuredResult(make(chan int)), `{"content":[{"type":"text","text":"json: unsupported type: chan int"}],"isError":true}`},
		{TextResource("u", "text/plain", ""), `{"contents":[{"uri":"u","mimeType":"text/plain","text":""}]}`},
		{Messages(), `{"messages":[]}`},
	} {
		if got := mustJSON(t, c.got); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}

func TestToolResultKinds(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{Text("a"), `{"content":[{"type":"text","text":"a"}]}`},
		{[]abi.Content{Text("a"), Text("b")}, `{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`},
		{abi.CallToolResult{}, `{"content":[]}`},
		{&abi.CallToolResult{IsError: true}, `{"content":[],"isError":true}`},
		{3.5, `{"content":[{"type":"text","text":"3.5"}],"structuredContent":{"result":3.5}}`},
		{struct {
			A int `json:"a"`
		}{1}, `{"content":[{"type":"text","text":"{\"a\":1}"}],"structuredContent":{"a":1}}`},
	} {
		r, err := toolResult(c.v)
		if err != nil {
			t.Fatal(err)
		}
		if got := mustJSON(t, r); got != c.want {
			t.Errorf("toolResult(%#v) = %s, want %s", c.v, got, c.want)
		}
	}
	for _, v := range []any{nil, (*abi.CallToolResult)(nil), (*greeting)(nil)} {
		if _, err := toolResult(v); err == nil {
			t.Errorf("toolResult(%#v) succeeded", v)
		}
	}
	err := fmt.Errorf("wrapped: %w", ProtocolError(abi.CodeResourceNotFound, "gone"))
	if e, ok := protocolError(err); !ok || e.Code != abi.CodeResourceNotFound {
		t.Errorf("protocolError(%v) = %v, %v", err, e, ok)
	}
	if got := errorText(errors.New("plain")); got != `{"code":-32603,"message":"plain"}` {
		t.Errorf("errorText = %s", got)
	}
}

// TestRequestInputAndClientCapabilities: RequestInput sends the keyed
// questions to request_input and returns the answers by key, telling the
// host's "input required" apart; ClientCan reads the context's
// clientCapabilities.
func TestRequestInputAndClientCapabilities(t *testing.T) {
	k := newFakeKernel(t)
	ctx := newContext(abi.Context{ProtocolVersion: "2026-07-28", ClientCapabilities: json.RawMessage(`{"sampling":{"tools":{}},"roots":null}`)}, nil)
	if ctx.ProtocolVersion != "2026-07-28" || !ctx.ClientCan("sampling") || !ctx.ClientCan("sampling", "tools") || ctx.ClientCan("elicitation") || ctx.ClientCan("roots") || ctx.ClientCan() {
		t.Errorf("context %+v: ClientCan wrong", ctx)
	}
	k.replies[abi.HostRequestInput] = `{"inputResponses":{"name":{"action":"accept","content":{"name":"Ada"}}}}`
	got, err := ctx.RequestInput(map[string]InputRequest{"name": {Method: "elicitation/create", Params: ElicitParams{Message: "name?"}}})
	if err != nil || string(got["name"]) != `{"action":"accept","content":{"name":"Ada"}}` {
		t.Errorf("RequestInput = %s, %v", got, err)
	}
	if in := k.calls[len(k.calls)-1].input; in != `{"inputRequests":{"name":{"method":"elicitation/create","params":{"message":"name?"}}}}` {
		t.Errorf("request_input input %s", in)
	}
	k.replies[abi.HostRequestInput] = `{"error":{"code":-32603,"message":"input required: mcphost answers this request with input_required"}}`
	if _, err := ctx.RequestInput(map[string]InputRequest{"roots": {Method: "roots/list"}}); !IsInputRequired(err) {
		t.Errorf("RequestInput while the client is asked: %v, want IsInputRequired", err)
	}
	if IsInputRequired(errors.New("input required")) {
		t.Error("IsInputRequired of an error that is not the host's")
	}
}

// TestContextNamesTheCaller: the context's Subject and Scopes are those
// the host passes under authentication.
func TestContextNamesTheCaller(t *testing.T) {
	var in abi.Input
	if err := unmarshal([]byte(`{"context":{"id":1,"subject":"alice","scopes":["mcp","notes:write"]}}`), &in); err != nil {
		t.Fatal(err)
	}
	ctx := newContext(in.Context, nil)
	if ctx.Subject != "alice" || !ctx.HasScope("notes:write") || ctx.HasScope("admin") {
		t.Errorf("context %+v: subject or scopes wrong", ctx)
	}
}
