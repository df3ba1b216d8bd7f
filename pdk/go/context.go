package pdk

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcphost/mcphost/abi"
)

// Context is the MCP request a handler serves. It is valid only during the
// handler call.
//
// The methods that call mcphost host functions (Progress, Log,
// CreateMessage, Elicit, ListRoots) make the plugin import that function
// from extism:host/user; declare it in the manifest's needs.host_functions
// so the operator can grant it. Functions a plugin never calls are not
// imported.
type Context struct {
	// ID is the JSON-RPC id of the client request (string or number), as
	// raw JSON; empty for list requests the host did not attribute.
	ID json.RawMessage
	// Meta is the request's _meta, including progressToken when the client
	// asked for progress notifications.
	Meta abi.Meta
	// ProtocolVersion is the MCP version the request is served at; "" for
	// a host older than this field.
	ProtocolVersion string
	// ClientCapabilities is what the request's client declared it can do
	// (an MCP ClientCapabilities object, raw); empty when unknown.
	ClientCapabilities json.RawMessage
	// Subject and Scopes name the caller when the host authenticates
	// requests: its token's subject and scopes; empty otherwise.
	Subject string
	Scopes  []string

	// argumentsValidated: the host validated a tool call's arguments
	// against the listed inputSchema (abi.Context.ArgumentsValidated).
	argumentsValidated bool
}

// HasScope reports whether the caller's token has scope.
func (c *Context) HasScope(scope string) bool {
	for _, s := range c.Scopes {
		if s == scope {
			return true
		}
	}
	return false
}

func newContext(c abi.Context, fallback abi.Meta) *Context {
	meta := abi.Meta(c.Meta)
	if meta == nil {
		meta = fallback
	}
	return &Context{ID: c.ID, Meta: meta, ProtocolVersion: c.ProtocolVersion, ClientCapabilities: c.ClientCapabilities, Subject: c.Subject, Scopes: c.Scopes,
		argumentsValidated: c.ArgumentsValidated}
}

// ClientCan reports whether the request's client declared the capability
// named by path, such as "elicitation" or "sampling", "tools".
func (c *Context) ClientCan(path ...string) bool {
	var caps map[string]json.RawMessage
	raw := c.ClientCapabilities
	for _, key := range path {
		if unmarshal(raw, &caps) != nil {
			return false
		}
		next, ok := caps[key]
		if !ok || string(next) == "null" {
			return false
		}
		raw, caps = next, nil
	}
	return len(path) > 0
}

// InputRequest is one question of RequestInput: Method is
// "elicitation/create", "sampling/createMessage" or "roots/list", Params
// its params (ElicitParams, CreateMessageParams, nil).
type InputRequest struct {
	Method string `json:"method"`
	Params any    `json:"params,omitempty"`
}

// RequestInput asks the client several questions at once, each under a
// key of the plugin's (host function request_input), and returns the
// answers by key. In a 2026-07-28 request that does not hold every answer
// yet it fails with an error for which IsInputRequired is true: return it
// (or anything: the host sets the output aside), and the host runs the
// call again, from the start, once the client answers (ABI.md section 3).
func (c *Context) RequestInput(questions map[string]InputRequest) (map[string]json.RawMessage, error) {
	in, err := allocJSON(map[string]any{"inputRequests": questions})
	if err != nil {
		return nil, err
	}
	out := hostRequestInput(in)
	extFree(in)
	var r struct {
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
	}
	if err := hostResult(abi.HostRequestInput, out, &r); err != nil {
		return nil, err
	}
	return r.InputResponses, nil
}

// IsInputRequired reports whether err is the host saying that the client
// is being asked, and the call will run again with its answer.
func IsInputRequired(err error) bool {
	he, ok := err.(*HostError)
	return ok && strings.HasPrefix(he.Message, "input required")
}

// ProgressToken returns the request's _meta.progressToken, nil when the
// client did not ask for progress.
func (c *Context) ProgressToken() any {
	if c == nil || c.Meta == nil {
		return nil
	}
	return c.Meta["progressToken"]
}

// Progress reports progress of the request to the client (host function
// notify_progress). total <= 0 means the total is unknown; message may be
// empty. Progress should increase with each call. Without a progress token
// in the request it does nothing.
func (c *Context) Progress(progress, total float64, message string) {
	token := c.ProgressToken()
	if token == nil {
		return
	}
	p := abi.ProgressParams{ProgressToken: token, Progress: progress, Message: message}
	if total > 0 {
		p.Total = &total
	}
	in, err := allocJSON(p)
	if err != nil {
		return
	}
	hostNotifyProgress(in)
	extFree(in)
}

// Log levels of Context.Log (RFC 5424, as MCP uses them).
const (
	LevelDebug     = "debug"
	LevelInfo      = "info"
	LevelNotice    = "notice"
	LevelWarning   = "warning"
	LevelError     = "error"
	LevelCritical  = "critical"
	LevelAlert     = "alert"
	LevelEmergency = "emergency"
)

// Log sends a log message to the client (host function
// notify_logging_message). level is one of the Level constants ("info" when
// empty). The message's data is msg alone when data is nil, otherwise
// {"message": msg, "data": data}. The host drops messages below the level
// the client set.
func (c *Context) Log(level, msg string, data any) {
	if level == "" {
		level = LevelInfo
	}
	var payload any = msg
	if data != nil {
		payload = map[string]any{"message": msg, "data": data}
	}
	in, err := allocJSON(abi.LoggingMessageParams{Level: level, Data: payload})
	if err != nil {
		in, _ = allocJSON(abi.LoggingMessageParams{Level: level, Data: msg})
	}
	hostNotifyLoggingMessage(in)
	extFree(in)
}

// HostError is the error a host function reported ({"error": {...}}).
type HostError struct {
	// Function is the host function that failed.
	Function string
	// Code and Message are the host's JSON-RPC error.
	Code    int
	Message string
}

func (e *HostError) Error() string { return e.Function + ": " + e.Message }

// hostResult decodes the JSON a host function returned at offset (and frees
// it) into out, or returns the error it reported.
func hostResult(function string, offset uint64, out any) error {
	b := takeBlock(offset)
	if len(b) == 0 {
		return &HostError{Function: function, Code: abi.CodeInternalError, Message: "no result"}
	}
	var fail abi.HostFunctionError
	if unmarshal(b, &fail) == nil && fail.Error != nil {
		return &HostError{Function: function, Code: fail.Error.Code, Message: fail.Error.Message}
	}
	if err := unmarshal(b, out); err != nil {
		return &HostError{Function: function, Code: abi.CodeInternalError, Message: "invalid result: " + err.Error()}
	}
	return nil
}

// SamplingMessage is a message of a sampling request.
type SamplingMessage struct {
	Role    string      `json:"role"`
	Content abi.Content `json:"content"`
}

// ModelHint names a model (or model family) the server would like.
type ModelHint struct {
	Name string `json:"name,omitempty"`
}

// ModelPreferences are the server's preferences for model selection.
type ModelPreferences struct {
	Hints                []ModelHint `json:"hints,omitempty"`
	CostPriority         *float64    `json:"costPriority,omitempty"`
	SpeedPriority        *float64    `json:"speedPriority,omitempty"`
	IntelligencePriority *float64    `json:"intelligencePriority,omitempty"`
}

// CreateMessageParams are the params of an MCP sampling/createMessage
// request.
type CreateMessageParams struct {
	Messages         []SamplingMessage `json:"messages"`
	ModelPreferences *ModelPreferences `json:"modelPreferences,omitempty"`
	SystemPrompt     string            `json:"systemPrompt,omitempty"`
	// IncludeContext is "none", "thisServer" or "allServers".
	IncludeContext string   `json:"includeContext,omitempty"`
	Temperature    *float64 `json:"temperature,omitempty"`
	MaxTokens      int      `json:"maxTokens"`
	StopSequences  []string `json:"stopSequences,omitempty"`
	Metadata       any      `json:"metadata,omitempty"`
}

// CreateMessageResult is the client's answer to a sampling request.
type CreateMessageResult struct {
	Role string `json:"role"`
	// Content holds the content block(s) of the reply.
	Content    []abi.Content `json:"content"`
	Model      string        `json:"model"`
	StopReason string        `json:"stopReason,omitempty"`
}

// UnmarshalJSON accepts content as one block or as an array of blocks.
func (r *CreateMessageResult) UnmarshalJSON(b []byte) error {
	var raw struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		Model      string          `json:"model"`
		StopReason string          `json:"stopReason"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*r = CreateMessageResult{Role: raw.Role, Model: raw.Model, StopReason: raw.StopReason}
	c := strings.TrimSpace(string(raw.Content))
	switch {
	case c == "" || c == "null":
	case c[0] == '[':
		return json.Unmarshal(raw.Content, &r.Content)
	default:
		var one abi.Content
		if err := json.Unmarshal(raw.Content, &one); err != nil {
			return err
		}
		r.Content = []abi.Content{one}
	}
	return nil
}

// Text returns the text of the reply's text blocks.
func (r *CreateMessageResult) Text() string {
	var sb strings.Builder
	for _, c := range r.Content {
		if c.Type == abi.ContentText {
			sb.WriteString(c.Text)
		}
	}
	return sb.String()
}

// CreateMessage asks the client to sample an LLM (MCP sampling; host
// function create_message).
func (c *Context) CreateMessage(p CreateMessageParams) (*CreateMessageResult, error) {
	in, err := allocJSON(p)
	if err != nil {
		return nil, err
	}
	out := hostCreateMessage(in)
	var r CreateMessageResult
	err = hostResult(abi.HostCreateMessage, out, &r)
	extFree(in)
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// Elicitation actions.
const (
	ActionAccept  = "accept"
	ActionDecline = "decline"
	ActionCancel  = "cancel"
)

// ElicitParams are the params of an MCP elicitation/create request.
type ElicitParams struct {
	// Mode is "form" (the default) or "url".
	Mode    string `json:"mode,omitempty"`
	Message string `json:"message"`
	// RequestedSchema is the flat object schema of the form (form mode).
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	// URL and ElicitationID are for url mode.
	URL           string `json:"url,omitempty"`
	ElicitationID string `json:"elicitationId,omitempty"`
}

// ElicitResult is the user's answer to an elicitation.
type ElicitResult struct {
	// Action is ActionAccept, ActionDecline or ActionCancel.
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// Elicit asks the user for information through the client (MCP
// elicitation; host function create_elicitation).
func (c *Context) Elicit(p ElicitParams) (*ElicitResult, error) {
	in, err := allocJSON(p)
	if err != nil {
		return nil, err
	}
	out := hostCreateElicitation(in)
	var r ElicitResult
	err = hostResult(abi.HostCreateElicitation, out, &r)
	extFree(in)
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// ElicitAs asks the user to fill in a form whose schema is derived from T
// (a struct of primitive fields, tagged as for tool arguments) and decodes
// the answer into T. action is ActionAccept when value holds the answer.
func ElicitAs[T any](ctx *Context, message string) (value T, action string, err error) {
	s, err := schemaFor(typeFor[T](), false)
	if err != nil {
		return value, "", err
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return value, "", err
	}
	r, err := ctx.Elicit(ElicitParams{Message: message, RequestedSchema: raw})
	if err != nil {
		return value, "", err
	}
	if r.Action != ActionAccept {
		return value, r.Action, nil
	}
	b, err := json.Marshal(r.Content)
	if err == nil {
		err = json.Unmarshal(b, &value)
	}
	if err != nil {
		return value, r.Action, fmt.Errorf("elicitation answer: %w", err)
	}
	return value, r.Action, nil
}

// Root is a root (a directory or other URI) the client exposes.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// ListRoots returns the client's roots (MCP roots/list; host function
// list_roots).
func (c *Context) ListRoots() ([]Root, error) {
	var r struct {
		Roots []Root `json:"roots"`
	}
	if err := hostResult(abi.HostListRoots, hostListRoots(), &r); err != nil {
		return nil, err
	}
	return r.Roots, nil
}

// NotifyToolListChanged tells clients the plugin's tools changed (host
// function notify_tool_list_changed), e.g. after Tool or RemoveTool during a
// call.
func NotifyToolListChanged() { hostNotifyToolListChanged() }

// NotifyPromptListChanged tells clients the plugin's prompts changed (host
// function notify_prompt_list_changed).
func NotifyPromptListChanged() { hostNotifyPromptListChanged() }

// NotifyResourceListChanged tells clients the plugin's resources changed
// (host function notify_resource_list_changed).
func NotifyResourceListChanged() { hostNotifyResourceListChanged() }

// NotifyElicitationComplete tells the client that the out-of-band
// interaction of a URL-mode elicitation (Elicit with Mode "url") finished
// (host function notify_elicitation_complete). elicitationID must be one
// the plugin sent and the user accepted; the host sends the notification
// once, to the client that was asked, and ignores other ids.
func NotifyElicitationComplete(elicitationID string) {
	in, err := allocJSON(struct {
		ElicitationID string `json:"elicitationId"`
	}{elicitationID})
	if err != nil {
		return
	}
	hostNotifyElicitationComplete(in)
	extFree(in)
}

// NotifyResourceUpdated tells clients subscribed to uri that it changed
// (host function notify_resource_updated).
func NotifyResourceUpdated(uri string) {
	in, err := allocJSON(abi.ResourceUpdatedParams{URI: uri})
	if err != nil {
		return
	}
	hostNotifyResourceUpdated(in)
	extFree(in)
}
