package host

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
)

// SharedInbox carries messages to one replica of the service from the
// others (Options.Inbox): a client's answer to a request that a plugin
// call on that replica sent it (sampling, elicitation, roots), which the
// load balancer brought to another replica. A message is sealed by the
// replica that sends it (recordSeal), bound to its session, so that whoever
// can write to the inbox cannot answer for a client.
type SharedInbox interface {
	// Send adds msg to the inbox of the replica to.
	Send(ctx context.Context, to string, msg []byte) error
	// Receive calls each with the messages the inbox of me holds, then
	// with those sent to it from now on, until ctx ends; it returns why
	// it stopped. (A replica's name is new with its process: what its
	// inbox holds was sent to it.)
	Receive(ctx context.Context, me string, each func(msg []byte)) error
}

// clientRequestID is the id of the n-th request the session sends its
// client. With a shared inbox it names this replica, so that the client's
// answer, wherever it lands, finds the replica whose plugin call waits for
// it (forward).
func (sess *Session) clientRequestID(n int64) json.RawMessage {
	if sess.srv.opts.Inbox == nil {
		return json.RawMessage(strconv.Quote("mcphost-" + strconv.FormatInt(n, 10)))
	}
	return json.RawMessage(strconv.Quote("mcphost-" + sess.srv.origin + "-" + strconv.FormatInt(n, 10)))
}

// askedBy returns the replica whose request id is, from the id as
// clientRequestID made it; "" for none.
func askedBy(id json.RawMessage) string {
	var s string
	if json.Unmarshal(id, &s) != nil {
		return ""
	}
	rest, ok := strings.CutPrefix(s, "mcphost-")
	if !ok {
		return ""
	}
	// The number has no '-'; the replica's name may (base64url).
	i := strings.LastIndexByte(rest, '-')
	if i <= 0 {
		return ""
	}
	return rest[:i]
}

// forward sends the client's answer m, to a request no call here waits for,
// to the replica that asked, if another: it reports whether it did.
func (sess *Session) forward(m *message) bool {
	srv := sess.srv
	to := askedBy(m.ID)
	if srv.opts.Inbox == nil || to == "" || to == srv.origin {
		return false
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return false
	}
	if err := srv.pass(to, inboxAnswer, sess.id, raw); err != nil {
		srv.log().Warn("passing the client's answer to the replica that asked failed", "session", sess.id, "err", err)
	}
	return true
}

// The kinds of the messages of an inbox.
const (
	inboxAnswer  = "answer" // a client's answer, for a call waiting there
	inboxMessage = "stream" // a message to a client, for the stream held there (streamRelay)
)

// pass sends payload, a message of kind for the session id, to the inbox
// of the replica to, sealed and bound to the session: "<kind> <id>\n<sealed>".
func (s *Server) pass(to, kind, id string, payload []byte) error {
	msg := append([]byte(kind+" "+id+"\n"), s.seal.sealed(kind, id, payload)...)
	ctx, cancel := context.WithTimeout(context.Background(), sharedStoreTimeout)
	defer cancel()
	return s.opts.Inbox.Send(ctx, to, msg)
}

// FollowInbox hands the answers other replicas pass here (Options.Inbox)
// to the plugin calls waiting for them, until ctx ends; an inbox that
// fails is followed again after followRetry. Without Options.Inbox it
// returns at once.
func (s *Server) FollowInbox(ctx context.Context) {
	if s.opts.Inbox != nil {
		s.followShared(ctx, "this replica's inbox", func(ctx context.Context) error { return s.opts.Inbox.Receive(ctx, s.origin, s.received) })
	}
}

// received hands a message of the inbox, b, to the session it names: an
// answer to the call waiting for it, a message to the session's stream
// held here.
func (s *Server) received(b []byte) {
	head, sealed, _ := bytes.Cut(b, []byte("\n"))
	kind, id, _ := strings.Cut(string(head), " ")
	payload, err := s.seal.open(kind, id, sealed)
	var m message
	if err == nil && kind == inboxAnswer {
		err = json.Unmarshal(payload, &m)
	}
	if err != nil {
		s.log().Warn("a message in this replica's inbox is refused", "err", err)
		return
	}
	if s.receivedForTask(kind, id, payload) {
		return
	}
	sess := s.sessions.withID(id)
	switch {
	case sess == nil:
	case kind == inboxAnswer:
		sess.deliver(&m)
	case kind == inboxMessage && sess.holdsStream():
		if err := sess.out.Send(payload); err != nil {
			s.log().Debug("a message passed to a stream held here was not sent", "session", id, "err", err)
		}
	}
}
