package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
)

// Multi round-trip requests (2026-07-28): a 2026-07-28 request has no stream to
// send the client a request on. When a plugin serving tools/call,
// prompts/get or resources/read asks the client something (create_message,
// create_elicitation, list_roots, request_input) that the request does not
// answer yet, the host function fails with errInputRequired, the plugin's
// output is set aside, and the request is answered with resultType
// "input_required": the questions under their keys, and a signed
// requestState (requeststate.go) recording the answers the run used and
// the questions it asked. The client retries with inputResponses and the
// state; the plugin's call runs again from the start, and each question it
// asks again is answered from the record or the retry's inputResponses.
// No instance waits for the person answering, and any replica holding the
// key can serve the retry. A replay that asks a different question under a
// recorded key has diverged: the request fails saying so.

// mrtrMethods are the requests that may be answered input_required.
var mrtrMethods = []string{"tools/call", "prompts/get", "resources/read"}

func isMRTRMethod(method string) bool { return slices.Contains(mrtrMethods, method) }

// errInputRequired is what a host function asking the client returns to
// the plugin while the request does not have the answer yet.
var errInputRequired = errors.New("input required: mcphost answers this request with input_required and runs this call again once the client answers (multi round-trip request); the call's output is not used")

// inputRetry is the part of a request's params that retries it:
// inputResponses and the echoed requestState.
type inputRetry struct {
	InputResponses json.RawMessage `json:"inputResponses,omitempty"`
	RequestState   *string         `json:"requestState,omitempty"`
}

func (r *inputRetry) retry() *inputRetry { return r }

// retryable params may carry inputResponses and a requestState; salient is
// what a requestState is bound to besides the method.
type retryable interface {
	params
	retry() *inputRetry
	salient() []byte
}

// inputRequest is one question of an input_required result.
type inputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// inputRequiredResult is the InputRequiredResult of 2026-07-28.
type inputRequiredResult struct {
	ResultType    string                  `json:"resultType"`
	InputRequests map[string]inputRequest `json:"inputRequests"`
	RequestState  string                  `json:"requestState"`
}

// inputRound is what one run of a 2026-07-28 request knows of the client's
// answers, and what the run asked.
type inputRound struct {
	method, params, subject string
	responses               map[string]json.RawMessage // the retry's inputResponses
	state                   *requestState              // the verified requestState; nil on a first request

	mu       sync.Mutex
	next     int                       // the number of the next automatic key
	digests  map[string]string         // key -> digest of the question asked this run
	used     map[string]recordedAnswer // the answers this run used
	asked    map[string]inputRequest   // the questions without an answer
	failure  *RPCError                 // a diverging replay or an invalid answer
	detached bool                      // the run became a task's (task20260728.go)
}

// openRound reads the retry params of a 2026-07-28 request that may be
// answered input_required: the requestState must verify and be bound to
// this request, and inputResponses must be an object.
func (s *Server) openRound(ctx context.Context, method string, p retryable) (*inputRound, *RPCError) {
	r := p.retry()
	round := &inputRound{
		method:  method,
		params:  digest([]byte(method), p.salient()),
		subject: digest([]byte(s.subject(ctx))),
		digests: map[string]string{},
		used:    map[string]recordedAnswer{},
		asked:   map[string]inputRequest{},
	}
	if len(r.InputResponses) > 0 {
		if err := json.Unmarshal(r.InputResponses, &round.responses); err != nil || round.responses == nil {
			return nil, rpcErrorf(CodeInvalidParams, "invalid params: inputResponses must be an object of results by key")
		}
	}
	if r.RequestState != nil {
		st, rpcErr := s.stateKeys.open(*r.RequestState)
		if rpcErr != nil {
			return nil, rpcErr
		}
		if rpcErr := st.check(method, round.params, round.subject, s.clock()); rpcErr != nil {
			return nil, rpcErr
		}
		round.state = st
	}
	return round, nil
}

// autoKey returns the key of a question the plugin asked without one:
// its kind and its number among such questions in the run.
func (round *inputRound) autoKey(method string) string {
	round.mu.Lock()
	defer round.mu.Unlock()
	round.next++
	kind := map[string]string{"sampling/createMessage": "sampling", "elicitation/create": "elicitation", "roots/list": "roots"}[method]
	return fmt.Sprintf("%s-%d", kind, round.next)
}

// answer returns the client's answer to a question, from the record of the
// earlier rounds or from the retry's inputResponses, or errInputRequired
// after noting the question for the input_required result.
func (round *inputRound) answer(key, method string, params json.RawMessage) (json.RawMessage, error) {
	q := digest([]byte(method), canonicalJSON(params))
	round.mu.Lock()
	defer round.mu.Unlock()
	if prev, ok := round.digests[key]; ok && prev != q {
		return nil, fmt.Errorf("input key %q was already used for another question in this call", key)
	}
	round.digests[key] = q
	if round.state != nil {
		if rec, ok := round.state.Answers[key]; ok {
			if rec.Question != q {
				return nil, round.diverged(key, method)
			}
			round.used[key] = rec
			return rec.Answer, nil
		}
		if pending, ok := round.state.Pending[key]; ok && pending != q {
			return nil, round.diverged(key, method)
		}
	}
	if a, ok := round.responses[key]; ok {
		if err := checkAnswer(method, a); err != nil {
			if round.failure == nil {
				round.failure = rpcErrorf(CodeInvalidParams, "invalid params: inputResponses[%q] is not a result of %s: %v", key, method, err)
			}
			return nil, err
		}
		round.used[key] = recordedAnswer{Question: q, Answer: a}
		return a, nil
	}
	round.asked[key] = inputRequest{Method: method, Params: params}
	return nil, errInputRequired
}

// diverged records that the replay asked another question than the
// recorded run under key. The caller holds round.mu.
func (round *inputRound) diverged(key, method string) error {
	if round.failure == nil {
		round.failure = rpcErrorf(CodeInternalError, "internal error: the replay of this %s diverged from the recorded run: under input key %q the plugin asked a different %s question than before; a plugin's questions may depend only on the request and the answers it was given. Send the request again without requestState", round.method, key, method)
	}
	return errors.New("this call's replay diverged from the recorded run; the request fails")
}

// finish turns the outcome of a run into the request's answer: the failure
// of a diverging replay or invalid answer, else input_required when the run
// asked questions without answers, else the plugin's own outcome. A run
// that became a task answers for itself.
func (round *inputRound) finish(s *Server, res any, err error) (any, error) {
	round.mu.Lock()
	defer round.mu.Unlock()
	if round.detached {
		return res, err
	}
	if round.failure != nil {
		return nil, round.failure
	}
	if len(round.asked) == 0 {
		return res, err
	}
	st := &requestState{
		Method:  round.method,
		Params:  round.params,
		Subject: round.subject,
		Expires: s.clock().Add(s.stateTTL()).UnixMilli(),
		Answers: round.used,
		Pending: map[string]string{},
	}
	for key := range round.asked {
		st.Pending[key] = round.digests[key]
	}
	sealed, sealErr := s.stateKeys.seal(st)
	if sealErr != nil {
		return nil, sealErr
	}
	return inputRequiredResult{ResultType: "input_required", InputRequests: round.asked, RequestState: sealed}, nil
}

// detach hands the round over to a task, unless the run asked the client
// already (then the request answers input_required): from now on the
// questions it asks are the task's. It reports whether it did.
func (round *inputRound) detach() bool {
	round.mu.Lock()
	defer round.mu.Unlock()
	if len(round.asked) > 0 || round.failure != nil {
		return false
	}
	round.detached = true
	return true
}

// replayRound is the round of a task's replay with the answers so far.
func replayRound(answers map[string]recordedAnswer) *inputRound {
	return &inputRound{
		state:    &requestState{Answers: answers},
		digests:  map[string]string{},
		used:     map[string]recordedAnswer{},
		asked:    map[string]inputRequest{},
		detached: true,
	}
}

// checkAnswer checks that an answer is a result of the method asked.
func checkAnswer(method string, raw json.RawMessage) error {
	var a struct {
		Action  *string         `json:"action"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
		Roots   []struct {
			URI string `json:"uri"`
		} `json:"roots"`
	}
	if err := decodeObject(raw, &a); err != nil {
		return err
	}
	switch method {
	case "elicitation/create":
		if a.Action == nil || !slices.Contains([]string{"accept", "decline", "cancel"}, *a.Action) {
			return errors.New(`an ElicitResult needs an action: "accept", "decline" or "cancel"`)
		}
	case "sampling/createMessage":
		if a.Role == "" || len(a.Content) == 0 {
			return errors.New("a CreateMessageResult needs a role and content")
		}
	case "roots/list":
		if a.Roots == nil {
			return errors.New("a ListRootsResult needs roots")
		}
	}
	return nil
}

// decodeObject decodes raw, which must be a JSON object, into v.
func decodeObject(raw json.RawMessage, v any) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return fmt.Errorf("want an object, got %.40s", raw)
	}
	return json.Unmarshal(raw, v)
}

// ask puts a question to the client of r, as its era does: in a session,
// a request on the request's stream; in a 2026-07-28 request, an answer of
// the retry or errInputRequired. key "" lets the host number the question.
func (r *request) ask(ctx context.Context, key, method string, params any) (json.RawMessage, error) {
	return r.era.ask(ctx, r, key, method, params)
}

// requestInputParams are the input of request_input: questions by key.
type requestInputParams struct {
	InputRequests map[string]inputRequest `json:"inputRequests"`
}

// askClient is the host function request_input: it asks the
// client several questions at once, under the plugin's keys, and returns
// the answers as {"inputResponses": {key: result}}. A legacy session's
// client is asked one question after the other; a 2026-07-28 request answers
// input_required with every question it has no answer to.
func askClient() HostFunc {
	return func(ctx context.Context, in []byte) ([]byte, error) {
		req := requestFrom(ctx)
		if req == nil {
			return nil, errors.New("request_input: no client request is being served")
		}
		var p requestInputParams
		if err := json.Unmarshal(in, &p); err != nil {
			return nil, fmt.Errorf("request_input: bad input: %w", err)
		}
		if len(p.InputRequests) == 0 {
			return nil, errors.New("request_input: inputRequests must name at least one question")
		}
		keys := make([]string, 0, len(p.InputRequests))
		for key := range p.InputRequests {
			keys = append(keys, key)
		}
		sort.Strings(keys)
		questions := make([]any, len(keys))
		for i, key := range keys {
			q, err := checkQuestion(req, p.InputRequests[key])
			if err != nil {
				return nil, fmt.Errorf("request_input: %q: %w", key, err)
			}
			questions[i] = q
		}
		answers := map[string]json.RawMessage{}
		missing := false
		for i, key := range keys {
			a, err := req.ask(ctx, key, p.InputRequests[key].Method, questions[i])
			switch {
			case errors.Is(err, errInputRequired):
				missing = true
			case err != nil:
				return nil, err
			default:
				answers[key] = a
			}
		}
		if missing {
			return nil, errInputRequired
		}
		return json.Marshal(map[string]any{"inputResponses": answers})
	}
}

// checkQuestion checks one question of request_input as the host function
// of its method would, and returns the params to send.
func checkQuestion(req *request, q inputRequest) (any, error) {
	params := q.Params
	if len(params) == 0 {
		params = json.RawMessage(`{}`)
	}
	switch q.Method {
	case "sampling/createMessage":
		return checkCreateMessage(req, params)
	case "elicitation/create":
		p, err := checkElicitation(req, params)
		if err == nil && p.Mode == "url" {
			err = errors.New("a URL-mode elicitation is asked with create_elicitation, which tracks its completion")
		}
		return p, err
	case "roots/list":
		return struct{}{}, checkListRoots(req)
	}
	return nil, fmt.Errorf("method %q is not one a server asks a client (sampling/createMessage, elicitation/create, roots/list)", q.Method)
}
