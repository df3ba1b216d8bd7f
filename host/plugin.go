package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/mcphost/mcphost/abi"
	"go.opentelemetry.io/otel/trace"
)

// Runtime runs a plugin's exports. The plugin host (package pluginhost)
// gives each plugin a runtime made of the sandbox and the operator's call
// policy; a failed call reports a *CallError.
type Runtime interface {
	Call(ctx context.Context, export string, input []byte) ([]byte, error)
	HasExport(name string) bool
	Close(ctx context.Context) error
}

// CallError is a failed plugin call as a Runtime reports it to the engine.
type CallError struct {
	// Reason says in a few words why the call failed ("plugin trapped",
	// "plugin call timed out", ...); clients see it after the plugin's
	// name. Unused when Own is true.
	Reason string
	// Message is the detail.
	Message string
	// Own is true when the plugin reported the error itself: Message is
	// its own words, possibly an abi.Error object choosing a protocol error
	// code.
	Own bool
	// Canceled is true when the caller canceled the call.
	Canceled bool
	// Outcome names how the call ended, as PluginCall.Outcome counts it
	// (OutcomeTimeout, ...); empty counts as OutcomeError.
	Outcome string
}

// Error implements the error interface.
func (e *CallError) Error() string {
	if e.Own {
		return e.Message
	}
	return e.Reason + ": " + e.Message
}

// Plugin is a loaded plugin as the protocol engine sees it: a runtime, the
// interface flavour it speaks and the operator's settings the engine
// applies itself.
type Plugin struct {
	// Name identifies the plugin (its file name without extension).
	Name string
	// Prefix is prepended to the names of its tools and prompts.
	Prefix string

	rt       Runtime
	legacy   bool     // speaks the v1 describe/call interface
	granted  []string // host functions the operator granted
	exposure Exposure
	// listBudget bounds the time of the plugin's listing (WithListBudget).
	listBudget time.Duration
	// listedAhead is what ListAhead listed, for the first catalog with
	// the plugin; set before the plugin is published, read-only after.
	listedAhead *pluginLists
	// taskSupport overrides the tools' execution.taskSupport, by tool name
	// or "*" (config task_support). See task.go.
	taskSupport map[string]string
	// rank orders the plugin for name clashes (WithRank); 0 is unranked.
	rank int
	// redactArguments, when set, puts a tool call's arguments, redacted
	// by it, in the call's Operation (WithAuditArguments).
	redactArguments func(string) string
	// toolNames is the rule its exposed tool names follow.
	toolNames ToolNames
	// cache is the caching hints of what the plugin lists and reads
	// (cache.go).
	cache cacheHints
	// exactEnvelope: the plugin gets hyper-mcp's request context, id and
	// _meta alone (WithExactHyperMCPContext).
	exactEnvelope bool
	// scopes are the token scopes a request needs to see the plugin
	// (visibility.go).
	scopes []string
	// namingWarned are the naming warnings logged of the plugin
	// (exposedName), so that each is logged once, not at every catalog
	// built with the plugin: a start adds plugins one by one, and 500
	// plugins sharing a tool name made 125,000 lines of 499 warnings.
	namingWarned sync.Map
}

// ToolNames is a rule for exposed tool names.
type ToolNames int

// The rules for exposed tool names.
const (
	// ToolNamesPortable: 1 to 64 of A-Z a-z 0-9 _ -, the pattern of the
	// major LLM APIs' function names, which clients pass tools to.
	ToolNamesPortable ToolNames = iota
	// ToolNamesMCP: MCP's own rule, 1 to 128 of A-Z a-z 0-9 _ - .
	ToolNamesMCP
)

// WithAuditArguments puts the arguments of the plugin's tool calls in
// their Operation (for the audit trail), with redact applied: it removes
// the values that must never be recorded (the plugin's secrets).
func WithAuditArguments(redact func(string) string) PluginOption {
	return func(p *Plugin) { p.redactArguments = redact }
}

// WithRank orders the plugin before those of a greater rank, and before
// every unranked plugin (rank 0), when they expose the same name: the
// first keeps it (catalog.go). pluginhost ranks plugins by the order of
// their [plugins.NAME] tables in the config.
func WithRank(rank int) PluginOption {
	return func(p *Plugin) { p.rank = rank }
}

// WithToolNames sets the rule the plugin's exposed tool names must follow
// (ToolNamesPortable by default); a tool whose name breaks it is left out
// with a warning.
func WithToolNames(rule ToolNames) PluginOption {
	return func(p *Plugin) { p.toolNames = rule }
}

// WithExactHyperMCPContext gives the plugin hyper-mcp's request context
// exactly, its id and _meta alone, without the caller fields of mcphost's
// ABI (protocolVersion, clientCapabilities, subject, scopes): for plugins
// written for hyper-mcp, which pluginhost tells by their lack of an mcphost
// manifest.
func WithExactHyperMCPContext() PluginOption {
	return func(p *Plugin) { p.exactEnvelope = true }
}

// A PluginOption sets one of the operator's settings of a Plugin.
type PluginOption func(*Plugin)

// WithGrantedHostFunctions records the host functions the operator granted
// the plugin, by which the server decides which list_changed capabilities
// it may announce.
func WithGrantedHostFunctions(names []string) PluginOption {
	return func(p *Plugin) { p.granted = slices.Clone(names) }
}

// WithTaskSupport overrides the execution.taskSupport of the plugin's
// tools, by the plugin's own tool name or "*" for every tool: one of
// abi.TaskForbidden, abi.TaskOptional and abi.TaskRequired.
func WithTaskSupport(byTool map[string]string) PluginOption {
	return func(p *Plugin) { p.taskSupport = maps.Clone(byTool) }
}

// WithListBudget sets how long the plugin's listing, all its list exports
// and pages together, may take (DefaultListBudget when not positive). A
// listing still running then fails, as if the plugin had failed it.
func WithListBudget(d time.Duration) PluginOption {
	return func(p *Plugin) { p.listBudget = d }
}

// WithExposure limits what the plugin may expose.
func WithExposure(e Exposure) PluginOption {
	return func(p *Plugin) { p.exposure = e }
}

// NewPlugin wraps a runtime. A plugin that exports describe and call but
// none of the v2 exports speaks the legacy v1 interface.
func NewPlugin(name, prefix string, rt Runtime, opts ...PluginOption) *Plugin {
	legacy := rt.HasExport(abi.ExportV1Describe) && rt.HasExport(abi.ExportV1Call) &&
		!slices.ContainsFunc(v2Exports, rt.HasExport)
	p := &Plugin{Name: name, Prefix: prefix, rt: rt, legacy: legacy}
	for _, o := range opts {
		o(p)
	}
	return p
}

var v2Exports = []string{
	abi.ExportListTools, abi.ExportCallTool, abi.ExportListPrompts, abi.ExportGetPrompt,
	abi.ExportListResources, abi.ExportListResourceTemplates, abi.ExportReadResource, abi.ExportComplete,
}

// Close releases the plugin's instances.
func (p *Plugin) Close(ctx context.Context) error { return p.rt.Close(ctx) }

// pluginError is a failed plugin call. explicit is true when the plugin
// itself chose a protocol error code through the ABI error convention.
type pluginError struct {
	rpc      RPCError
	explicit bool
	canceled bool
}

func (e *pluginError) Error() string { return e.rpc.Message }
func (e *pluginError) Unwrap() error { return &e.rpc }

// allowedPluginCodes are the JSON-RPC codes a plugin may choose.
var allowedPluginCodes = []int{abi.CodeInvalidParams, abi.CodeInternalError, abi.CodeResourceNotFound}

// call runs export with input encoded as JSON and decodes its output into
// out. Output that does not decode is the plugin's fault and says so.
func (p *Plugin) call(ctx context.Context, export string, input, out any) error {
	in, encoded := input.(json.RawMessage)
	if !encoded {
		var err error
		if in, err = json.Marshal(input); err != nil {
			return err
		}
	}
	start := time.Now()
	req := requestFrom(ctx)
	var span trace.Span
	if req != nil {
		ctx, span = startPluginSpan(ctx, req.srv.opts.Tracer, p.Name, export)
	}
	raw, err := p.rt.Call(ctx, export, in)
	if err != nil {
		outcome := outcomeOf(err)
		err = p.failure(export, err)
		p.observe(req, span, export, start, outcome, err)
		return err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		err := &pluginError{rpc: RPCError{Code: CodeInternalError,
			Message: fmt.Sprintf("plugin %s returned malformed output from %s: %v", p.Name, export, err)}}
		p.observe(req, span, export, start, OutcomeMalformedOutput, err)
		return err
	}
	outcome := OutcomeOK
	if r, ok := out.(*abi.CallToolResult); ok && r.IsError {
		outcome = OutcomeToolError
	}
	p.observe(req, span, export, start, outcome, nil)
	return nil
}

// observe tells the Observer of the server whose request req (nil for
// none) is of a call of export that began at start, and ends its span
// (nil for none). Calls the host makes on its own, such as listings at
// load, serve no request and are not told.
func (p *Plugin) observe(req *request, span trace.Span, export string, start time.Time, outcome string, err error) {
	if span != nil {
		endPluginSpan(span, outcome, err)
	}
	if req == nil || req.srv.opts.Observer == nil {
		return
	}
	req.mu.Lock()
	req.call.plugin, req.call.outcome = p, outcome
	req.mu.Unlock()
	if outcome == "rate_limited" {
		req.denied(p.Name, DeniedRateLimit, errorMessage(err), "")
	}
	now := time.Now()
	req.srv.opts.Observer.PluginCalled(PluginCall{Plugin: p.Name, Export: export, Outcome: outcome, Duration: now.Sub(start), Ended: now, Error: errorMessage(err)})
}

// errorMessage is err's message, "" for nil.
func errorMessage(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// outcomeOf returns the outcome of a call that failed with err.
func outcomeOf(err error) string {
	var ce *CallError
	if errors.As(err, &ce) && ce.Outcome != "" {
		return ce.Outcome
	}
	return OutcomeError
}

// failure turns a runtime error into a pluginError.
func (p *Plugin) failure(export string, err error) error {
	var ce *CallError
	if !errors.As(err, &ce) {
		return &pluginError{rpc: RPCError{Code: CodeInternalError, Message: fmt.Sprintf("plugin %s: %s: %v", p.Name, export, err)}}
	}
	if ce.Own {
		var pe abi.Error
		if json.Unmarshal([]byte(ce.Message), &pe) == nil && slices.Contains(allowedPluginCodes, pe.Code) && pe.Message != "" {
			return &pluginError{rpc: RPCError{Code: pe.Code, Message: pe.Message, Data: pe.Data}, explicit: true}
		}
	}
	msg := ce.Message // the plugin's own words, for the model to read
	if !ce.Own {
		msg = fmt.Sprintf("plugin %s: %s: %s", p.Name, ce.Reason, ce.Message)
	}
	return &pluginError{
		rpc:      RPCError{Code: CodeInternalError, Message: msg},
		canceled: ce.Canceled,
	}
}

// ListRequestID is the JSON-RPC id in the context of the list calls the
// host makes on its own, when a plugin loads or announces a list change:
// no client request is being served then, but hyper-mcp's envelope always
// carries an id. It is a string, so that plugins typing the id as a string
// (hyper-mcp's XTP schema) and as a number-or-string (its host) both read it.
const ListRequestID = "mcphost-list"

// maxListPages bounds how many pages the host reads from one list export.
const maxListPages = 100

// maxListedItems bounds how many items the host reads from one list export,
// over all its pages; the rest are left out (a plugin's max_list_items
// caps them further).
const maxListedItems = 10000

// DefaultListBudget is how long a plugin's listing, all its list exports
// and pages together, may take unless WithListBudget says otherwise.
const DefaultListBudget = 5 * time.Second

// listAll reads every page of a list export into one slice. items picks a
// page's entries and nextCursor out of the export's result R. A plugin
// without the export lists nothing.
func listAll[R, T any](ctx context.Context, p *Plugin, export string, items func(*R) ([]T, string)) ([]T, error) {
	if !p.rt.HasExport(export) {
		return nil, nil
	}
	var all []T
	cursor := ""
	for range maxListPages {
		var res R
		if err := p.call(ctx, export, listInput(cursor), &res); err != nil {
			return nil, err
		}
		page, next := items(&res)
		all = append(all, page...)
		if len(all) >= maxListedItems { // the rest are left out, as max_list_items leaves out more
			return all[:maxListedItems], nil
		}
		if next == "" || next == cursor {
			return all, nil
		}
		cursor = next
	}
	return nil, fmt.Errorf("plugin %s: %s returned more than %d pages", p.Name, export, maxListPages)
}

// listTools returns the plugin's tools, through describe for v1 plugins.
func (p *Plugin) listTools(ctx context.Context) ([]abi.Tool, error) {
	if p.legacy {
		var res abi.V1DescribeResult
		err := p.call(ctx, abi.ExportV1Describe, json.RawMessage{}, &res) // an empty input, as hyper-mcp sends
		return res.Tools, err
	}
	return listAll(ctx, p, abi.ExportListTools, func(r *abi.ListToolsResult) ([]abi.Tool, string) { return r.Tools, r.NextCursor })
}

func (p *Plugin) listPrompts(ctx context.Context) ([]abi.Prompt, error) {
	return listAll(ctx, p, abi.ExportListPrompts, func(r *abi.ListPromptsResult) ([]abi.Prompt, string) { return r.Prompts, r.NextCursor })
}

func (p *Plugin) listResources(ctx context.Context) ([]abi.Resource, error) {
	return listAll(ctx, p, abi.ExportListResources, func(r *abi.ListResourcesResult) ([]abi.Resource, string) { return r.Resources, r.NextCursor })
}

func (p *Plugin) listResourceTemplates(ctx context.Context) ([]abi.ResourceTemplate, error) {
	return listAll(ctx, p, abi.ExportListResourceTemplates, func(r *abi.ListResourceTemplatesResult) ([]abi.ResourceTemplate, string) {
		return r.ResourceTemplates, r.NextCursor
	})
}

// callTool runs a tool by its plugin-side name, with arguments that
// runToolCall validated against its inputSchema, as the input's context
// says (abi.Context.ArgumentsValidated).
// Its structuredContent, if any, stays as the plugin wrote it, a
// *json.RawMessage, for the outputSchema to check and the response to carry
// without decoding it into Go values and encoding it again.
func (p *Plugin) callTool(ctx context.Context, req *request, params abi.CallToolParams) (*abi.CallToolResult, error) {
	params.Meta = nil // it is in the context
	structured := new(json.RawMessage)
	res := abi.CallToolResult{StructuredContent: structured} // decoded into, as it is a non-nil pointer
	var err error
	if p.legacy {
		err = p.call(ctx, abi.ExportV1Call, abi.V1CallInput{Params: params}, &res)
	} else {
		err = p.call(ctx, abi.ExportCallTool, p.input(req, params, true), &res)
	}
	if res.StructuredContent == structured && len(*structured) == 0 {
		res.StructuredContent = nil // absent
	}
	return &res, err
}

// input encodes the input envelope of a request export to p (abi.Input),
// encoding params once, straight into it: {"request": params, "context":
// {"id": ID, "_meta": {...}}}, as hyper-mcp's host does, the context with
// the caller's fields of mcphost's ABI (protocolVersion,
// clientCapabilities, subject, scopes) unless p takes hyper-mcp's exactly.
// params must not carry the request's _meta: it goes in the context, and
// only there. argumentsValidated says that params are a tool call's
// whose arguments the host validated.
func (p *Plugin) input(req *request, params any, argumentsValidated bool) json.RawMessage {
	request, _ := json.Marshal(params)
	in := make([]byte, 0, len(`{"request":,"context":{"id":,"_meta":}}`)+len(request)+len(req.id)+256)
	in = append(in, `{"request":`...)
	in = append(in, request...)
	in = append(in, `,"context":`...)
	in = appendContext(in, req.id, req.meta)
	if !p.exactEnvelope {
		in = appendCaller(in[:len(in)-1], req, argumentsValidated) // reopens the context object
	}
	return append(in, '}')
}

// appendCaller appends the caller's fields of a request's context to b,
// an open context object, and argumentsValidated, and closes it.
func appendCaller(b []byte, req *request, argumentsValidated bool) []byte {
	srv := req.srv
	caller, _ := json.Marshal(abi.Context{ProtocolVersion: req.version(), ClientCapabilities: req.rawCapabilities(),
		Subject: req.subject, Scopes: srv.scopes(req.ctx), ArgumentsValidated: argumentsValidated})
	if len(caller) > 2 { // not {}
		b = append(b, ',')
		b = append(b, caller[1:len(caller)-1]...)
	}
	return append(b, '}')
}

// listRequestIDJSON is ListRequestID as JSON.
var listRequestIDJSON = json.RawMessage(`"` + ListRequestID + `"`)

// listInput encodes the input of a list export: {"context": {"id":
// ListRequestID, "_meta": {}}}, with "request": {"cursor": C} beside it
// only when the host asks for the page after C (an mcphost extension:
// hyper-mcp never pages).
func listInput(cursor string) json.RawMessage {
	in := []byte(`{`)
	if cursor != "" {
		page, _ := json.Marshal(abi.PaginatedRequest{Cursor: cursor})
		in = append(append(append(in, `"request":`...), page...), ',')
	}
	in = append(in, `"context":`...)
	in = appendContext(in, listRequestIDJSON, nil)
	return append(in, '}')
}

// appendContext appends hyper-mcp's PluginRequestContext: the id and the
// _meta, both always present ({} for no _meta).
func appendContext(b []byte, id json.RawMessage, meta abi.Meta) []byte {
	if len(id) == 0 { // every request has one; never send an invalid document
		id = listRequestIDJSON
	}
	b = append(b, `{"id":`...)
	b = append(b, id...)
	b = append(b, `,"_meta":`...)
	return append(appendMeta(b, meta), '}')
}

// appendMeta appends meta as a JSON object, {} when it is empty.
func appendMeta(b []byte, meta abi.Meta) []byte {
	if len(meta) == 0 {
		return append(b, `{}`...)
	}
	m, err := json.Marshal(meta)
	if err != nil { // it was decoded from JSON: cannot happen
		return append(b, `{}`...)
	}
	return append(b, m...)
}
