package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/mcphost/mcphost/abi"
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
	// cache is the caching hints of what the plugin lists and reads
	// (cache.go).
	cache cacheHints
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
	raw, err := p.rt.Call(ctx, export, in)
	if err != nil {
		return p.failure(export, err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return &pluginError{rpc: RPCError{Code: CodeInternalError,
			Message: fmt.Sprintf("plugin %s returned malformed output from %s: %v", p.Name, export, err)}}
	}
	return nil
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
		in := abi.ListInput{}
		if cursor != "" {
			in.Request = &abi.PaginatedRequest{Cursor: cursor}
		}
		var res R
		if err := p.call(ctx, export, in, &res); err != nil {
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
		err := p.call(ctx, abi.ExportV1Describe, struct{}{}, &res)
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

// callTool runs a tool by its plugin-side name.
// Its structuredContent, if any, stays as the plugin wrote it, a
// *json.RawMessage, for the outputSchema to check and the response to carry
// without decoding it into Go values and encoding it again.
func (p *Plugin) callTool(ctx context.Context, req *request, params abi.CallToolParams) (*abi.CallToolResult, error) {
	structured := new(json.RawMessage)
	res := abi.CallToolResult{StructuredContent: structured} // decoded into, as it is a non-nil pointer
	var err error
	if p.legacy {
		err = p.call(ctx, abi.ExportV1Call, abi.V1CallInput{Params: params}, &res)
	} else {
		err = p.call(ctx, abi.ExportCallTool, requestInput(req, params), &res)
	}
	if res.StructuredContent == structured && len(*structured) == 0 {
		res.StructuredContent = nil // absent
	}
	return &res, err
}

// requestInput encodes the input envelope of a request export (abi.Input),
// encoding params once, straight into it.
func requestInput(req *request, params any) json.RawMessage {
	request, _ := json.Marshal(params)
	srv := req.sess.srv
	context, _ := json.Marshal(abi.Context{
		ID: req.id, Meta: req.meta, ProtocolVersion: req.version(), ClientCapabilities: req.rawCapabilities(),
		Subject: srv.subject(req.ctx), Scopes: srv.scopes(req.ctx),
	})
	in := make([]byte, 0, len(`{"request":,"context":}`)+len(request)+len(context))
	in = append(in, `{"request":`...)
	in = append(in, request...)
	in = append(in, `,"context":`...)
	in = append(in, context...)
	return append(in, '}')
}
