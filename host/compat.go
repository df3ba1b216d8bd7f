package host

import (
	"fmt"

	"github.com/mcphost/mcphost/abi"
)

// This file downgrades what plugins return to the protocol version a client
// negotiated: a client never receives fields or content types newer than
// its version.

func downgradeTool(t abi.Tool, v string) abi.Tool {
	if atLeast(v, Version20260728) {
		t.Execution = nil // tasks left the core for an extension
	}
	if !atLeast(v, Version20251125) {
		t.Icons, t.Execution = nil, nil
	}
	if !atLeast(v, Version20250618) {
		t.Title, t.OutputSchema = "", nil
	}
	if !atLeast(v, Version20250326) {
		t.Annotations = nil
	}
	return t
}

func downgradePrompt(p abi.Prompt, v string) abi.Prompt {
	if !atLeast(v, Version20251125) {
		p.Icons = nil
	}
	if !atLeast(v, Version20250618) {
		p.Title = ""
		args := make([]abi.PromptArgument, len(p.Arguments))
		for i, a := range p.Arguments {
			a.Title = ""
			args[i] = a
		}
		p.Arguments = args
	}
	return p
}

func downgradeResource(r abi.Resource, v string) abi.Resource {
	downgradeResourceFields(v, &r.Icons, &r.Title, &r.Annotations)
	return r
}

func downgradeTemplate(t abi.ResourceTemplate, v string) abi.ResourceTemplate {
	downgradeResourceFields(v, &t.Icons, &t.Title, &t.Annotations)
	return t
}

// downgradeResourceFields drops the fields a resource and a resource
// template share that version v lacks: icons (2025-11-25), the title and
// the annotations' lastModified (2025-06-18).
func downgradeResourceFields(v string, icons *[]abi.Icon, title *string, annotations **abi.Annotations) {
	if !atLeast(v, Version20251125) {
		*icons = nil
	}
	if !atLeast(v, Version20250618) {
		*title = ""
		*annotations = downgradeAnnotations(*annotations)
	}
}

// downgradeAnnotations drops lastModified (2025-06-18).
func downgradeAnnotations(a *abi.Annotations) *abi.Annotations {
	if a == nil || a.LastModified == "" {
		return a
	}
	c := *a
	c.LastModified = ""
	return &c
}

func downgradeToolResult(r *abi.CallToolResult, v string) *abi.CallToolResult {
	if !atLeast(v, Version20250618) {
		r.StructuredContent = nil
	}
	for i := range r.Content {
		r.Content[i] = downgradeContent(r.Content[i], v)
	}
	return r
}

func downgradePromptResult(r *abi.GetPromptResult, v string) *abi.GetPromptResult {
	for i := range r.Messages {
		r.Messages[i].Content = downgradeContent(r.Messages[i].Content, v)
	}
	return r
}

// downgradeContent rewrites content a version does not know as text that
// describes it: resource links before 2025-06-18, audio before 2025-03-26.
func downgradeContent(c abi.Content, v string) abi.Content {
	if !atLeast(v, Version20251125) {
		c.Icons = nil
	}
	if !atLeast(v, Version20250618) {
		c.Annotations = downgradeAnnotations(c.Annotations)
		c.Title = ""
		if c.Type == abi.ContentResourceLink {
			return abi.Content{Type: abi.ContentText, Text: fmt.Sprintf("[resource: %s] %s", c.Name, c.URI), Annotations: c.Annotations}
		}
	}
	if !atLeast(v, Version20250326) {
		if c.Type == abi.ContentAudio {
			return abi.Content{Type: abi.ContentText, Text: fmt.Sprintf("[audio: %s, %d base64 characters]", c.MimeType, len(c.Data))}
		}
	}
	return c
}
