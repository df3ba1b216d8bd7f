package host

import (
	"context"
	"encoding/json"

	"github.com/mcphost/mcphost/abi"
)

// Each request's params are decoded once, at dispatch, into the typed
// params of its method; the handler, the request's _meta and the task rules
// all read that one value.

// params is the typed params of a request method.
type params interface {
	// metadata returns the request's _meta.
	metadata() abi.Meta
}

// meta is the _meta of the params of methods whose abi type has none.
type meta struct {
	Meta abi.Meta `json:"_meta,omitempty"`
}

func (m *meta) metadata() abi.Meta { return m.Meta }

// method serves one request method: decode reads the params, serve
// answers.
type method struct {
	decode func(raw json.RawMessage) (params, *RPCError)
	serve  func(ctx context.Context, req *request, p params) (any, error)
}

// handle makes the method whose params are a P, served by serve.
func handle[P any, PP interface {
	*P
	params
}](serve func(ctx context.Context, req *request, p PP) (any, error)) method {
	return method{
		decode: func(raw json.RawMessage) (params, *RPCError) {
			p := PP(new(P))
			if err := decodeParams(raw, p); err != nil {
				return nil, err
			}
			return p, nil
		},
		serve: func(ctx context.Context, req *request, p params) (any, error) { return serve(ctx, req, p.(PP)) },
	}
}

// The params of each method.
type (
	pingParams struct{ meta }
	listParams struct {
		meta
		Cursor string `json:"cursor"`
	}
	callToolParams struct {
		abi.CallToolParams
		Task *taskParams `json:"task"`
		inputRetry
	}
	getPromptParams struct {
		abi.GetPromptParams
		inputRetry
	}
	readResourceParams struct {
		abi.ReadResourceParams
		inputRetry
	}
	completeParams struct {
		meta
		Ref      abi.CompleteRef       `json:"ref"`
		Argument *abi.CompleteArgument `json:"argument"`
		Context  *abi.CompleteContext  `json:"context"`
	}
	setLevelParams struct {
		meta
		Level string `json:"level"`
	}
	subscribeParams struct {
		meta
		URI string `json:"uri"`
	}
	taskIDParams struct {
		meta
		TaskID string `json:"taskId"`
	}
)

func (p *callToolParams) metadata() abi.Meta     { return p.Meta }
func (p *getPromptParams) metadata() abi.Meta    { return p.Meta }
func (p *readResourceParams) metadata() abi.Meta { return p.Meta }

// salient returns what a requestState of these params is bound to: the
// name or URI and the arguments, canonically encoded.
func (p *callToolParams) salient() []byte {
	return salient(p.Name, canonicalJSON(p.Arguments))
}

func (p *getPromptParams) salient() []byte {
	args, _ := json.Marshal(p.Arguments)
	return salient(p.Name, args)
}

func (p *readResourceParams) salient() []byte { return salient(p.URI, nil) }

func salient(name string, args []byte) []byte {
	out, _ := json.Marshal([]any{name, json.RawMessage(orNull(args))})
	return out
}

func orNull(raw []byte) []byte {
	if len(raw) == 0 {
		return []byte("null")
	}
	return raw
}
