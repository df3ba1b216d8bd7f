package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/mcphost/mcphost/internal/jsonrpc"
	"go.opentelemetry.io/otel/trace"
)

// Outbound delivers messages from the server to a client.
type Outbound interface {
	// Send delivers one encoded JSON-RPC message (or batch).
	Send(msg []byte) error
}

// Session is one client connection: its in-flight requests and the
// requests it sent the client. What it negotiated at initialize (version,
// capabilities, scopes, log level) is its record in the server's session
// store (sessionstore.go), under conn.id: for a session with an id on its
// transport (SessionOptions.ID), the id's hash, the same on any replica.
type Session struct {
	*conn

	// The fields below are guarded by conn.mu.
	began         bool                     // initialize arrived: the session has a record, or is putting it
	owner         string                   // the subject that initialized it: its record is bound to it
	caps          *clientCapabilities      // the record's ClientCaps decoded, once read: they never change
	pending       map[string]chan *message // requests sent to the client, by id
	nextID        int64
	maxBatchReply int64 // bytes of a batch's reply

	opened   time.Time      // for Observer.SessionEnded
	touched  time.Time      // when its record was last touched (refresh)
	cached   *sessionRecord // its record as last read or written, when ready (lookup)
	cachedAt time.Time
	endpoint string    // SessionOptions.Endpoint, which its record keeps
	stream   string    // the replica holding its legacy HTTP+SSE stream, which its record keeps (sharedlegacy.go)
	ended    sync.Once // reports the end once, whoever closes it first
}

// NewSession starts a session, serving every plugin, whose
// server-initiated messages go to out; its batch replies hold at most
// DefaultMaxBatchReplyBytes.
func (s *Server) NewSession(out Outbound) *Session {
	return s.OpenSession(out, SessionOptions{})
}

// SessionOptions configure a session that Server.OpenSession starts.
type SessionOptions struct {
	// Plugins are the plugins the session serves (Server.PluginSet); nil:
	// every plugin.
	Plugins *PluginSet
	// MaxBatchReplyBytes bounds the reply to a JSON-RPC batch (2025-03-26
	// sessions); DefaultMaxBatchReplyBytes when not positive.
	MaxBatchReplyBytes int64
	// Transport is what the session is served on, TransportStdio or
	// TransportHTTP, as Observer sees it; empty when unknown.
	Transport string
	// ID is the session's id on its transport (Mcp-Session-Id), which
	// spans carry hashed (mcp.session.id), never as it is; empty for none.
	ID string
	// Endpoint is where on its transport the session is served (an HTTP
	// path): ResumeSession finds a session only where it was initialized.
	Endpoint string
}

// OpenSession starts a session whose server-initiated messages go to out.
func (s *Server) OpenSession(out Outbound, opts SessionOptions) *Session {
	if opts.MaxBatchReplyBytes <= 0 {
		opts.MaxBatchReplyBytes = DefaultMaxBatchReplyBytes
	}
	c := s.newConn(out, opts.Plugins, opts.Transport)
	c.sessionHash = hashSession(opts.ID)
	if opts.ID != "" {
		// Named by its id, as every replica would name it, hashed: the
		// id is the session's only credential without auth, and the
		// name goes to logs, task owners and the session store.
		c.id = c.sessionHash
	}
	sess := &Session{conn: c, pending: map[string]chan *message{}, maxBatchReply: opts.MaxBatchReplyBytes,
		opened: time.Now(), endpoint: opts.Endpoint}
	s.sessions.add(sess)
	return sess
}

// ErrNoSession means that ResumeSession found no session of that id
// initialized by that subject on that endpoint: it ended, expired, or
// never was.
var ErrNoSession = errors.New("no such session")

// ResumeSession opens, in this process, the session of id opts.ID that
// subject initialized on opts.Endpoint, in this process before or in
// another replica sharing its session store (Options.SessionStore): it
// serves the session's requests as the process that initialized it would.
// It fails with ErrNoSession when the store holds no such session, and
// with the store's error when it cannot be read. Like initialize, it waits
// within ctx for the plugins this process is loading at start-up (Loading),
// so that a replica just started lists what its peers list.
func (s *Server) ResumeSession(ctx context.Context, out Outbound, opts SessionOptions, subject string) (*Session, error) {
	if opts.ID == "" {
		return nil, ErrNoSession
	}
	rec, ok, err := s.sessionStore.get(hashSession(opts.ID), subject)
	switch {
	case err != nil:
		return nil, err
	case !ok || rec.Endpoint != opts.Endpoint || rec.Stream != "": // a legacy one lives with its stream (ResumeLegacy)
		return nil, ErrNoSession
	}
	s.awaitStartup(ctx)
	sess := s.OpenSession(out, opts)
	sess.mu.Lock()
	sess.began, sess.owner, sess.client = true, subject, rec.Client
	sess.mu.Unlock()
	sess.keep(rec)
	return sess, nil
}

// Initialized reports whether the client finished initializing: it sent
// notifications/initialized after initialize.
func (sess *Session) Initialized() bool { return sess.initialized() }

// initialized reports whether the client finished initializing: it sent
// notifications/initialized after initialize.
func (sess *Session) initialized() bool {
	rec, _ := sess.record()
	return rec.Ready
}

// live reports whether the session is initialized and not closed.
func (sess *Session) live() bool {
	sess.mu.Lock()
	closed := sess.closed
	sess.mu.Unlock()
	return !closed && sess.initialized()
}

// Version returns the negotiated protocol version, or "" before initialize.
func (sess *Session) Version() string {
	rec, _ := sess.record()
	return rec.Version
}

// Handle processes one incoming payload: a message or, for sessions on
// 2025-03-26, a batch. Requests run concurrently; their responses, and the
// notifications they cause, go to reply. Handle returns once the payload is
// dispatched, not when its requests finish; Wait waits for those.
func (sess *Session) Handle(ctx context.Context, raw []byte, reply Outbound) {
	sess.touch()
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		sess.handleBatch(ctx, raw, reply)
		return
	}
	sess.handleOne(ctx, raw, reply, nil)
}

// handleOne processes one message. When batch is not nil, it counts the
// asynchronous requests started, so the batch can wait for them.
func (sess *Session) handleOne(ctx context.Context, raw []byte, reply Outbound, batch *sync.WaitGroup) {
	m, rpcErr := decodeMessage(raw)
	if rpcErr != nil {
		var id json.RawMessage
		if m != nil {
			id = m.ID
		}
		if m == nil || !m.IsNotification() {
			_ = reply.Send(encodeResponse(id, nil, rpcErr))
		}
		return
	}
	if resp := sess.dispatch(ctx, m, reply, batch); resp != nil {
		_ = reply.Send(resp)
	}
}

// maxBatch bounds a JSON-RPC batch: one of more messages is refused whole.
const maxBatch = 100

// DefaultMaxBatchReplyBytes bounds the reply to a JSON-RPC batch, unless
// SessionOptions set another bound.
const DefaultMaxBatchReplyBytes = 8 << 20

// handleBatch serves a JSON-RPC batch, which MCP allows in 2025-03-26 only.
// The responses go out together, as one array.
func (sess *Session) handleBatch(ctx context.Context, raw []byte, reply Outbound) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		_ = reply.Send(encodeResponse(nil, nil, rpcErrorf(CodeParseError, "parse error: %v", err)))
		return
	}
	if v := sess.Version(); v != Version20250326 {
		_ = reply.Send(encodeResponse(nil, nil, rpcErrorf(CodeInvalidRequest, "invalid request: JSON-RPC batches are only accepted on protocol version %s (this session: %q)", Version20250326, v)))
		return
	}
	if len(items) == 0 {
		_ = reply.Send(encodeResponse(nil, nil, rpcErrorf(CodeInvalidRequest, "invalid request: empty batch")))
		return
	}
	if len(items) > maxBatch {
		_ = reply.Send(encodeResponse(nil, nil, rpcErrorf(CodeInvalidRequest, "invalid request: a batch of %d messages is larger than the limit of %d; send fewer at a time", len(items), maxBatch)))
		return
	}
	collect := &batchCollector{limit: sess.maxBatchReply, out: reply}
	var pending sync.WaitGroup
	for _, item := range items {
		sess.handleOne(ctx, item, collect, &pending)
	}
	// Counted like a request, so that Wait covers the reply: the requests
	// it waits for end when the session closes, and so does it.
	sess.wg.Add(1)
	go func() {
		defer sess.wg.Done()
		pending.Wait()
		if msg := collect.encode(); msg != nil {
			_ = reply.Send(msg)
		}
	}()
}

// batchCollector gathers the responses to the requests of a batch, to go
// out as one array, within limit bytes: a response that does not fit is
// replaced by an error response naming the limit, so that every request is
// still answered, with a few hundred bytes. What else the requests send
// (notifications, requests to the client, which the calls wait for) goes
// to out at once.
type batchCollector struct {
	limit int64
	out   Outbound

	mu   sync.Mutex
	size int64
	msgs []json.RawMessage
}

func (b *batchCollector) Send(msg []byte) error {
	id, ok := jsonrpc.ResponseID(msg)
	if !ok {
		return b.out.Send(msg)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.size+int64(len(msg)) > b.limit {
		msg = encodeResponse(id, nil, rpcErrorf(CodeInternalError, "the response (%d bytes) does not fit in the reply to the batch, which holds at most %d bytes ([http] max_batch_response_bytes over HTTP): send this request on its own", len(msg), b.limit))
	}
	b.size += int64(len(msg))
	b.msgs = append(b.msgs, msg)
	return nil
}

func (b *batchCollector) encode() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.msgs) == 0 {
		return nil
	}
	out, _ := json.Marshal(b.msgs)
	return out
}

// dispatch routes one decoded message. It returns a response to send at
// once, or nil when there is none or the request runs asynchronously.
func (sess *Session) dispatch(ctx context.Context, m *message, reply Outbound, batch *sync.WaitGroup) []byte {
	switch {
	case m.IsResponse():
		sess.deliver(m)
		return nil
	case m.IsNotification():
		sess.handleNotification(m)
		return nil
	case isPerRequest(m):
		e, rpcErr := readMeta20260728(m.Params)
		if rpcErr != nil {
			return encodeResponse(m.ID, nil, rpcErr)
		}
		return sess.serve(ctx, m, e, reply, batch)
	case m.Method == "initialize":
		start := time.Now()
		ctx, span := sess.startSpan(ctx, start, m.Method, nil, m.ID)
		res, err := sess.initialize(ctx, m.Params)
		rpcErr := toRPCError(err)
		sess.observe(ctx, nil, start, span, m.Method, sess.Version(), nil, res, rpcErr)
		return encodeResponse(m.ID, res, rpcErr)
	}
	return sess.serve(ctx, m, era20251125{sess}, reply, batch)
}

// serve starts a request at era e. It returns a response to send at once
// when the request cannot start, else nil: the request runs
// asynchronously, and its response goes to reply. When batch is not nil,
// it counts the request until it is answered.
func (c *conn) serve(ctx context.Context, m *message, e era, reply Outbound, batch *sync.WaitGroup) []byte {
	start := time.Now()
	// refuse answers a request that could not start, as observed (its
	// method, or MethodOther), with its params p (nil when they did not
	// decode), ending its span, which it starts when span is nil. It
	// takes what it reports as arguments: a variable it captured and
	// assigned would move to the heap, for every request.
	refuse := func(ctx context.Context, span trace.Span, observed string, p params, rpcErr *RPCError) []byte {
		if span == nil {
			_, span = c.startSpan(ctx, start, observed, p, m.ID)
		}
		c.observe(ctx, nil, start, span, observed, e.version(), p, nil, rpcErr)
		return e.encode(c.srv, m.Method, m.ID, nil, nil, rpcErr)
	}
	h, rpcErr := e.method(m.Method)
	if rpcErr != nil {
		return refuse(ctx, nil, MethodOther, nil, rpcErr) // a client may send any name: observers see no more of them
	}
	p, rpcErr := h.decode(m.Params)
	if rpcErr != nil {
		return refuse(ctx, nil, m.Method, nil, rpcErr)
	}
	ctx, span := c.startSpan(ctx, start, m.Method, p, m.ID)
	round, rpcErr := e.openRound(ctx, c.srv, m.Method, p)
	if rpcErr != nil {
		return refuse(ctx, span, m.Method, p, rpcErr)
	}
	req, rpcErr := c.start(ctx, m.ID, m.Method, e, p.metadata(), reply)
	if rpcErr != nil {
		return refuse(ctx, span, m.Method, p, rpcErr)
	}
	req.input = round
	if batch != nil {
		batch.Add(1)
	}
	c.srv.workers.Go(func() {
		defer c.finish(req) // after the response is written: Wait covers it
		if batch != nil {
			defer batch.Done()
		}
		e.awaitStartup(req.ctx, req)
		res, err := c.srv.serveRecovering(h, req, p)
		if req.input != nil {
			res, err = req.input.finish(c.srv, res, err)
		}
		if missing := req.missingCapabilities(); missing != nil {
			res, err = nil, missing
		}
		cancelled := req.ctx.Err() != nil && req.cancelled.Load()
		c.release(req)
		if cancelled {
			return // cancelled by the client: no response
		}
		var hints *cacheHints
		if err == nil {
			hints = req.hints
		}
		rpcErr := toRPCError(err)
		_ = reply.Send(e.encode(c.srv, m.Method, m.ID, res, hints, rpcErr))
		c.observe(req.ctx, req, start, span, m.Method, req.version(), p, res, rpcErr)
	})
	return nil
}

// serveRecovering serves req with h, answering a panic with an internal
// error (panics.go).
func (s *Server) serveRecovering(h method, req *request, p params) (res any, err error) {
	defer s.recoverPanic(req.method, &err)
	return h.serve(req.ctx, req, p)
}

// checkLifecycle enforces the MCP lifecycle: only ping before the session
// is initialized.
func (sess *Session) checkLifecycle(method string) *RPCError {
	if method == "ping" {
		return nil
	}
	rec, ok, err := sess.lookup()
	switch {
	case err != nil:
		return rpcErrorf(CodeInternalError, "internal error: reading the session's state: %v", err)
	case !ok:
		return rpcErrorf(CodeInvalidRequest, "invalid request: %s before initialize (send initialize first)", method)
	case !rec.Ready:
		return rpcErrorf(CodeInvalidRequest, "invalid request: %s before notifications/initialized", method)
	}
	return nil
}

// toRPCError converts a handler error to the error sent to the client.
func toRPCError(err error) *RPCError {
	if err == nil {
		return nil
	}
	var rpcErr *RPCError
	if errors.As(err, &rpcErr) {
		return rpcErr
	}
	return rpcErrorf(CodeInternalError, "internal error: %v", err)
}

// Close cancels the session's in-flight requests; it takes no new ones.
// Its record leaves the store.
func (sess *Session) Close() {
	if o := sess.srv.opts.Observer; o != nil {
		version := sess.Version() // before its record goes
		sess.ended.Do(func() {
			o.SessionEnded(EndedSession{Transport: sess.transport, ProtocolVersion: version, Duration: time.Since(sess.opened)})
		})
	}
	sess.leave()
	sess.cancelEnd()
	if err := sess.srv.sessionStore.delete(sess.id); err != nil {
		sess.srv.log().Warn("deleting the session's state failed", "session", sess.id, "err", err)
	}
}

// Detach ends the session in this process: it cancels the session's
// requests in flight and takes no new ones, like Close, but with a shared
// session store (Options.SessionStore) it leaves the record for the other
// replicas (or for ResumeSession here) until the store expires it. With
// the store in memory it is Close.
func (sess *Session) Detach() {
	if _, shared := sess.srv.sessionStore.(*sharedSessions); !shared {
		sess.Close()
		return
	}
	sess.leave()
}

// leave cancels the session's requests in flight and forgets it in this
// process.
func (sess *Session) leave() {
	sess.close()
	sess.srv.subs.forget(sess)
	sess.srv.sessions.remove(sess)
}

// Shutdown ends the session's subscriptions/listen streams (they never end
// on their own), lets its requests in flight run for up to grace, then
// detaches it (Detach), which cancels those still running, and waits for
// them.
func (sess *Session) Shutdown(grace time.Duration) {
	sess.srv.listeners.end(sess.conn)
	done := make(chan struct{})
	go func() { sess.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		sess.srv.logger.Warn("cancelling requests still running at shutdown")
		sess.Detach()
		<-done
	}
}
