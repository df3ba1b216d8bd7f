package pdk

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"unsafe"

	"github.com/mcphost/mcphost/abi"
)

// Text returns a text content block.
func Text(s string) abi.Content {
	return abi.Content{Type: abi.ContentText, Text: s}
}

// Image returns an image content block holding data (encoded as base64)
// of the given MIME type ("image/png").
func Image(data []byte, mimeType string) abi.Content {
	return abi.Content{Type: abi.ContentImage, Data: base64.StdEncoding.EncodeToString(data), MimeType: mimeType}
}

// Audio returns an audio content block holding data (encoded as base64)
// of the given MIME type ("audio/wav").
func Audio(data []byte, mimeType string) abi.Content {
	return abi.Content{Type: abi.ContentAudio, Data: base64.StdEncoding.EncodeToString(data), MimeType: mimeType}
}

// ResourceLink returns a resource_link content block pointing at uri. Set
// Title, Description, Size or Icons on the result for more detail.
func ResourceLink(uri, name, mimeType string) abi.Content {
	return abi.Content{Type: abi.ContentResourceLink, URI: uri, Name: name, MimeType: mimeType}
}

// EmbeddedText returns an embedded resource content block with text.
func EmbeddedText(uri, mimeType, text string) abi.Content {
	return abi.Content{Type: abi.ContentResource, Resource: &abi.ResourceContents{URI: uri, MimeType: mimeType, Text: text}}
}

// EmbeddedBlob returns an embedded resource content block with binary data
// (encoded as base64).
func EmbeddedBlob(uri, mimeType string, data []byte) abi.Content {
	return abi.Content{Type: abi.ContentResource, Resource: &abi.ResourceContents{
		URI: uri, MimeType: mimeType, Blob: base64.StdEncoding.EncodeToString(data),
	}}
}

// Result returns a tool result made of content.
func Result(content ...abi.Content) *abi.CallToolResult {
	if content == nil {
		content = []abi.Content{}
	}
	return &abi.CallToolResult{Content: content}
}

// ErrorResult returns a tool result reporting a tool execution error
// (isError) with msg as its text. Returning a plain error from a tool handler
// has the same effect.
func ErrorResult(msg string) *abi.CallToolResult {
	return &abi.CallToolResult{Content: []abi.Content{Text(msg)}, IsError: true}
}

// StructuredResult returns a tool result whose structuredContent is v and
// whose content is v's JSON as text, as MCP recommends for compatibility.
// A v that is not a JSON object is wrapped as {"result": v}. If v cannot be
// encoded the result is an ErrorResult.
func StructuredResult(v any) *abi.CallToolResult {
	r, err := structuredResult(v)
	if err != nil {
		return ErrorResult(err.Error())
	}
	// The caller may change the result: its text gets bytes of its own.
	r.Content[0].Text = strings.Clone(r.Content[0].Text)
	return r
}

// structuredResult is StructuredResult for a result encoded at once: its
// text shares the bytes of its structuredContent (in a TinyGo plugin a copy
// is garbage for the collector), so neither may change.
func structuredResult(v any) (*abi.CallToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	structured := json.RawMessage(b)
	if len(b) == 0 || b[0] != '{' {
		// What json.Marshal(map[string]json.RawMessage{"result": b}) writes,
		// without scanning b again: b is already compact.
		structured = append(append([]byte(`{"result":`), b...), '}')
	}
	return &abi.CallToolResult{Content: []abi.Content{Text(unsafe.String(unsafe.SliceData(b), len(b)))}, StructuredContent: structured}, nil
}

// TextResource returns a read_resource result with one text content.
func TextResource(uri, mimeType, text string) *abi.ReadResourceResult {
	return &abi.ReadResourceResult{Contents: []abi.ResourceContents{{URI: uri, MimeType: mimeType, Text: text}}}
}

// BlobResource returns a read_resource result with one binary content
// (encoded as base64).
func BlobResource(uri, mimeType string, data []byte) *abi.ReadResourceResult {
	return &abi.ReadResourceResult{Contents: []abi.ResourceContents{{
		URI: uri, MimeType: mimeType, Blob: base64.StdEncoding.EncodeToString(data),
	}}}
}

// Roles of prompt and sampling messages.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// UserMessage returns a prompt message from the user with text.
func UserMessage(text string) abi.PromptMessage {
	return abi.PromptMessage{Role: RoleUser, Content: Text(text)}
}

// AssistantMessage returns a prompt message from the assistant with text.
func AssistantMessage(text string) abi.PromptMessage {
	return abi.PromptMessage{Role: RoleAssistant, Content: Text(text)}
}

// Messages returns a get_prompt result made of msgs. The prompt's
// description is filled in when the result has none.
func Messages(msgs ...abi.PromptMessage) *abi.GetPromptResult {
	if msgs == nil {
		msgs = []abi.PromptMessage{}
	}
	return &abi.GetPromptResult{Messages: msgs}
}
