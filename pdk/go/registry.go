package pdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/mcphost/mcphost/abi"
)

// PromptArg describes an argument of a prompt.
type PromptArg = abi.PromptArgument

// PromptFunc renders a prompt from its arguments. Required arguments are
// present and non-empty when it runs.
type PromptFunc func(ctx *Context, args map[string]string) (*abi.GetPromptResult, error)

// ResourceFunc reads a resource registered with Resource.
type ResourceFunc func(ctx *Context, uri string) (*abi.ReadResourceResult, error)

// TemplateFunc reads a resource matching a template registered with
// ResourceTemplate; vars holds the template variables taken from uri.
type TemplateFunc func(ctx *Context, uri string, vars map[string]string) (*abi.ReadResourceResult, error)

// ResourceListFunc lists resources known only at run time (see
// ResourceLister).
type ResourceListFunc func(ctx *Context) ([]abi.Resource, error)

// CompletionFunc proposes values for an argument whose current (partial)
// value is value; args holds the other arguments the user already filled
// in. The PDK sends at most 100 values and reports the total.
type CompletionFunc func(ctx *Context, value string, args map[string]string) []string

// MaxCompletionValues is the most values a completion result holds (MCP).
const MaxCompletionValues = 100

type toolDef struct {
	tool           abi.Tool
	input          *schema // nil when WithInputSchema replaced the generated one
	noOutputSchema bool
	call           func(ctx *Context, args json.RawMessage) (*abi.CallToolResult, error)
}

type promptDef struct {
	prompt abi.Prompt
	fn     PromptFunc
}

type resourceDef struct {
	res abi.Resource
	fn  ResourceFunc
}

type templateDef struct {
	tmpl abi.ResourceTemplate
	uri  *uriTemplate
	fn   TemplateFunc
}

type completionKey struct {
	kind string // abi.RefPrompt or abi.RefResource
	ref  string // prompt name or URI template
	arg  string
}

type registry struct {
	tools       []*toolDef
	prompts     []*promptDef
	resources   []*resourceDef
	templates   []*templateDef
	listers     []ResourceListFunc
	completions map[completionKey]CompletionFunc
}

// reg holds what the plugin registered. Plugins run single-threaded, so it
// needs no lock; register from init functions (see the package
// documentation) or during a call.
var reg = newRegistry()

func newRegistry() *registry {
	return &registry{completions: map[completionKey]CompletionFunc{}}
}

// ToolOption configures a tool.
type ToolOption interface{ applyTool(*toolDef) }

// PromptOption configures a prompt.
type PromptOption interface{ applyPrompt(*promptDef) }

// Option configures a tool or a prompt.
type Option interface {
	ToolOption
	PromptOption
}

type option struct {
	tool   func(*toolDef)
	prompt func(*promptDef)
}

func (o option) applyTool(t *toolDef) {
	if o.tool != nil {
		o.tool(t)
	}
}

func (o option) applyPrompt(p *promptDef) {
	if o.prompt != nil {
		o.prompt(p)
	}
}

// WithTitle sets the human-readable title of a tool or prompt.
func WithTitle(title string) Option {
	return option{
		tool:   func(t *toolDef) { t.tool.Title = title },
		prompt: func(p *promptDef) { p.prompt.Title = title },
	}
}

// WithIcons sets the icons of a tool or prompt.
func WithIcons(icons ...abi.Icon) Option {
	return option{
		tool:   func(t *toolDef) { t.tool.Icons = icons },
		prompt: func(p *promptDef) { p.prompt.Icons = icons },
	}
}

// WithMeta sets the _meta of a tool or prompt.
func WithMeta(meta abi.Meta) Option {
	return option{
		tool:   func(t *toolDef) { t.tool.Meta = meta },
		prompt: func(p *promptDef) { p.prompt.Meta = meta },
	}
}

func annotate(f func(a *abi.ToolAnnotations)) ToolOption {
	return option{tool: func(t *toolDef) {
		if t.tool.Annotations == nil {
			t.tool.Annotations = &abi.ToolAnnotations{}
		}
		f(t.tool.Annotations)
	}}
}

func boolPtr(b bool) *bool { return &b }

// WithAnnotations sets all of a tool's annotations at once.
func WithAnnotations(a abi.ToolAnnotations) ToolOption {
	return annotate(func(dst *abi.ToolAnnotations) { *dst = a })
}

// ReadOnly marks a tool as not modifying its environment (readOnlyHint).
func ReadOnly() ToolOption {
	return annotate(func(a *abi.ToolAnnotations) { a.ReadOnlyHint = boolPtr(true) })
}

// Destructive says whether a tool that modifies its environment may
// destroy or overwrite data (destructiveHint; MCP assumes true).
func Destructive(destructive bool) ToolOption {
	return annotate(func(a *abi.ToolAnnotations) { a.DestructiveHint = boolPtr(destructive) })
}

// Idempotent marks a tool whose repeated calls with the same arguments have
// no additional effect (idempotentHint).
func Idempotent() ToolOption {
	return annotate(func(a *abi.ToolAnnotations) { a.IdempotentHint = boolPtr(true) })
}

// OpenWorld says whether a tool interacts with external entities
// (openWorldHint; MCP assumes true).
func OpenWorld(open bool) ToolOption {
	return annotate(func(a *abi.ToolAnnotations) { a.OpenWorldHint = boolPtr(open) })
}

// WithInputSchema replaces the input schema derived from the arguments
// type. The PDK then only checks that the arguments decode into it.
func WithInputSchema(s json.RawMessage) ToolOption {
	return option{tool: func(t *toolDef) { t.tool.InputSchema = s }}
}

// WithOutputSchema replaces the output schema derived from the result type.
func WithOutputSchema(s json.RawMessage) ToolOption {
	return option{tool: func(t *toolDef) { t.tool.OutputSchema = s }}
}

// NoOutputSchema keeps a tool with structured results from declaring an
// output schema.
func NoOutputSchema() ToolOption {
	return option{tool: func(t *toolDef) { t.noOutputSchema = true }}
}

// TaskSupport declares whether clients may run the tool as a task
// (execution.taskSupport, MCP 2025-11-25): "forbidden" (the default when
// unset), "optional" or "required". Long-running tools declare "optional".
// It panics on any other mode.
func TaskSupport(mode string) ToolOption {
	switch mode {
	case "forbidden", "optional", "required":
	default:
		panic(fmt.Sprintf("pdk: TaskSupport(%q): want \"forbidden\", \"optional\" or \"required\"", mode))
	}
	return option{tool: func(t *toolDef) { t.tool.Execution = &abi.ToolExecution{TaskSupport: mode} }}
}

// Tool registers a tool. A is the arguments type: a struct (or pointer to
// one, or a map with string keys) whose fields and tags give the tool's
// inputSchema; use struct{} for a tool without arguments. R is the result:
//
//   - *abi.CallToolResult (or abi.CallToolResult) is returned as is;
//   - string becomes one text content block;
//   - abi.Content or []abi.Content become the result's content;
//   - anything else is structured output: structuredContent holds it (a
//     value that is not a JSON object is wrapped as {"result": value}), a
//     text block holds its JSON, and the tool declares an outputSchema
//     derived from R.
//
// An error returned by fn becomes a tool execution error (a result with
// isError and the error text), except a ProtocolError, which fails the
// request with its code. A panic in fn is a tool execution error too.
// Arguments that do not match the input schema are rejected with a tool
// execution error before fn runs.
//
// Registering a name again replaces the tool. Tool panics when the name is
// not a valid MCP tool name or A or R have no JSON Schema.
func Tool[A, R any](name, description string, fn func(ctx *Context, args A) (R, error), opts ...ToolOption) {
	if err := checkToolName(name); err != nil {
		panic("pdk: " + err.Error())
	}
	def := &toolDef{tool: abi.Tool{Name: name, Description: description}}
	for _, o := range opts {
		o.applyTool(def)
	}
	if def.tool.InputSchema == nil {
		s, err := inputSchema(typeFor[A]())
		if err != nil {
			panic(fmt.Sprintf("pdk: tool %q: arguments: %v", name, err))
		}
		def.input = s
		def.tool.InputSchema = mustMarshal(s)
	}
	if def.noOutputSchema {
		def.tool.OutputSchema = nil
	} else if def.tool.OutputSchema == nil {
		s, err := outputSchema(typeFor[R]())
		if err != nil {
			panic(fmt.Sprintf("pdk: tool %q: result: %v", name, err))
		}
		if s != nil {
			def.tool.OutputSchema = mustMarshal(s)
		}
	}
	input := def.input
	def.call = func(ctx *Context, raw json.RawMessage) (*abi.CallToolResult, error) {
		var args A
		check := input
		if ctx.argumentsValidated { // by the host: do not pay for it twice
			check = nil
		}
		if err := decodeArguments(raw, check, &args); err != nil {
			return ErrorResult("invalid arguments: " + err.Error()), nil
		}
		r, err := invokeTool(fn, ctx, args)
		if err != nil {
			if pe, ok := protocolError(err); ok {
				return nil, pe
			}
			return ErrorResult(err.Error()), nil
		}
		return toolResult(any(r))
	}
	for i, t := range reg.tools {
		if t.tool.Name == name {
			reg.tools[i] = def
			return
		}
	}
	reg.tools = append(reg.tools, def)
}

func invokeTool[A, R any](fn func(*Context, A) (R, error), ctx *Context, args A) (r R, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = panicError(p)
		}
	}()
	return fn(ctx, args)
}

// RemoveTool unregisters a tool. Call NotifyToolListChanged afterwards to
// tell clients.
func RemoveTool(name string) {
	for i, t := range reg.tools {
		if t.tool.Name == name {
			reg.tools = append(reg.tools[:i], reg.tools[i+1:]...)
			return
		}
	}
}

func checkToolName(name string) error {
	if name == "" || len(name) > 128 {
		return fmt.Errorf("tool name %q must have 1 to 128 characters", name)
	}
	for _, c := range name {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.') {
			return fmt.Errorf("tool name %q: only ASCII letters, digits, '_', '-' and '.' are allowed", name)
		}
	}
	return nil
}

func mustMarshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("pdk: " + err.Error())
	}
	return b
}

// inputSchema derives a tool's input schema: an object.
func inputSchema(t reflect.Type) (*schema, error) {
	s, err := schemaFor(t, false)
	if err != nil {
		return nil, err
	}
	if len(s.Type) != 1 || s.Type[0] != "object" {
		return nil, fmt.Errorf("type %s is not a struct or a map with string keys", t)
	}
	if len(s.Properties) == 0 && s.AdditionalProperties == nil {
		s.NoAdditional = true
	}
	return s, nil
}

var (
	callToolResultType = reflect.TypeOf(abi.CallToolResult{})
	contentType        = reflect.TypeOf(abi.Content{})
)

// outputSchema derives a tool's output schema from its result type; nil
// for results that are not structured.
func outputSchema(t reflect.Type) (*schema, error) {
	base := t
	if base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	switch {
	case t.Kind() == reflect.Interface, base == callToolResultType, base == contentType,
		t.Kind() == reflect.String,
		t.Kind() == reflect.Slice && t.Elem() == contentType:
		return nil, nil
	}
	s, err := schemaFor(t, true)
	if err != nil {
		return nil, err
	}
	if len(s.Type) == 1 && s.Type[0] == "object" {
		return s, nil
	}
	(&schemaGen{output: true}).nullable(s, t)
	return &schema{
		Type:       []string{"object"},
		Properties: []property{{Name: "result", Schema: s}},
		Required:   []string{"result"},
	}, nil
}

// decodeArguments validates raw against s (when not nil) and decodes it
// into args.
func decodeArguments(raw json.RawMessage, s *schema, args any) error {
	if trimmed := bytes.TrimSpace(raw); len(trimmed) == 0 || string(trimmed) == "null" {
		raw = json.RawMessage("{}")
	}
	if s != nil {
		v, err := decodeJSON(raw)
		if err != nil {
			return fmt.Errorf("not valid JSON: %v", err)
		}
		if err := validate(s, v, ""); err != nil {
			return err
		}
	}
	if err := unmarshal(raw, args); err != nil {
		return describeUnmarshalError(err)
	}
	return nil
}

func describeUnmarshalError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Errorf("%q: cannot use a JSON %s as %s", te.Field, te.Value, te.Type)
	}
	return err
}

// toolResult turns what a tool handler returned into its result.
func toolResult(v any) (*abi.CallToolResult, error) {
	switch x := v.(type) {
	case nil:
		return nil, fmt.Errorf("tool returned no result")
	case *abi.CallToolResult:
		if x == nil {
			return nil, fmt.Errorf("tool returned a nil result")
		}
		if x.Content == nil {
			x.Content = []abi.Content{}
		}
		return x, nil
	case abi.CallToolResult:
		if x.Content == nil {
			x.Content = []abi.Content{}
		}
		return &x, nil
	case string:
		return Result(Text(x)), nil
	case abi.Content:
		return Result(x), nil
	case []abi.Content:
		return Result(x...), nil
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer:
		if rv.IsNil() {
			return nil, fmt.Errorf("tool returned a nil result")
		}
	case reflect.Map:
		if rv.IsNil() {
			v = struct{}{} // an empty object, as the output schema says
		}
	}
	r, err := structuredResult(v)
	if err != nil {
		return nil, fmt.Errorf("tool result: %w", err)
	}
	return r, nil
}

// Prompt registers a prompt. args describes its arguments; those marked
// Required are checked before fn runs (a missing or empty one fails the
// request with -32602 naming it). An error returned by fn fails the request
// (a ProtocolError with its code, others as internal errors). Registering a
// name again replaces the prompt.
func Prompt(name, description string, args []PromptArg, fn PromptFunc, opts ...PromptOption) {
	if name == "" {
		panic("pdk: prompt name is empty")
	}
	def := &promptDef{prompt: abi.Prompt{Name: name, Description: description, Arguments: args}, fn: fn}
	for _, o := range opts {
		o.applyPrompt(def)
	}
	for i, p := range reg.prompts {
		if p.prompt.Name == name {
			reg.prompts[i] = def
			return
		}
	}
	reg.prompts = append(reg.prompts, def)
}

// RemovePrompt unregisters a prompt. Call NotifyPromptListChanged
// afterwards to tell clients.
func RemovePrompt(name string) {
	for i, p := range reg.prompts {
		if p.prompt.Name == name {
			reg.prompts = append(reg.prompts[:i], reg.prompts[i+1:]...)
			return
		}
	}
}

// Resource registers a concrete resource, listed by list_resources and read
// by fn. The result's contents get res.URI and res.MimeType when they have
// none. Registering a URI again replaces the resource.
func Resource(res abi.Resource, fn ResourceFunc) {
	if res.URI == "" {
		panic("pdk: resource URI is empty")
	}
	if res.Name == "" {
		res.Name = res.URI
	}
	def := &resourceDef{res: res, fn: fn}
	for i, r := range reg.resources {
		if r.res.URI == res.URI {
			reg.resources[i] = def
			return
		}
	}
	reg.resources = append(reg.resources, def)
}

// RemoveResource unregisters a resource registered with Resource. Call
// NotifyResourceListChanged afterwards to tell clients.
func RemoveResource(uri string) {
	for i, r := range reg.resources {
		if r.res.URI == uri {
			reg.resources = append(reg.resources[:i], reg.resources[i+1:]...)
			return
		}
	}
}

// ResourceTemplate registers a resource template (RFC 6570, e.g.
// "file:///{+path}" or "weather://{city}/current"): read_resource calls fn
// for URIs matching it, with the template's variables. Static resources
// match before templates, templates in registration order. Registering a
// template again replaces it; ResourceTemplate panics when the template
// does not parse.
func ResourceTemplate(tmpl abi.ResourceTemplate, fn TemplateFunc) {
	parsed, err := parseURITemplate(tmpl.URITemplate)
	if err != nil {
		panic("pdk: " + err.Error())
	}
	if tmpl.Name == "" {
		tmpl.Name = tmpl.URITemplate
	}
	def := &templateDef{tmpl: tmpl, uri: parsed, fn: fn}
	for i, t := range reg.templates {
		if t.tmpl.URITemplate == tmpl.URITemplate {
			reg.templates[i] = def
			return
		}
	}
	reg.templates = append(reg.templates, def)
}

// ResourceLister registers fn to list resources only known at run time
// (files in a directory, rows of a table). list_resources returns the
// resources registered with Resource, then those of each lister. Reading a
// listed resource needs a Resource or a ResourceTemplate matching its URI.
func ResourceLister(fn ResourceListFunc) {
	reg.listers = append(reg.listers, fn)
}

// CompletePromptArg registers completion for argument arg of prompt.
func CompletePromptArg(prompt, arg string, fn CompletionFunc) {
	reg.completions[completionKey{abi.RefPrompt, prompt, arg}] = fn
}

// CompleteTemplateVar registers completion for variable varName of the
// resource template uriTemplate (as registered with ResourceTemplate).
func CompleteTemplateVar(uriTemplate, varName string, fn CompletionFunc) {
	reg.completions[completionKey{abi.RefResource, uriTemplate, varName}] = fn
}

// FilterPrefix returns the values that start with prefix, ignoring case,
// in their order.
func FilterPrefix(values []string, prefix string) []string {
	out := []string{}
	p := strings.ToLower(prefix)
	for _, v := range values {
		if strings.HasPrefix(strings.ToLower(v), p) {
			out = append(out, v)
		}
	}
	return out
}

// CompleteFrom returns a CompletionFunc proposing the values that start
// with what the user typed (FilterPrefix).
func CompleteFrom(values ...string) CompletionFunc {
	return func(_ *Context, value string, _ map[string]string) []string {
		return FilterPrefix(values, value)
	}
}
