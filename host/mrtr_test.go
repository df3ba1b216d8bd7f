package host

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
)

// askingPlugin has one tool, "ask", whose run is fn: it may call the host
// functions of srv, and what it returns is the tool's text.
func askingPlugin(fn func(ctx context.Context, hf map[string]HostFunc, args json.RawMessage) (string, error), srv *Server) *Plugin {
	hf := srv.HostFunctions("p")
	return callerPlugin(func(ctx context.Context, args []byte) ([]byte, error) {
		text, err := fn(ctx, hf, args)
		return []byte(text), err
	})
}

// mrtrHarness serves plugin fn on a server with opts.
func mrtrHarness(t *testing.T, opts Options, fn func(ctx context.Context, hf map[string]HostFunc, args json.RawMessage) (string, error)) *harness {
	t.Helper()
	srv := NewServer(opts, nil)
	srv.catalog.Store(BuildCatalog(context.Background(), []*Plugin{askingPlugin(fn, srv)}, nil))
	return session(t, srv)
}

// elicit asks a one-field form through create_elicitation and returns the
// field's value.
func elicit(ctx context.Context, hf map[string]HostFunc, field string) (string, error) {
	out, err := hf[abi.HostCreateElicitation](ctx, []byte(`{"message":"`+field+`?","requestedSchema":{"type":"object","properties":{"`+field+`":{"type":"string"}}}}`))
	if err != nil {
		return "", err
	}
	var r struct {
		Content map[string]string `json:"content"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return "", err
	}
	return r.Content[field], nil
}

// interview asks two questions, one after the other.
func interview(ctx context.Context, hf map[string]HostFunc, _ json.RawMessage) (string, error) {
	name, err := elicit(ctx, hf, "name")
	if err != nil {
		return "", err
	}
	color, err := elicit(ctx, hf, "color")
	if err != nil {
		return "", err
	}
	return "name=" + name + " color=" + color, nil
}

// modernCall sends a 2026-07-28 tools/call of "ask" with these arguments
// and extra params (inputResponses, requestState), in ctx, and returns
// the response.
func modernCall(t *testing.T, h *harness, ctx context.Context, id int, caps, args, extra string) map[string]any {
	t.Helper()
	raw := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"ask","arguments":%s%s,"_meta":%s}}`, id, args, extra, modernMeta(caps, ""))
	h.sess.Handle(ctx, []byte(raw), h.out)
	for {
		m := h.out.next(t)
		if m["id"] != nil {
			return m
		}
	}
}

// retryWith is the extra params of a retry: the answers and the state.
func retryWith(answers map[string]any, state any) string {
	a, _ := json.Marshal(answers)
	s := ""
	if state != nil {
		b, _ := json.Marshal(state)
		s = `,"requestState":` + string(b)
	}
	return `,"inputResponses":` + string(a) + s
}

func accept(field, value string) map[string]any {
	return map[string]any{"action": "accept", "content": map[string]any{field: value}}
}

// inputRequired checks that a response is an input_required result and
// returns its inputRequests and requestState.
func inputRequired(t *testing.T, resp map[string]any) (map[string]any, any) {
	t.Helper()
	res := result(t, resp)
	if res["resultType"] != "input_required" {
		t.Fatalf("resultType %v, want input_required: %v", res["resultType"], res)
	}
	reqs, _ := res["inputRequests"].(map[string]any)
	if len(reqs) == 0 {
		t.Fatalf("input_required without inputRequests: %v", res)
	}
	if _, ok := res["requestState"].(string); !ok {
		t.Fatalf("input_required without a string requestState: %v", res)
	}
	return reqs, res["requestState"]
}

func toolText(t *testing.T, resp map[string]any) string {
	t.Helper()
	res := result(t, resp)
	if res["resultType"] != "complete" {
		t.Fatalf("resultType %v, want complete: %v", res["resultType"], res)
	}
	return res["content"].([]any)[0].(map[string]any)["text"].(string)
}

const elicitCaps = `{"elicitation":{}}`

// A tool that asks two questions in a row completes over three requests:
// each retry replays the call with the answers so far, which the state
// carries, and the plugin is asked only its next question.
func TestTwoSequentialElicitationsCompleteByReplay(t *testing.T) {
	var runs atomic.Int32
	h := mrtrHarness(t, Options{}, func(ctx context.Context, hf map[string]HostFunc, args json.RawMessage) (string, error) {
		runs.Add(1)
		return interview(ctx, hf, args)
	})
	reqs, state := inputRequired(t, modernCall(t, h, context.Background(), 1, elicitCaps, `{}`, ""))
	if len(reqs) != 1 || reqs["elicitation-1"] == nil {
		t.Fatalf("round 1 asks %v, want elicitation-1 alone", reqs)
	}
	q := reqs["elicitation-1"].(map[string]any)
	if q["method"] != "elicitation/create" || q["params"].(map[string]any)["message"] != "name?" {
		t.Errorf("round 1 question %v, want elicitation/create name?", q)
	}
	reqs, state2 := inputRequired(t, modernCall(t, h, context.Background(), 2, elicitCaps, `{}`, retryWith(map[string]any{"elicitation-1": accept("name", "Ada")}, state)))
	if len(reqs) != 1 || reqs["elicitation-2"] == nil {
		t.Fatalf("round 2 asks %v, want elicitation-2 alone", reqs)
	}
	if state2 == state {
		t.Error("round 2 sent the requestState of round 1 again")
	}
	got := toolText(t, modernCall(t, h, context.Background(), 3, elicitCaps, `{}`, retryWith(map[string]any{"elicitation-2": accept("color", "blue")}, state2)))
	if got != "name=Ada color=blue" {
		t.Errorf("round 3 answered %q, want name=Ada color=blue", got)
	}
	if n := runs.Load(); n != 3 {
		t.Errorf("the plugin ran %d times, want 3 (one per round: replay, no parked instance)", n)
	}
}

// request_input asks several questions at once, with the plugin's keys;
// a legacy session gets the same answers from requests to its client.
func TestRequestInputAsksSeveralQuestionsAtOnce(t *testing.T) {
	h := mrtrHarness(t, Options{}, func(ctx context.Context, hf map[string]HostFunc, _ json.RawMessage) (string, error) {
		out, err := hf[abi.HostRequestInput](ctx, []byte(`{"inputRequests":{
			"user_name":{"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}},
			"greeting":{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"greet"}}],"maxTokens":5}},
			"roots":{"method":"roots/list"}}}`))
		if err != nil {
			return "", err
		}
		var r struct {
			InputResponses map[string]json.RawMessage `json:"inputResponses"`
		}
		if err := json.Unmarshal(out, &r); err != nil {
			return "", err
		}
		return fmt.Sprintf("%d answers", len(r.InputResponses)), nil
	})
	caps := `{"elicitation":{},"sampling":{},"roots":{}}`
	reqs, state := inputRequired(t, modernCall(t, h, context.Background(), 1, caps, `{}`, ""))
	for key, method := range map[string]string{"user_name": "elicitation/create", "greeting": "sampling/createMessage", "roots": "roots/list"} {
		if q, _ := reqs[key].(map[string]any); q == nil || q["method"] != method {
			t.Errorf("inputRequests[%s] = %v, want a %s request", key, reqs[key], method)
		}
	}
	answers := map[string]any{
		"user_name": accept("name", "Ada"),
		"greeting":  map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "hi"}, "model": "m"},
		"roots":     map[string]any{"roots": []any{}},
	}
	if got := toolText(t, modernCall(t, h, context.Background(), 2, caps, `{}`, retryWith(answers, state))); got != "3 answers" {
		t.Errorf("retry answered %q, want 3 answers", got)
	}

	// The same plugin serving a legacy session asks its client.
	initWithCaps(t, h, Version20251125, caps)
	h.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ask","arguments":{}}}`)
	for range 3 {
		m := h.out.next(t)
		var answer any
		switch m["method"] {
		case "elicitation/create":
			answer = answers["user_name"]
		case "sampling/createMessage":
			answer = answers["greeting"]
		case "roots/list":
			answer = answers["roots"]
		default:
			t.Fatalf("legacy session got %v, want a request to the client", m)
		}
		raw, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m["id"], "result": answer})
		h.send(string(raw))
	}
	if got := result(t, h.out.next(t))["content"].([]any)[0].(map[string]any)["text"]; got != "3 answers" {
		t.Errorf("legacy session answered %q, want 3 answers", got)
	}
}

// A retry answering the question without the state (the client dropped
// it) is answered from inputResponses; one answering another key is asked
// again; an answer that is no result object is invalid params.
func TestRetryAnswersAreMatchedByKey(t *testing.T) {
	h := mrtrHarness(t, Options{}, func(ctx context.Context, hf map[string]HostFunc, _ json.RawMessage) (string, error) {
		return elicit(ctx, hf, "name")
	})
	got := toolText(t, modernCall(t, h, context.Background(), 1, elicitCaps, `{}`, retryWith(map[string]any{"elicitation-1": accept("name", "Ada"), "extra": accept("x", "y")}, nil)))
	if got != "Ada" {
		t.Errorf("answered %q, want Ada", got)
	}
	inputRequired(t, modernCall(t, h, context.Background(), 2, elicitCaps, `{}`, retryWith(map[string]any{"wrong_key": accept("name", "Ada")}, nil)))
	resp := modernCall(t, h, context.Background(), 3, elicitCaps, `{}`, retryWith(map[string]any{"elicitation-1": 12345}, nil))
	if code := errCode(t, resp); code != CodeInvalidParams {
		t.Errorf("a number as the answer: code %d, want %d", code, CodeInvalidParams)
	}
	resp = modernCall(t, h, context.Background(), 4, elicitCaps, `{}`, `,"inputResponses":null`)
	if code := errCode(t, resp); code != CodeInvalidParams {
		t.Errorf("inputResponses null: code %d, want %d", code, CodeInvalidParams)
	}
}

// stateReason is the data.reason of an error response about requestState.
func stateReason(t *testing.T, resp map[string]any) string {
	t.Helper()
	if code := errCode(t, resp); code != CodeInvalidParams {
		t.Errorf("code %d, want %d", code, CodeInvalidParams)
	}
	data, _ := resp["error"].(map[string]any)["data"].(map[string]any)
	reason, _ := data["reason"].(string)
	return reason
}

type subjectKey struct{}

// A requestState is refused, each with its own error, when it was
// altered, has expired, was issued to another user, or for other
// arguments or another method.
func TestRequestStateIsBoundAndEachMisuseHasItsOwnError(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	opts := Options{
		RequestStateKeys: [][]byte{[]byte("0123456789abcdef0123456789abcdef")},
		RequestStateTTL:  time.Minute,
		Subject:          func(ctx context.Context) string { s, _ := ctx.Value(subjectKey{}).(string); return s },
	}
	h := mrtrHarness(t, opts, func(ctx context.Context, hf map[string]HostFunc, args json.RawMessage) (string, error) {
		return interview(ctx, hf, args)
	})
	h.srv.now = func() time.Time { return now }
	alice := context.WithValue(context.Background(), subjectKey{}, "alice")
	bob := context.WithValue(context.Background(), subjectKey{}, "bob")
	_, state := inputRequired(t, modernCall(t, h, alice, 1, elicitCaps, `{"topic":"x"}`, ""))
	answer := map[string]any{"elicitation-1": accept("name", "Ada")}
	s := state.(string)
	tampered := s[:len(s)-2] + map[bool]string{true: "AA", false: "AB"}[strings.HasSuffix(s, "AB")]

	for _, tc := range []struct {
		name, reason string
		ctx          context.Context
		args, state  string
		later        time.Duration
	}{
		{"tampered", "tampered", alice, `{"topic":"x"}`, tampered, 0},
		{"garbage", "tampered", alice, `{"topic":"x"}`, "not-a-state", 0},
		{"expired", "expired", alice, `{"topic":"x"}`, s, 2 * time.Minute},
		{"other user", "other-user", bob, `{"topic":"x"}`, s, 0},
		{"other arguments", "other-arguments", alice, `{"topic":"y"}`, s, 0},
	} {
		now = time.Unix(1_800_000_000, 0).Add(tc.later)
		resp := modernCall(t, h, tc.ctx, 2, elicitCaps, tc.args, retryWith(answer, tc.state))
		if got := stateReason(t, resp); got != tc.reason {
			t.Errorf("%s: reason %q, want %q (%v)", tc.name, got, tc.reason, resp)
		}
	}
	now = time.Unix(1_800_000_000, 0)
	inputRequired(t, modernCall(t, h, alice, 3, elicitCaps, `{ "topic" : "x" }`, retryWith(answer, s)))

	// Another method: a state of tools/call presented on prompts/get.
	h.sess.Handle(alice, []byte(`{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"ask","requestState":"`+s+`","_meta":`+modernMeta(elicitCaps, "")+`}}`), h.out)
	if got := stateReason(t, h.out.next(t)); got != "other-request" {
		t.Errorf("another method: reason %q, want other-request", got)
	}
}

// A retry reaching another server that shares only the signing key
// completes there; during a key rotation, a state signed with the old key
// still completes on a server that signs with the new one.
func TestRetryCompletesOnAnotherServerSharingTheKey(t *testing.T) {
	oldKey, newKey := []byte("old-key-old-key-old-key-old-key!"), []byte("new-key-new-key-new-key-new-key!")
	first := mrtrHarness(t, Options{RequestStateKeys: [][]byte{oldKey}}, interview)
	second := mrtrHarness(t, Options{RequestStateKeys: [][]byte{newKey, oldKey}}, interview)
	stranger := mrtrHarness(t, Options{RequestStateKeys: [][]byte{newKey}}, interview)

	_, state := inputRequired(t, modernCall(t, first, context.Background(), 1, elicitCaps, `{}`, ""))
	answer := map[string]any{"elicitation-1": accept("name", "Ada")}
	if got := stateReason(t, modernCall(t, stranger, context.Background(), 2, elicitCaps, `{}`, retryWith(answer, state))); got != "tampered" {
		t.Errorf("a server without the key: reason %q, want tampered", got)
	}
	_, state = inputRequired(t, modernCall(t, second, context.Background(), 3, elicitCaps, `{}`, retryWith(answer, state)))
	got := toolText(t, modernCall(t, second, context.Background(), 4, elicitCaps, `{}`, retryWith(map[string]any{"elicitation-2": accept("color", "red")}, state)))
	if got != "name=Ada color=red" {
		t.Errorf("answered %q, want name=Ada color=red", got)
	}
}

// A replay that asks a different question than the recorded run asked
// under the same key is an error naming the divergence, not a wrong
// answer.
func TestDivergingReplayIsAnError(t *testing.T) {
	var runs atomic.Int32
	h := mrtrHarness(t, Options{}, func(ctx context.Context, hf map[string]HostFunc, _ json.RawMessage) (string, error) {
		return elicit(ctx, hf, fmt.Sprintf("field%d", runs.Add(1)))
	})
	_, state := inputRequired(t, modernCall(t, h, context.Background(), 1, elicitCaps, `{}`, ""))
	resp := modernCall(t, h, context.Background(), 2, elicitCaps, `{}`, retryWith(map[string]any{"elicitation-1": accept("field1", "v")}, state))
	if code := errCode(t, resp); code != CodeInternalError {
		t.Fatalf("diverging replay: code %d, want %d", code, CodeInternalError)
	}
	if msg := resp["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "diverged") || !strings.Contains(msg, "elicitation-1") {
		t.Errorf("diverging replay: message %q, want it to say the replay diverged at elicitation-1", msg)
	}
}

// Only the methods that may answer input_required do: elsewhere (here
// completion/complete) a plugin asking the client gets an error.
func TestInputRequiredOnlyOnToolsPromptsAndResources(t *testing.T) {
	if got := mrtrMethods; len(got) != 3 {
		t.Fatalf("mrtrMethods = %v, want tools/call, prompts/get, resources/read", got)
	}
	for _, m := range []string{"tools/call", "prompts/get", "resources/read"} {
		if !isMRTRMethod(m) {
			t.Errorf("%s may not answer input_required", m)
		}
	}
	if isMRTRMethod("completion/complete") || isMRTRMethod("tools/list") {
		t.Error("completion/complete or tools/list may answer input_required")
	}
}
