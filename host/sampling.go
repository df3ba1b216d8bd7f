package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// createMessageParams are the sampling/createMessage params a plugin may
// send (2025-11-25). Unknown fields are dropped: the host forwards only what
// the protocol defines.
type createMessageParams struct {
	Messages         []json.RawMessage `json:"messages"`
	ModelPreferences json.RawMessage   `json:"modelPreferences,omitempty"`
	SystemPrompt     string            `json:"systemPrompt,omitempty"`
	IncludeContext   string            `json:"includeContext,omitempty"`
	Temperature      *float64          `json:"temperature,omitempty"`
	MaxTokens        int               `json:"maxTokens"`
	StopSequences    []string          `json:"stopSequences,omitempty"`
	Metadata         json.RawMessage   `json:"metadata,omitempty"`
	Tools            json.RawMessage   `json:"tools,omitempty"`
	ToolChoice       json.RawMessage   `json:"toolChoice,omitempty"`
	Meta             json.RawMessage   `json:"_meta,omitempty"`
}

// createMessage asks the client of the calling request to sample its model.
func createMessage(ctx context.Context, in []byte) ([]byte, error) {
	req := requestFrom(ctx)
	if req == nil {
		return nil, errors.New("create_message: no client request is being served")
	}
	p, err := checkCreateMessage(req, in)
	if err != nil {
		return nil, err
	}
	return req.ask(ctx, "", "sampling/createMessage", p)
}

// checkCreateMessage reads create_message input and checks that the client
// of req can serve it.
func checkCreateMessage(req *request, in []byte) (*createMessageParams, error) {
	var p createMessageParams
	if err := json.Unmarshal(in, &p); err != nil {
		return nil, fmt.Errorf("create_message: bad input: %w", err)
	}
	if len(p.Messages) == 0 || p.MaxTokens <= 0 {
		return nil, errors.New("create_message: messages and a positive maxTokens are required")
	}
	caps := req.capabilities()
	switch {
	case caps.Sampling == nil:
		return nil, req.lacks("the client did not declare the sampling capability", "sampling")
	case (len(p.Tools) > 0 || len(p.ToolChoice) > 0) && (caps.Sampling.Tools == nil || !atLeast(req.version(), Version20251125)):
		return nil, req.lacks("tools in sampling need a 2025-11-25 client that declared sampling.tools", "sampling", "tools")
	case p.IncludeContext != "" && p.IncludeContext != "none" && caps.Sampling.Context == nil:
		return nil, req.lacks("includeContext needs a client that declared sampling.context", "sampling", "context")
	}
	return &p, nil
}

// elicitParams are the elicitation/create params a plugin may send.
type elicitParams struct {
	Mode            string          `json:"mode,omitempty"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	URL             string          `json:"url,omitempty"`
	ElicitationID   string          `json:"elicitationId,omitempty"`
	Meta            json.RawMessage `json:"_meta,omitempty"`
}

// createElicitation asks the user of the calling request's client for input:
// a flat form, or (2025-11-25, when declared) a URL to visit. trackURL is
// told of a URL elicitation before it is sent, and of the client's answer
// (elicitation.go).
func createElicitation(ctx context.Context, in []byte, trackURL func(*request, *elicitParams) (func(json.RawMessage, error), error)) ([]byte, error) {
	req := requestFrom(ctx)
	if req == nil {
		return nil, errors.New("create_elicitation: no client request is being served")
	}
	p, err := checkElicitation(req, in)
	if err != nil {
		return nil, err
	}
	if p.Mode != "url" {
		return req.ask(ctx, "", "elicitation/create", p)
	}
	answered, err := trackURL(req, p)
	if err != nil {
		return nil, err
	}
	res, err := req.ask(ctx, "", "elicitation/create", p)
	answered(res, err)
	return res, err
}

// checkElicitation reads create_elicitation input and checks that the
// client of req can serve it.
func checkElicitation(req *request, in []byte) (*elicitParams, error) {
	var p elicitParams
	if err := json.Unmarshal(in, &p); err != nil {
		return nil, fmt.Errorf("create_elicitation: bad input: %w", err)
	}
	caps := req.capabilities()
	version := req.version()
	switch {
	case !atLeast(version, Version20250618):
		return nil, errClientCannot{"elicitation needs protocol 2025-06-18 or later; this session negotiated " + version}
	case caps.Elicitation == nil:
		return nil, req.lacks("the client did not declare the elicitation capability", "elicitation")
	}
	switch p.Mode {
	case "url":
		if caps.Elicitation.URL == nil || !atLeast(version, Version20251125) {
			return nil, req.lacks("URL elicitation needs a 2025-11-25 client that declared elicitation.url", "elicitation", "url")
		}
		if !validURI(p.URL) || p.ElicitationID == "" {
			return nil, errors.New("create_elicitation: URL mode needs an absolute url and an elicitationId")
		}
	case "", "form":
		if err := checkFlatSchema(p.RequestedSchema); err != nil {
			return nil, fmt.Errorf("create_elicitation: requestedSchema: %w", err)
		}
		if !atLeast(version, Version20251125) {
			p.Mode = "" // mode arrived in 2025-11-25
		}
	default:
		return nil, fmt.Errorf("create_elicitation: unknown mode %q", p.Mode)
	}
	return &p, nil
}

// checkFlatSchema checks that an elicitation form schema is an object whose
// properties are primitives: strings (with formats and enums), numbers,
// integers, booleans, or arrays of enum values (multi-select).
func checkFlatSchema(raw json.RawMessage) error {
	var s struct {
		Type       string `json:"type"`
		Properties map[string]struct {
			Type  string          `json:"type"`
			Items json.RawMessage `json:"items"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &s); err != nil || s.Type != "object" {
		return errors.New(`must be a JSON Schema with "type": "object"`)
	}
	for name, prop := range s.Properties {
		switch prop.Type {
		case "string", "number", "integer", "boolean":
		case "array":
			if len(prop.Items) == 0 {
				return fmt.Errorf("property %q: an array must list its enum items", name)
			}
		default:
			return fmt.Errorf("property %q: type %q is not allowed in a flat form", name, prop.Type)
		}
	}
	return nil
}

// listRoots asks the calling request's client for its roots.
func listRoots(ctx context.Context, _ []byte) ([]byte, error) {
	req := requestFrom(ctx)
	if req == nil {
		return nil, errors.New("list_roots: no client request is being served")
	}
	if err := checkListRoots(req); err != nil {
		return nil, err
	}
	return req.ask(ctx, "", "roots/list", struct{}{})
}

// checkListRoots checks that the client of req declared roots.
func checkListRoots(req *request) error {
	if req.capabilities().Roots == nil {
		return req.lacks("the client did not declare the roots capability", "roots")
	}
	return nil
}
