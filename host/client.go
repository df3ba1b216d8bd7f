package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// clientCapabilities is what a client declared it can do for the server.
type clientCapabilities struct {
	Sampling *struct {
		Tools   *struct{} `json:"tools"`
		Context *struct{} `json:"context"`
	} `json:"sampling"`
	Elicitation *struct {
		Form *struct{} `json:"form"`
		URL  *struct{} `json:"url"`
	} `json:"elicitation"`
	Roots *struct {
		ListChanged bool `json:"listChanged"`
	} `json:"roots"`
	// Extensions are the extensions the client supports, by name.
	Extensions map[string]json.RawMessage `json:"extensions"`
}

// errClientCannot is the error of a host function the client cannot serve.
type errClientCannot struct{ what string }

func (e errClientCannot) Error() string { return "the client cannot serve this: " + e.what }

// callClient sends a request to the session's client on reply (the stream of
// the client request being served) and waits for the answer, for ctx to end,
// or for the session to close. On ctx end it tells the client, on the
// session's own stream, that the request is cancelled.
func (sess *Session) callClient(ctx context.Context, reply Outbound, method string, params any) (json.RawMessage, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	sess.mu.Lock()
	if sess.closed {
		sess.mu.Unlock()
		return nil, errors.New("the session is closed")
	}
	sess.nextID++
	id := sess.clientRequestID(sess.nextID)
	answer := make(chan *message, 1)
	sess.pending[string(id)] = answer
	sess.mu.Unlock()
	defer func() {
		sess.mu.Lock()
		delete(sess.pending, string(id))
		sess.mu.Unlock()
	}()

	if tr, ok := reply.(clientCallTracker); ok {
		defer tr.clientCallStarted(method)() // its task waits for input meanwhile
	}
	msg, _ := json.Marshal(message{JSONRPC: "2.0", ID: id, Method: method, Params: raw})
	if err := reply.Send(msg); err != nil {
		return nil, fmt.Errorf("sending %s to the client: %w", method, err)
	}
	select {
	case m := <-answer:
		if m.Error != nil {
			return nil, fmt.Errorf("the client answered %s with an error: %s (%d)", method, m.Error.Message, m.Error.Code)
		}
		return m.Result, nil
	case <-ctx.Done():
		// The request's own stream may be gone with the request (over HTTP
		// the client closes it on cancel): tell the client on the session's,
		// unless the reply routes cancellations itself.
		out := sess.out
		if r, ok := reply.(cancellationRouter); ok {
			out = r.cancellations()
		}
		_ = out.Send(encodeNotification("notifications/cancelled", map[string]any{"requestId": id, "reason": "the plugin call ended"}))
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	case <-sess.closeCtx.Done():
		return nil, errors.New("the session closed before the client answered")
	}
}

// cancellationRouter is a reply that carries the cancellations of the
// requests it carried, e.g. a task's, which may still be queued unsent.
type cancellationRouter interface {
	cancellations() Outbound
}

// deliver hands a client's response to the request waiting for it. A
// response is matched once: the pending entry goes with it, so a duplicate,
// late or unknown response is dropped, and the send into the one-slot
// channel, whose only sender this is, never blocks the read loop.
func (sess *Session) deliver(m *message) {
	sess.mu.Lock()
	answer, ok := sess.pending[string(m.ID)]
	delete(sess.pending, string(m.ID))
	sess.mu.Unlock()
	if !ok {
		if sess.forward(m) { // a call on another replica waits for it
			return
		}
		sess.srv.logger.Debug("ignoring a response to no pending request (unknown, late or duplicate)", "id", string(m.ID))
		return
	}
	answer <- m
}
