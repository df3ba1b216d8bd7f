package host

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/mcphost/mcphost/abi"
)

// request is one client request being served. It travels in the context of
// the plugin call it causes, so host functions can find the session, the
// progress token and the stream the request's messages belong on.
type request struct {
	sess *Session
	era  *modern // nil in a legacy session (modern.go)
	// input is what a modern request that may be answered input_required
	// knows of the client's answers (mrtr.go); nil otherwise.
	input     *inputRound
	id        json.RawMessage
	method    string
	meta      abi.Meta
	reply     Outbound
	ctx       context.Context
	cancel    context.CancelFunc
	cancelled atomic.Bool // cancelled by notifications/cancelled
	// notification is true for the scope of a client notification a plugin
	// handles (roots.go): there is no id to answer nor progress to report.
	notification bool

	mu           sync.Mutex
	done         bool
	lastProgress *float64
	// declaredCaps is what the client declared, decoded (requires.go).
	declaredCaps map[string]any
	// hints are the caching hints of the result (cache.go); nil for none.
	hints *cacheHints
	// lacking holds the client capabilities a plugin asked for that a
	// 2026-07-28 request did not declare, as a ClientCapabilities object.
	lacking map[string]any
}

type requestKey struct{}

// Caller names whom the plugin call with context ctx serves: the
// authenticated subject of the client request it serves ("" without
// authentication) and that request's session, as an id unique in the
// process. ok is false outside a client request (listings the host makes).
func Caller(ctx context.Context) (subject, session string, ok bool) {
	req := requestFrom(ctx)
	if req == nil {
		return "", "", false
	}
	return req.sess.srv.subject(req.ctx), req.sess.id, true
}

// requestFrom returns the request a context belongs to, or nil.
func requestFrom(ctx context.Context) *request {
	r, _ := ctx.Value(requestKey{}).(*request)
	return r
}

// begin registers a request as in flight. A duplicate id of a request still
// in flight is an invalid request.
func (sess *Session) begin(parent context.Context, m *message, era *modern, meta abi.Meta, reply Outbound) (*request, *RPCError) {
	req := &request{sess: sess, era: era, id: m.ID, method: m.Method, meta: meta, reply: reply}
	ctx, cancel := context.WithCancel(parent)
	stop := context.AfterFunc(sess.closeCtx, cancel)
	req.ctx = context.WithValue(ctx, requestKey{}, req)
	req.cancel = func() { stop(); cancel() }

	key := string(m.ID)
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.closed {
		req.cancel()
		return nil, rpcErrorf(CodeInternalError, "session is closed")
	}
	if _, dup := sess.inflight[key]; dup {
		req.cancel()
		return nil, rpcErrorf(CodeInvalidRequest, "invalid request: id %s is already in use by a request in flight", key)
	}
	sess.inflight[key] = req
	sess.wg.Add(1)
	return req, nil
}

// release frees a request's id: a client may reuse it as soon as it has
// the response, so this comes before the response is sent.
func (sess *Session) release(req *request) {
	sess.mu.Lock()
	if sess.inflight[string(req.id)] == req {
		delete(sess.inflight, string(req.id))
	}
	sess.mu.Unlock()
}

// end marks a request finished, after its response was sent: no more
// progress goes out for it, and its context ends (a task it created starts
// then). The caller still owes sess.wg.Done.
func (sess *Session) end(req *request) {
	req.mu.Lock()
	req.done = true
	req.mu.Unlock()
	req.cancel()
}

// cancelRequest interrupts the in-flight request with the given id, as asked
// by notifications/cancelled. Its response is suppressed.
func (sess *Session) cancelRequest(id json.RawMessage) {
	sess.mu.Lock()
	req := sess.inflight[string(id)]
	sess.mu.Unlock()
	if req == nil {
		return // finished already, or never existed: ignore, as the spec says
	}
	req.cancelled.Store(true)
	req.cancel()
}

// version returns the protocol version of the request: its own in the
// 2026-07-28 era, else its session's.
func (r *request) version() string {
	if r.era != nil {
		return r.era.version
	}
	return r.sess.Version()
}

// capabilities returns what the client declared: in the request's _meta in
// the 2026-07-28 era, else at initialize.
func (r *request) capabilities() clientCapabilities {
	if r.era != nil {
		return r.era.caps
	}
	return r.sess.capabilities()
}

// rawCapabilities returns what the client declared, as it sent it.
func (r *request) rawCapabilities() json.RawMessage {
	if r.era != nil {
		return r.era.capsRaw
	}
	r.sess.mu.Lock()
	defer r.sess.mu.Unlock()
	return r.sess.clientCaps
}

// wantsLog reports whether the request's client takes log messages of this
// level: a 2026-07-28 request takes none unless its _meta names a level.
func (r *request) wantsLog(lvl logLevel) bool {
	if r.era != nil {
		return r.era.logs && lvl >= r.era.logLevel
	}
	return r.sess.wantsLog(lvl)
}

// progressToken returns the request's _meta.progressToken, or nil.
func (r *request) progressToken() any {
	if r.meta == nil {
		return nil
	}
	return r.meta["progressToken"]
}
