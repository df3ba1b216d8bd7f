package host

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mcphost/mcphost/abi"
)

// conn is what requests arrive on: a session's stream (stdio, in process,
// an HTTP session), or the one HTTP exchange of a 2026-07-28 request,
// which has no session. It owns the lifetime of the requests it carries,
// here and nowhere else: start registers a request's id (for
// notifications/cancelled and to refuse a duplicate) and counts it in the
// wait group that Wait waits for; finish ends its context and the count;
// close cancels them all.
type conn struct {
	srv *Server
	out Outbound // the messages the server sends of its own accord
	id  string   // its name, unique in the process (Caller): a session's with an id is the id's hash, as on any replica
	// plugins are the plugins it serves; nil: every plugin (visibility.go).
	plugins *PluginSet
	// transport is what it is served on (SessionOptions.Transport).
	transport string
	// sessionHash is the hashed SessionOptions.ID, "" for none.
	sessionHash string

	closeCtx    context.Context // ends when the conn closes
	cancelClose context.CancelFunc
	// endCtx ends when the session ends for good (Session.Close), which
	// ends its tasks; a session a replica lets go (Session.Detach) closes
	// there, and its tasks run on.
	endCtx    context.Context
	cancelEnd context.CancelFunc
	wg        sync.WaitGroup // requests started and not finished

	// mu guards the fields below and, in a Session, the session's own.
	mu       sync.Mutex
	closed   bool
	inflight map[string]*request
	// client is the name the client gave in initialize (clientInfo).
	client string
}

// clientMetaKey is where a 2026-07-28 request's _meta names its client.
const clientMetaKey = "io.modelcontextprotocol/clientInfo"

// clientName returns the name of the client of a request with params p
// (nil when they did not decode): its _meta's clientInfo, else what the
// session's initialize said.
func (c *conn) clientName(p params) string {
	if p != nil {
		if info, ok := p.metadata()[clientMetaKey].(map[string]any); ok {
			if name, ok := info["name"].(string); ok {
				return name
			}
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.client
}

// connIDs numbers the conns of the process.
var connIDs atomic.Uint64

// newConn returns a conn on transport whose server-initiated messages go
// to out, serving plugins (nil: every plugin).
func (s *Server) newConn(out Outbound, plugins *PluginSet, transport string) *conn {
	ctx, cancel := context.WithCancel(context.Background())
	end, cancelEnd := context.WithCancel(context.Background())
	return &conn{srv: s, out: out, id: strconv.FormatUint(connIDs.Add(1), 10), plugins: plugins, transport: transport,
		closeCtx: ctx, cancelClose: cancel, endCtx: end, cancelEnd: cancelEnd, inflight: map[string]*request{}}
}

// request is one client request being served, or the scope of a client
// notification a plugin handles. It travels in the context of the plugin
// call it causes, so host functions can find its conn, its era, the
// progress token and the stream its messages belong on.
type request struct {
	srv  *Server
	conn *conn // what it arrived on
	era  era   // the protocol revision it is served at (era.go)
	// input is what a 2026-07-28 request that may be answered
	// input_required knows of the client's answers (mrtr.go); nil
	// otherwise.
	input     *inputRound
	id        json.RawMessage
	method    string
	meta      abi.Meta
	reply     Outbound
	subject   string // the authenticated subject (Options.Subject), read once
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
	// call is the last plugin call the request made (audit.go).
	call callRecord
}

type requestKey struct{}

// Caller names whom the plugin call with context ctx serves: the
// authenticated subject of the client request it serves ("" without
// authentication) and the session (or HTTP exchange) it arrived on, as an
// id unique in the process. ok is false outside a client request
// (listings the host makes).
func Caller(ctx context.Context) (subject, session string, ok bool) {
	req := requestFrom(ctx)
	if req == nil {
		return "", "", false
	}
	return req.subject, req.conn.id, true
}

// requestFrom returns the request a context belongs to, or nil.
func requestFrom(ctx context.Context) *request {
	r, _ := ctx.Value(requestKey{}).(*request)
	return r
}

// start begins a request of method, served at era, on the conn, with a
// context from parent that also ends when the conn closes. A request with
// an id is registered as in flight: a duplicate id of a request still in
// flight is an invalid request. A nil id opens the scope of a client
// notification instead. Every started request is counted until finish.
func (c *conn) start(parent context.Context, id json.RawMessage, method string, e era, meta abi.Meta, reply Outbound) (*request, *RPCError) {
	req := &request{srv: c.srv, conn: c, era: e, id: id, method: method, meta: meta, reply: reply, notification: id == nil,
		subject: c.srv.subject(parent)}
	ctx, cancel := context.WithCancel(parent)
	stop := context.AfterFunc(c.closeCtx, cancel)
	req.ctx = context.WithValue(ctx, requestKey{}, req)
	req.cancel = func() { stop(); cancel() }

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		req.cancel()
		return nil, rpcErrorf(CodeInternalError, "session is closed")
	}
	if id != nil {
		key := string(id)
		if _, dup := c.inflight[key]; dup {
			req.cancel()
			return nil, rpcErrorf(CodeInvalidRequest, "invalid request: id %s is already in use by a request in flight", key)
		}
		c.inflight[key] = req
	}
	c.wg.Add(1)
	return req, nil
}

// release frees a request's id: a client may reuse it as soon as it has
// the response, so this comes before the response is sent.
func (c *conn) release(req *request) {
	c.mu.Lock()
	if c.inflight[string(req.id)] == req {
		delete(c.inflight, string(req.id))
	}
	c.mu.Unlock()
}

// finish ends a request that start began, after its response was sent:
// no more progress goes out for it, its context ends (a task it created
// starts then) and Wait no longer waits for it.
func (c *conn) finish(req *request) {
	req.mu.Lock()
	req.done = true
	req.mu.Unlock()
	req.cancel()
	c.wg.Done()
}

// cancelRequest interrupts the in-flight request with the given id, as asked
// by notifications/cancelled. Its response is suppressed.
func (c *conn) cancelRequest(id json.RawMessage) {
	c.mu.Lock()
	req := c.inflight[string(id)]
	c.mu.Unlock()
	if req == nil {
		return // finished already, or never existed: ignore, as the spec says
	}
	req.cancelled.Store(true)
	req.cancel()
}

// isClosed reports whether the conn closed.
func (c *conn) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// Wait blocks until every request started on the conn has finished (and,
// in a session, every batch's reply is sent).
func (c *conn) Wait() { c.wg.Wait() }

// close cancels the conn's requests in flight; it takes no new ones.
func (c *conn) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.cancelClose()
	c.srv.listeners.forget(c)
	c.srv.elicitations.forget(c)
}

// version returns the protocol version the request is served at.
func (r *request) version() string { return r.era.version() }

// capabilities returns what the client declared.
func (r *request) capabilities() clientCapabilities { return r.era.capabilities() }

// rawCapabilities returns what the client declared, as it sent it.
func (r *request) rawCapabilities() json.RawMessage { return r.era.rawCapabilities() }

// wantsLog reports whether the request's client takes log messages of this
// level.
func (r *request) wantsLog(lvl logLevel) bool { return r.era.wantsLog(lvl) }

// progressToken returns the request's _meta.progressToken, or nil.
func (r *request) progressToken() any {
	if r.meta == nil {
		return nil
	}
	return r.meta["progressToken"]
}
