package host

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/pluginfake"
)

// hostFn returns the implementation of a granted host function.
func hostFn(t *testing.T, name string) func(context.Context, []byte) ([]byte, error) {
	t.Helper()
	fn, ok := (&Server{}).HostFunctions("p")[name]
	if !ok {
		t.Fatalf("no host function %s", name)
	}
	return fn
}

// callerPlugin has one tool that calls a host function with the tool's
// arguments as input and returns what it answered (or its error) as text.
func callerPlugin(fn func(context.Context, []byte) ([]byte, error)) *Plugin {
	return NewPlugin("p", "", pluginfake.Caller(fn))
}

func initWithCaps(t *testing.T, h *harness, version string, caps string) {
	t.Helper()
	h.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":` + caps + `,"clientInfo":{"name":"t","version":"1"}}}`)
	h.out.next(t)
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func TestSamplingRoundTripsThroughTheClient(t *testing.T) {
	eachStore(t, func(t *testing.T, newServer func(Options, *Catalog) *Server) {
		h := newHarnessOn(t, newServer, callerPlugin(hostFn(t, abi.HostCreateMessage)))
		initWithCaps(t, h, Version20251125, `{"sampling":{}}`)
		h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10,"bogus":1}}}`)
		req := h.out.next(t)
		if req["method"] != "sampling/createMessage" {
			t.Fatalf("want a sampling request to the client, got %v", req)
		}
		if _, leaked := req["params"].(map[string]any)["bogus"]; leaked {
			t.Fatalf("unknown plugin fields reached the client: %v", req["params"])
		}
		id, _ := json.Marshal(req["id"])
		h.send(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"role":"assistant","content":{"type":"text","text":"hello"},"model":"m"}}`)
		res := result(t, h.out.next(t))
		if text := res["content"].([]any)[0].(map[string]any)["text"].(string); !strings.Contains(text, `"hello"`) {
			t.Fatalf("plugin got %q", text)
		}
	})
}

func TestHostFunctionsFailClearlyWithoutTheClientCapability(t *testing.T) {
	eachStore(t, func(t *testing.T, newServer func(Options, *Catalog) *Server) {
		for name, args := range map[string]string{
			abi.HostCreateMessage:     `{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}`,
			abi.HostCreateElicitation: `{"message":"name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`,
			abi.HostListRoots:         `{}`,
		} {
			h := newHarnessOn(t, newServer, callerPlugin(hostFn(t, name)))
			initWithCaps(t, h, Version20251125, `{}`)
			h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":` + args + `}}`)
			res := result(t, h.out.next(t))
			if text := res["content"].([]any)[0].(map[string]any)["text"].(string); !strings.Contains(text, "cannot serve") {
				t.Errorf("%s without the capability: %q", name, text)
			}
		}
	})
}

func TestElicitationNeedsAFlatFormAndA20250618Client(t *testing.T) {
	eachStore(t, func(t *testing.T, newServer func(Options, *Catalog) *Server) {
		h := newHarnessOn(t, newServer, callerPlugin(hostFn(t, abi.HostCreateElicitation)))
		initWithCaps(t, h, Version20250326, `{"elicitation":{}}`)
		h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{"message":"x","requestedSchema":{"type":"object","properties":{"a":{"type":"string"}}}}}}`)
		if text := result(t, h.out.next(t))["content"].([]any)[0].(map[string]any)["text"].(string); !strings.Contains(text, "cannot serve") {
			t.Errorf("elicitation on 2025-03-26: %q", text)
		}
		h2 := newHarnessOn(t, newServer, callerPlugin(hostFn(t, abi.HostCreateElicitation)))
		initWithCaps(t, h2, Version20251125, `{"elicitation":{"form":{}}}`)
		h2.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{"message":"x","requestedSchema":{"type":"object","properties":{"a":{"type":"object"}}}}}}`)
		if text := result(t, h2.out.next(t))["content"].([]any)[0].(map[string]any)["text"].(string); !strings.Contains(text, "not allowed in a flat form") {
			t.Errorf("nested form: %q", text)
		}
	})
}

// TestDuplicateResponsesDoNotWedgeTheSession: a client that answers one
// server request many times, or answers ids the server never sent, must not
// block the session: the first answer is taken, the rest are dropped, and
// the session keeps serving.
func TestDuplicateResponsesDoNotWedgeTheSession(t *testing.T) {
	eachStore(t, func(t *testing.T, newServer func(Options, *Catalog) *Server) {
		h := newHarnessOn(t, newServer, callerPlugin(hostFn(t, abi.HostCreateMessage)))
		initWithCaps(t, h, Version20251125, `{"sampling":{}}`)
		h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}}}`)
		req := h.out.next(t)
		if req["method"] != "sampling/createMessage" {
			t.Fatalf("want a sampling request to the client, got %v", req)
		}
		id, _ := json.Marshal(req["id"])
		answer := `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"role":"assistant","content":{"type":"text","text":"hello"},"model":"m"}}`
		delivered := make(chan struct{})
		go func() {
			defer close(delivered)
			for range 200 {
				h.send(answer)
			}
			h.send(`{"jsonrpc":"2.0","id":"mcphost-999","result":{}}`)                              // an id never sent
			h.send(`{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":1,"message":"late"}}`) // late, and an error
		}()
		select {
		case <-delivered:
		case <-time.After(5 * time.Second):
			t.Fatal("the session blocked on duplicate responses")
		}
		res := result(t, h.out.next(t))
		if text := res["content"].([]any)[0].(map[string]any)["text"].(string); !strings.Contains(text, `"hello"`) {
			t.Fatalf("plugin got %q", text)
		}
		if pong := h.call(t, 2, "ping", nil); pong["result"] == nil {
			t.Fatalf("ping after the duplicates: %v", pong)
		}
	})
}

// TestHostFunctionsThatAskTheClientEndWithTheCall checks the host
// functions that wait for the client (sampling, elicitation, roots): when
// the client never answers, each returns as soon as the plugin call's
// context ends (here a 300 ms timeout, as the sandbox sets one), well
// within the second of grace SECURITY.md gives a call inside a host
// function, and the client is told the request was cancelled.
func TestHostFunctionsThatAskTheClientEndWithTheCall(t *testing.T) {
	eachStore(t, func(t *testing.T, newServer func(Options, *Catalog) *Server) {
		const timeout, grace = 300 * time.Millisecond, time.Second
		for name, c := range map[string]struct{ method, args, caps string }{
			abi.HostCreateMessage:     {"sampling/createMessage", `{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}`, `{"sampling":{}}`},
			abi.HostCreateElicitation: {"elicitation/create", `{"message":"x","requestedSchema":{"type":"object","properties":{"a":{"type":"string"}}}}`, `{"elicitation":{"form":{}}}`},
			abi.HostListRoots:         {"roots/list", `{}`, `{"roots":{}}`},
		} {
			t.Run(name, func(t *testing.T) {
				fn := hostFn(t, name)
				took := make(chan time.Duration, 1)
				h := newHarnessOn(t, newServer, callerPlugin(func(ctx context.Context, in []byte) ([]byte, error) {
					ctx, cancel := context.WithTimeout(ctx, timeout)
					defer cancel()
					start := time.Now()
					out, err := fn(ctx, in)
					took <- time.Since(start)
					return out, err
				}))
				initWithCaps(t, h, Version20251125, c.caps)
				h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":` + c.args + `}}`)
				if req := h.out.next(t); req["method"] != c.method {
					t.Fatalf("want a %s request to the client, got %v", c.method, req)
				}
				// The client never answers.
				if cancelled := h.out.next(t); cancelled["method"] != "notifications/cancelled" {
					t.Errorf("want the client told of the cancellation, got %v", cancelled)
				}
				if d := <-took; d > timeout+grace {
					t.Errorf("%s returned %v after the call's %v timeout", name, d-timeout, timeout)
				} else {
					t.Logf("%s returned %v after the call's %v timeout", name, d-timeout, timeout)
				}
				if text := result(t, h.out.next(t))["content"].([]any)[0].(map[string]any)["text"].(string); !strings.Contains(text, "deadline exceeded") {
					t.Errorf("the plugin got %q, want the context's error", text)
				}
			})
		}
	})
}
