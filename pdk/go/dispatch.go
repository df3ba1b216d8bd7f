package pdk

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/mcphost/mcphost/abi"
)

// handler serves one export: it gets the export's input and returns the
// value to send as output, or an error to set as the Extism error.
type handler func(input []byte) (any, error)

// run runs h for the current call: it reads the input, writes the output
// or the error (an abi.Error as JSON) and returns the export's status. No
// panic escapes.
func run(h handler) (rc int32) {
	defer func() {
		if r := recover(); r != nil {
			setError(errorText(panicError(r)))
			rc = 1
		}
	}()
	out, err := h(readInput())
	var b []byte
	if err == nil {
		b, err = marshal(out)
	}
	if err != nil {
		setError(errorText(err))
		return 1
	}
	setOutput(b)
	return 0
}

// decodeInput decodes the envelope of a request export and its request.
func decodeInput(in []byte, request any) (*Context, error) {
	var input abi.Input
	if len(bytes.TrimSpace(in)) > 0 {
		if err := unmarshal(in, &input); err != nil {
			return nil, InvalidParams("invalid input: %v", err)
		}
	}
	raw := bytes.TrimSpace(input.Request)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	if err := unmarshal(raw, request); err != nil {
		return nil, InvalidParams("invalid request: %v", err)
	}
	var fallback abi.Meta
	if input.Context.Meta == nil && bytes.Contains(raw, []byte(`"_meta"`)) {
		fallback = requestMeta(raw)
	}
	return newContext(input.Context, fallback), nil
}

// requestMeta returns the request params' _meta, used when the host did not
// put one in the context.
func requestMeta(raw []byte) abi.Meta {
	var r struct {
		Meta abi.Meta `json:"_meta"`
	}
	_ = unmarshal(raw, &r)
	return r.Meta
}

// decodeListInput decodes the envelope of a list export.
func decodeListInput(in []byte) (*Context, error) {
	var input abi.ListInput
	if len(bytes.TrimSpace(in)) > 0 {
		if err := unmarshal(in, &input); err != nil {
			return nil, InvalidParams("invalid input: %v", err)
		}
	}
	return newContext(input.Context, nil), nil
}

func handleListTools(in []byte) (any, error) {
	if _, err := decodeListInput(in); err != nil {
		return nil, err
	}
	tools := make([]abi.Tool, 0, len(reg.tools))
	for _, t := range reg.tools {
		tools = append(tools, t.tool)
	}
	return abi.ListToolsResult{Tools: tools}, nil
}

func handleCallTool(in []byte) (any, error) {
	var p abi.CallToolParams
	ctx, err := decodeInput(in, &p)
	if err != nil {
		return nil, err
	}
	for _, t := range reg.tools {
		if t.tool.Name == p.Name {
			return t.call(ctx, p.Arguments)
		}
	}
	return nil, InvalidParams("unknown tool: %q", p.Name)
}

func handleListPrompts(in []byte) (any, error) {
	if _, err := decodeListInput(in); err != nil {
		return nil, err
	}
	prompts := make([]abi.Prompt, 0, len(reg.prompts))
	for _, p := range reg.prompts {
		prompts = append(prompts, p.prompt)
	}
	return abi.ListPromptsResult{Prompts: prompts}, nil
}

func handleGetPrompt(in []byte) (any, error) {
	var p abi.GetPromptParams
	ctx, err := decodeInput(in, &p)
	if err != nil {
		return nil, err
	}
	var def *promptDef
	for _, d := range reg.prompts {
		if d.prompt.Name == p.Name {
			def = d
			break
		}
	}
	if def == nil {
		return nil, InvalidParams("unknown prompt: %q", p.Name)
	}
	args := p.Arguments
	if args == nil {
		args = map[string]string{}
	}
	for _, a := range def.prompt.Arguments {
		if a.Required && strings.TrimSpace(args[a.Name]) == "" {
			return nil, InvalidParams("prompt %q: missing required argument %q", p.Name, a.Name)
		}
	}
	r, err := def.fn(ctx, args)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, fmt.Errorf("prompt %q returned no result", p.Name)
	}
	if r.Messages == nil {
		r.Messages = []abi.PromptMessage{}
	}
	if r.Description == "" {
		r.Description = def.prompt.Description
	}
	return r, nil
}

func handleListResources(in []byte) (any, error) {
	ctx, err := decodeListInput(in)
	if err != nil {
		return nil, err
	}
	resources := make([]abi.Resource, 0, len(reg.resources))
	seen := map[string]bool{}
	for _, r := range reg.resources {
		resources = append(resources, r.res)
		seen[r.res.URI] = true
	}
	for _, list := range reg.listers {
		more, err := list(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range more {
			if r.URI == "" || seen[r.URI] {
				continue
			}
			if r.Name == "" {
				r.Name = r.URI
			}
			seen[r.URI] = true
			resources = append(resources, r)
		}
	}
	return abi.ListResourcesResult{Resources: resources}, nil
}

func handleListResourceTemplates(in []byte) (any, error) {
	if _, err := decodeListInput(in); err != nil {
		return nil, err
	}
	templates := make([]abi.ResourceTemplate, 0, len(reg.templates))
	for _, t := range reg.templates {
		templates = append(templates, t.tmpl)
	}
	return abi.ListResourceTemplatesResult{ResourceTemplates: templates}, nil
}

func handleReadResource(in []byte) (any, error) {
	var p abi.ReadResourceParams
	ctx, err := decodeInput(in, &p)
	if err != nil {
		return nil, err
	}
	if p.URI == "" {
		return nil, InvalidParams("read_resource: missing uri")
	}
	var (
		r    *abi.ReadResourceResult
		mime string
		done bool
	)
	for _, d := range reg.resources {
		if d.res.URI == p.URI {
			r, err = d.fn(ctx, p.URI)
			mime, done = d.res.MimeType, true
			break
		}
	}
	if !done {
		for _, d := range reg.templates {
			if vars, ok := d.uri.match(p.URI); ok {
				r, err = d.fn(ctx, p.URI, vars)
				mime, done = d.tmpl.MimeType, true
				break
			}
		}
	}
	if !done {
		return nil, ResourceNotFound(p.URI)
	}
	if err != nil {
		if _, ok := protocolError(err); !ok && errors.Is(err, fs.ErrNotExist) {
			return nil, ResourceNotFound(p.URI)
		}
		return nil, err
	}
	if r == nil {
		return nil, ResourceNotFound(p.URI)
	}
	if r.Contents == nil {
		r.Contents = []abi.ResourceContents{}
	}
	for i := range r.Contents {
		c := &r.Contents[i]
		if c.URI == "" {
			c.URI = p.URI
		}
		if c.MimeType == "" {
			c.MimeType = mime
		}
	}
	return r, nil
}

func handleComplete(in []byte) (any, error) {
	var p abi.CompleteParams
	ctx, err := decodeInput(in, &p)
	if err != nil {
		return nil, err
	}
	key := completionKey{kind: strings.TrimPrefix(p.Ref.Type, "ref/"), arg: p.Argument.Name}
	switch key.kind {
	case abi.RefPrompt:
		key.ref = p.Ref.Name
		known := false
		for _, d := range reg.prompts {
			known = known || d.prompt.Name == p.Ref.Name
		}
		if !known {
			return nil, InvalidParams("unknown prompt: %q", p.Ref.Name)
		}
	case abi.RefResource:
		key.ref = p.Ref.URI
	default:
		return nil, InvalidParams("unsupported completion reference type %q", p.Ref.Type)
	}
	var values []string
	if fn := reg.completions[key]; fn != nil {
		args := map[string]string{}
		if p.Context != nil && p.Context.Arguments != nil {
			args = p.Context.Arguments
		}
		values = fn(ctx, p.Argument.Value, args)
	}
	return abi.CompleteResult{Completion: capCompletion(values)}, nil
}

// capCompletion limits values to MaxCompletionValues, reporting the total.
func capCompletion(values []string) abi.Completion {
	total := len(values)
	c := abi.Completion{Values: values, Total: &total}
	if c.Values == nil {
		c.Values = []string{}
	}
	if total > MaxCompletionValues {
		c.Values = values[:MaxCompletionValues]
		c.HasMore = true
	}
	return c
}
