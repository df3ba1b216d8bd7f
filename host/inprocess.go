package host

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
)

// InProcessHandlers receive what a server sends an InProcessClient besides
// the responses to its requests. Either may be nil.
type InProcessHandlers struct {
	// Notification receives each notification: its method and params.
	Notification func(method string, params json.RawMessage)
	// Request answers a request of the server to the client (sampling,
	// elicitation, roots) with its result, or an error: an *RPCError is sent
	// as is, any other error as CodeInternalError. It runs on a goroutine of
	// its own. Nil answers every such request with CodeMethodNotFound. The
	// client answers ping itself.
	Request func(ctx context.Context, method string, params json.RawMessage) (any, error)
}

// InProcessClient is a client of a Server in the same process: it holds a
// session of the server, sends it requests and notifications through
// Session.Handle, and hands what the server sends besides responses to its
// handlers.
type InProcessClient struct {
	sess     *Session
	handlers InProcessHandlers

	mu      sync.Mutex
	nextID  int64
	pending map[string]chan *message // requests sent, by id
}

// NewInProcessClient opens a session on srv for a client in this process.
// The session is not initialized: send initialize and
// notifications/initialized as any client does.
func NewInProcessClient(srv *Server, handlers InProcessHandlers) *InProcessClient {
	c := &InProcessClient{handlers: handlers, pending: map[string]chan *message{}}
	c.sess = srv.NewSession(c)
	return c
}

// Close ends the session.
func (c *InProcessClient) Close() { c.sess.Close() }

// Send receives a message from the server; it implements Outbound.
func (c *InProcessClient) Send(raw []byte) error {
	m, rpcErr := decodeMessage(raw)
	if rpcErr != nil {
		return rpcErr
	}
	switch {
	case m.Method == "" && m.ID != nil:
		c.mu.Lock()
		ch := c.pending[string(m.ID)]
		delete(c.pending, string(m.ID))
		c.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	case m.ID != nil:
		go c.answer(m)
	case c.handlers.Notification != nil:
		c.handlers.Notification(m.Method, m.Params)
	}
	return nil
}

// answer answers a request of the server.
func (c *InProcessClient) answer(m *message) {
	ctx := context.Background()
	var result any
	var err error
	switch {
	case m.Method == "ping":
		result = struct{}{}
	case c.handlers.Request != nil:
		result, err = c.handlers.Request(ctx, m.Method, m.Params)
	default:
		err = rpcErrorf(CodeMethodNotFound, "method not found: %s", m.Method)
	}
	var rpcErr *RPCError
	if err != nil && !errors.As(err, &rpcErr) {
		rpcErr = rpcErrorf(CodeInternalError, "%v", err)
	}
	c.sess.Handle(ctx, encodeResponse(m.ID, result, rpcErr), c)
}

// Request sends a request and waits for its response or for ctx to end. It
// returns the raw result, or the error the server answered as an *RPCError.
func (c *InProcessClient) Request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // not sent: its answer would race with ctx
	}
	rawParams, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.nextID++
	id := json.RawMessage(strconv.FormatInt(c.nextID, 10))
	ch := make(chan *message, 1)
	c.pending[string(id)] = ch
	c.mu.Unlock()
	raw, _ := json.Marshal(message{JSONRPC: "2.0", ID: id, Method: method, Params: rawParams})
	c.sess.Handle(ctx, raw, c)
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, (*RPCError)(m.Error)
		}
		return m.Result, nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, string(id))
		c.mu.Unlock()
		return nil, ctx.Err()
	}
}

// Notify sends a notification; nil params sends none.
func (c *InProcessClient) Notify(ctx context.Context, method string, params any) {
	raw, _ := json.Marshal(message{JSONRPC: "2.0", Method: method})
	if params != nil {
		raw = encodeNotification(method, params)
	}
	c.sess.Handle(ctx, raw, c)
}
