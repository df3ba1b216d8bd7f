package abi

import "encoding/json"

// This file holds the MCP (2025-11-25) data types that cross the plugin
// boundary. Plugins produce them; the host validates them and downgrades them
// to the protocol version each client negotiated.

// Meta is the free-form _meta object MCP allows on most types.
type Meta map[string]any

// Icon is an icon a client may show for a tool, prompt or resource.
type Icon struct {
	Src      string   `json:"src"`
	MimeType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
	Theme    string   `json:"theme,omitempty"`
}

// Annotations are hints on content and resources.
type Annotations struct {
	Audience     []string `json:"audience,omitempty"`
	Priority     *float64 `json:"priority,omitempty"`
	LastModified string   `json:"lastModified,omitempty"`
}

// ToolAnnotations are hints about a tool's behaviour.
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// ToolExecution describes how a tool may be run (2025-11-25 tasks).
type ToolExecution struct {
	// TaskSupport is TaskForbidden, TaskOptional or TaskRequired.
	TaskSupport string `json:"taskSupport,omitempty"`
}

// The values of ToolExecution.TaskSupport: whether clients may run a tool
// as a task.
const (
	TaskForbidden = "forbidden"
	TaskOptional  = "optional"
	TaskRequired  = "required"
)

// Tool describes a tool a plugin offers.
type Tool struct {
	Name         string           `json:"name"`
	Title        string           `json:"title,omitempty"`
	Description  string           `json:"description,omitempty"`
	InputSchema  json.RawMessage  `json:"inputSchema"`
	OutputSchema json.RawMessage  `json:"outputSchema,omitempty"`
	Annotations  *ToolAnnotations `json:"annotations,omitempty"`
	Execution    *ToolExecution   `json:"execution,omitempty"`
	Icons        []Icon           `json:"icons,omitempty"`
	Meta         Meta             `json:"_meta,omitempty"`
}

// ListToolsResult is the output of list_tools.
type ListToolsResult struct {
	Tools      []Tool `json:"tools"`
	NextCursor string `json:"nextCursor,omitempty"`
}

// CallToolParams is the request of call_tool.
type CallToolParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Meta      Meta            `json:"_meta,omitempty"`
}

// CallToolResult is the output of call_tool.
type CallToolResult struct {
	Content           []Content `json:"content"`
	StructuredContent any       `json:"structuredContent,omitempty"`
	IsError           bool      `json:"isError,omitempty"`
	Meta              Meta      `json:"_meta,omitempty"`
}

// Content types.
const (
	ContentText         = "text"
	ContentImage        = "image"
	ContentAudio        = "audio"
	ContentResourceLink = "resource_link"
	ContentResource     = "resource"
)

// Content is one content block. Type selects which fields are meaningful:
// text: Text; image and audio: Data (base64) and MimeType; resource_link:
// URI, Name, Title, Description, MimeType, Size, Icons; resource: Resource.
type Content struct {
	Type        string            `json:"type"`
	Text        string            `json:"text,omitempty"`
	Data        string            `json:"data,omitempty"`
	MimeType    string            `json:"mimeType,omitempty"`
	URI         string            `json:"uri,omitempty"`
	Name        string            `json:"name,omitempty"`
	Title       string            `json:"title,omitempty"`
	Description string            `json:"description,omitempty"`
	Size        *int64            `json:"size,omitempty"`
	Icons       []Icon            `json:"icons,omitempty"`
	Resource    *ResourceContents `json:"resource,omitempty"`
	Annotations *Annotations      `json:"annotations,omitempty"`
	Meta        Meta              `json:"_meta,omitempty"`
}

// MarshalJSON always writes "text" for text content, even when empty, since
// MCP requires it.
func (c Content) MarshalJSON() ([]byte, error) {
	type plain Content
	if c.Type != ContentText || c.Text != "" {
		return json.Marshal(plain(c))
	}
	return json.Marshal(struct {
		plain
		Text string `json:"text"`
	}{plain(c), ""})
}

// ResourceContents is the content of a resource: Text, or Blob (base64).
type ResourceContents struct {
	URI      string `json:"uri"`
	MimeType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"`
	Meta     Meta   `json:"_meta,omitempty"`
}

// MarshalJSON writes "text" whenever there is no blob, even when empty.
func (r ResourceContents) MarshalJSON() ([]byte, error) {
	type plain ResourceContents
	if r.Blob != "" || r.Text != "" {
		return json.Marshal(plain(r))
	}
	return json.Marshal(struct {
		plain
		Text string `json:"text"`
	}{plain(r), ""})
}

// PromptArgument is an argument a prompt accepts.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// Prompt describes a prompt a plugin offers.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
	Icons       []Icon           `json:"icons,omitempty"`
	Meta        Meta             `json:"_meta,omitempty"`
}

// ListPromptsResult is the output of list_prompts.
type ListPromptsResult struct {
	Prompts    []Prompt `json:"prompts"`
	NextCursor string   `json:"nextCursor,omitempty"`
}

// GetPromptParams is the request of get_prompt.
type GetPromptParams struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
	Meta      Meta              `json:"_meta,omitempty"`
}

// PromptMessage is one message of a prompt.
type PromptMessage struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// GetPromptResult is the output of get_prompt.
type GetPromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
	Meta        Meta            `json:"_meta,omitempty"`
}

// Resource describes a concrete resource a plugin offers.
type Resource struct {
	URI         string       `json:"uri"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	MimeType    string       `json:"mimeType,omitempty"`
	Size        *int64       `json:"size,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Icons       []Icon       `json:"icons,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// ListResourcesResult is the output of list_resources.
type ListResourcesResult struct {
	Resources  []Resource `json:"resources"`
	NextCursor string     `json:"nextCursor,omitempty"`
}

// ResourceTemplate describes a family of resources by an RFC 6570 URI
// template.
type ResourceTemplate struct {
	URITemplate string       `json:"uriTemplate"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	MimeType    string       `json:"mimeType,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Icons       []Icon       `json:"icons,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// ListResourceTemplatesResult is the output of list_resource_templates.
type ListResourceTemplatesResult struct {
	ResourceTemplates []ResourceTemplate `json:"resourceTemplates"`
	NextCursor        string             `json:"nextCursor,omitempty"`
}

// ReadResourceParams is the request of read_resource.
type ReadResourceParams struct {
	URI  string `json:"uri"`
	Meta Meta   `json:"_meta,omitempty"`
}

// ReadResourceResult is the output of read_resource.
type ReadResourceResult struct {
	Contents []ResourceContents `json:"contents"`
	Meta     Meta               `json:"_meta,omitempty"`
}

// CompleteRef names what is being completed. In the plugin input Type is
// "prompt" or "resource" (the MCP "ref/" prefix removed, as hyper-mcp does).
type CompleteRef struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
	URI  string `json:"uri,omitempty"`
}

// Completion reference types as plugins see them.
const (
	RefPrompt   = "prompt"
	RefResource = "resource"
)

// CompleteArgument is the argument being completed.
type CompleteArgument struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// CompleteContext carries arguments the user already filled in.
type CompleteContext struct {
	Arguments map[string]string `json:"arguments,omitempty"`
}

// CompleteParams is the request of complete.
type CompleteParams struct {
	Ref      CompleteRef      `json:"ref"`
	Argument CompleteArgument `json:"argument"`
	Context  *CompleteContext `json:"context,omitempty"`
}

// Completion is a list of completion values (at most 100).
type Completion struct {
	Values  []string `json:"values"`
	Total   *int     `json:"total,omitempty"`
	HasMore bool     `json:"hasMore,omitempty"`
}

// CompleteResult is the output of complete.
type CompleteResult struct {
	Completion Completion `json:"completion"`
}

// LoggingMessageParams is the input of notify_logging_message.
type LoggingMessageParams struct {
	// Level is an RFC 5424 level: debug, info, notice, warning, error,
	// critical, alert, emergency.
	Level  string `json:"level"`
	Logger string `json:"logger,omitempty"`
	Data   any    `json:"data"`
}

// ProgressParams is the input of notify_progress. ProgressToken is the
// token from the request's _meta.progressToken.
type ProgressParams struct {
	ProgressToken any      `json:"progressToken"`
	Progress      float64  `json:"progress"`
	Total         *float64 `json:"total,omitempty"`
	Message       string   `json:"message,omitempty"`
}

// ResourceUpdatedParams is the input of notify_resource_updated.
type ResourceUpdatedParams struct {
	URI string `json:"uri"`
}
