package host

import (
	"context"
	"time"
)

// A legacy HTTP+SSE session (2024-11-05) lives with its stream, on the
// replica that holds it. Its client's POSTs may reach any replica sharing
// the session store: that one serves them there (ResumeLegacy), and what
// the session sends goes to the stream through the holder's inbox.

// HoldStream records in the shared session store that this replica holds
// the stream of the session, a legacy HTTP+SSE one that subject just
// opened, for the replicas that take its POSTs (ResumeLegacy); held
// reports whether it did. Without a shared session store and inbox it
// does nothing.
func (sess *Session) HoldStream(subject string) (held bool, err error) {
	srv := sess.srv
	if _, shared := srv.sessionStore.(*sharedSessions); !shared || srv.opts.Inbox == nil {
		return false, nil
	}
	sess.mu.Lock()
	sess.stream, sess.owner = srv.origin, subject
	sess.mu.Unlock()
	return true, srv.sessionStore.put(sessionRecord{ID: sess.id, Owner: subject, Endpoint: sess.endpoint, Stream: srv.origin, LastUsed: time.Now()})
}

// holdsStream reports whether this replica holds the session's legacy
// stream (HoldStream).
func (sess *Session) holdsStream() bool {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.stream != "" && sess.stream == sess.srv.origin
}

// ResumeLegacy serves here the legacy HTTP+SSE session of id opts.ID,
// opened by subject on opts.Endpoint, whose stream another replica holds
// (HoldStream), initialized or not: what it sends goes to that stream
// through the other replica's inbox, by the returned Outbound, which is
// the session's too. It fails with ErrNoSession when the store holds no
// such session, and with the store's error when it cannot be read.
func (s *Server) ResumeLegacy(ctx context.Context, opts SessionOptions, subject string) (*Session, Outbound, error) {
	if opts.ID == "" || s.opts.Inbox == nil {
		return nil, nil, ErrNoSession
	}
	rec, ok, err := s.sessionStore.get(hashSession(opts.ID), subject)
	switch {
	case err != nil:
		return nil, nil, err
	case !ok || rec.Endpoint != opts.Endpoint || rec.Stream == "" || rec.Stream == s.origin:
		return nil, nil, ErrNoSession
	}
	s.awaitStartup(ctx)
	relay := &streamRelay{srv: s, to: rec.Stream, kind: inboxMessage, id: hashSession(opts.ID)}
	sess := s.OpenSession(relay, opts)
	sess.mu.Lock()
	sess.began, sess.owner, sess.client, sess.stream = rec.Version != "", subject, rec.Client, rec.Stream
	sess.mu.Unlock()
	sess.keep(rec)
	return sess, relay, nil
}

// streamRelay is an Outbound whose messages go to another replica's inbox:
// that of a legacy session served on a replica that does not hold its
// stream, or of a task's run whose tasks/result waits on another replica
// (sharedtaskwait.go).
type streamRelay struct {
	srv  *Server
	to   string // the replica the messages go to
	kind string // inboxMessage, inboxTaskMessage
	id   string // the session's name (conn.id), or the waiter's token
}

func (r *streamRelay) Send(msg []byte) error {
	return r.srv.pass(r.to, r.kind, r.id, msg)
}
