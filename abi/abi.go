// Package abi defines the mcphost plugin ABI: the exports a plugin may
// provide, the host functions it may import, the JSON envelopes that cross
// the boundary and the manifest a plugin embeds to declare what it needs.
//
// The package has no dependencies outside the standard library so that the
// Go PDK can import it when compiled to WebAssembly. ABI.md beside this file
// is the normative description; this file mirrors it in Go.
package abi

import "encoding/json"

// Version is the mcphost ABI version this package describes. A plugin
// declares the version it was built for in its manifest.
const Version = 1

// ManifestSection is the name of the wasm custom section that carries a
// plugin's Manifest as JSON. The host reads it before running any plugin code.
const ManifestSection = "mcphost.manifest"

// Exports a plugin may provide. Every one is optional; the host derives the
// plugin's capabilities from which of them exist.
const (
	ExportListTools             = "list_tools"
	ExportCallTool              = "call_tool"
	ExportListPrompts           = "list_prompts"
	ExportGetPrompt             = "get_prompt"
	ExportListResources         = "list_resources"
	ExportListResourceTemplates = "list_resource_templates"
	ExportReadResource          = "read_resource"
	ExportComplete              = "complete"
	ExportOnRootsListChanged    = "on_roots_list_changed"

	// ExportV1Describe and ExportV1Call form the legacy "v1" (mcp.run
	// servlet) interface: tools only.
	ExportV1Describe = "describe"
	ExportV1Call     = "call"
)

// ExportHTTPErrors is the function a plugin exports to say that it handles
// a failed HTTP request (Extism's http_request) as an error value: mcphost
// then answers a request it refuses or that fails with status 0
// (http_status_code) and the reason as the response body, instead of
// failing the call as Extism hosts do. Only its presence counts: the host
// never calls it (a () -> i32 function returning 0 is conventional). The
// PDKs in pdk/ export it; ABI.md section 5 has the details.
const ExportHTTPErrors = "mcphost_http_errors"

// HostModule is the wasm import module of the mcphost host functions.
const HostModule = "extism:host/user"

// Host functions a plugin may import from HostModule. Each takes and returns
// Extism memory handles (i64) holding JSON; see ABI.md for signatures.
const (
	HostCreateMessage     = "create_message"
	HostCreateElicitation = "create_elicitation"
	HostListRoots         = "list_roots"
	// HostRequestInput asks the client several questions at once, under
	// the plugin's keys (an mcphost extension; ABI.md section 3).
	HostRequestInput              = "request_input"
	HostNotifyLoggingMessage      = "notify_logging_message"
	HostNotifyProgress            = "notify_progress"
	HostNotifyToolListChanged     = "notify_tool_list_changed"
	HostNotifyPromptListChanged   = "notify_prompt_list_changed"
	HostNotifyResourceListChanged = "notify_resource_list_changed"
	HostNotifyResourceUpdated     = "notify_resource_updated"
	// HostNotifyElicitationComplete and HostNotifyURLElicitationCompleted
	// (hyper-mcp's name) are one function under two names; granting
	// either grants both.
	HostNotifyElicitationComplete     = "notify_elicitation_complete"
	HostNotifyURLElicitationCompleted = "notify_url_elicitation_completed"
	// HostGetAccessToken is hyper-mcp's OAuth2 token broker: the input is
	// hyper-mcp's OauthCredentials, the output an AccessToken or null.
	HostGetAccessToken = "get_access_token"
	// HostGetKeyringSecret is hyper-mcp's keyring: the input names an
	// entry ({"service", "user"}), the output is the secret's raw bytes,
	// empty when there is none.
	HostGetKeyringSecret = "get_keyring_secret"
)

// HostSignature is the wasm shape of a host function: whether it takes an
// input and returns an output, each an Extism memory handle (i64) holding
// JSON.
type HostSignature struct {
	Input, Output bool
}

// hostFunctions is every function of HostModule with its signature (the
// table of ABI.md section 3), in the table's order.
var hostFunctions = []struct {
	name string
	sig  HostSignature
}{
	{HostCreateMessage, HostSignature{Input: true, Output: true}},
	{HostCreateElicitation, HostSignature{Input: true, Output: true}},
	{HostListRoots, HostSignature{Output: true}},
	{HostRequestInput, HostSignature{Input: true, Output: true}},
	{HostNotifyLoggingMessage, HostSignature{Input: true}},
	{HostNotifyProgress, HostSignature{Input: true}},
	{HostNotifyToolListChanged, HostSignature{}},
	{HostNotifyPromptListChanged, HostSignature{}},
	{HostNotifyResourceListChanged, HostSignature{}},
	{HostNotifyResourceUpdated, HostSignature{Input: true}},
	{HostNotifyElicitationComplete, HostSignature{Input: true}},
	{HostNotifyURLElicitationCompleted, HostSignature{Input: true}},
	{HostGetAccessToken, HostSignature{Input: true, Output: true}},
	{HostGetKeyringSecret, HostSignature{Input: true, Output: true}},
}

// HostFunctionNames returns the name of every host function in HostModule,
// in the order of ABI.md. The slice is the caller's own.
func HostFunctionNames() []string {
	names := make([]string, len(hostFunctions))
	for i, f := range hostFunctions {
		names[i] = f.name
	}
	return names
}

// HostSignatureOf returns the signature of the host function name, and
// whether HostModule has such a function.
func HostSignatureOf(name string) (HostSignature, bool) {
	for _, f := range hostFunctions {
		if f.name == name {
			return f.sig, true
		}
	}
	return HostSignature{}, false
}

// Manifest is what a plugin declares about itself in the ManifestSection
// custom section. The host never trusts it for anything but a request: what
// the plugin actually gets is what the operator granted.
type Manifest struct {
	// ABI is the ABI version the plugin was built for (Version).
	ABI int `json:"abi"`
	// Name is the plugin's preferred name; the file name wins when absent.
	Name string `json:"name,omitempty"`
	// Version is the plugin's own version string.
	Version string `json:"version,omitempty"`
	// Description says what the plugin is for.
	Description string `json:"description,omitempty"`
	// Needs lists the capabilities the plugin asks the operator for.
	Needs Needs `json:"needs,omitempty"`
}

// Needs is the set of capabilities a plugin requests.
type Needs struct {
	// HostFunctions names functions of HostModule the plugin calls.
	HostFunctions []string `json:"host_functions,omitempty"`
	// Hosts are network hosts the plugin wants to reach ("api.example.com",
	// "*.example.com", "example.com:8443").
	Hosts []string `json:"hosts,omitempty"`
	// Paths are guest paths the plugin expects to be mounted ("/data").
	Paths []string `json:"paths,omitempty"`
	// Config are configuration keys the plugin reads with config_get.
	Config []string `json:"config,omitempty"`
}

// Input is the JSON document the host passes to every request export
// (call_tool, get_prompt, read_resource, complete): the MCP request params
// (without their _meta) plus the request context. The list exports receive
// only Context. The host always sends both fields of Context, as
// hyper-mcp does (ABI.md, "Envelopes").
type Input struct {
	Request json.RawMessage `json:"request,omitempty"`
	Context Context         `json:"context"`
}

// Context describes the MCP request a plugin call serves.
type Context struct {
	// ID is the JSON-RPC id of the client request (string or integer);
	// "mcphost-list" in list calls, which serve no client request.
	ID json.RawMessage `json:"id,omitempty"`
	// Meta is the request's _meta, including progressToken when the client
	// asked for progress.
	Meta map[string]any `json:"_meta,omitempty"`
	// ProtocolVersion is the protocol version the request is served at:
	// its session's, or a 2026-07-28 request's own (an mcphost extension).
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// ClientCapabilities is what the request's client declared it can do,
	// an MCP ClientCapabilities object: at initialize, or in a 2026-07-28
	// request's _meta (an mcphost extension).
	ClientCapabilities json.RawMessage `json:"clientCapabilities,omitempty"`
	// Subject and Scopes name the caller when the HTTP transport
	// authenticates requests: the token's subject and scopes (an mcphost
	// extension). Empty without authentication.
	Subject string   `json:"subject,omitempty"`
	Scopes  []string `json:"scopes,omitempty"`
	// ArgumentsValidated, in the context of a call_tool, says that the
	// host validated the request's arguments against the tool's
	// inputSchema as the plugin listed it (an mcphost extension): a PDK
	// may decode them without checking them again.
	ArgumentsValidated bool `json:"argumentsValidated,omitempty"`
}

// ListInput is the input of the list exports. Request is an mcphost
// extension: when a list export returns a nextCursor, the host asks for the
// next page with Request.Cursor set (hyper-mcp plugins never see it).
type ListInput struct {
	Request *PaginatedRequest `json:"request,omitempty"`
	Context Context           `json:"context"`
}

// PaginatedRequest asks a list export for the page after Cursor.
type PaginatedRequest struct {
	Cursor string `json:"cursor,omitempty"`
}

// V1CallInput is the input of the v1 "call" export.
type V1CallInput struct {
	Params CallToolParams `json:"params"`
}

// V1DescribeResult is the output of the v1 "describe" export.
type V1DescribeResult struct {
	Tools []Tool `json:"tools"`
}

// Error is the error convention of the ABI. An export fails by setting the
// Extism error (error_set) and returning a non-zero status. When the error
// text is a JSON Error with a Code the host accepts (CodeInvalidParams,
// CodeResourceNotFound, CodeInternalError), that code is sent to the client;
// any other text becomes an internal error. Host functions fail by returning
// {"error": Error} instead of their normal result.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error implements the error interface.
func (e *Error) Error() string { return e.Message }

// JSON-RPC error codes a plugin may return through Error.
const (
	CodeInvalidParams    = -32602
	CodeInternalError    = -32603
	CodeResourceNotFound = -32002
)

// HostFunctionError is the envelope a host function returns on failure.
type HostFunctionError struct {
	Error *Error `json:"error"`
}
