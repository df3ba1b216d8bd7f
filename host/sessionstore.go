package host

import (
	"encoding/json"
	"slices"
	"sync"
	"time"
)

// sessionRecord is what a session negotiated at initialize, as a store
// shared by several replicas would hold it: plain data that survives JSON.
// What cannot leave the process (the session's stream, its requests in
// flight, the server→client requests awaiting answers) stays on Session.
type sessionRecord struct {
	ID         string          // the session's name (conn.id): its id's hash when it has one
	Owner      string          // subject that initialized it; "" without authentication
	Version    string          // negotiated protocol version
	Ready      bool            // notifications/initialized received
	ClientCaps json.RawMessage `json:",omitempty"` // capabilities the client declared; nil when it sent none
	Scopes     []string        `json:",omitempty"` // of the token that initialized it (visibility.go)
	LogLevel   logLevel        // least severe level of the log messages it takes
	LastUsed   time.Time       // when a message last arrived on it
	Endpoint   string          `json:",omitempty"` // where it was initialized (SessionOptions.Endpoint), the only place it is served
	Client     string          `json:",omitempty"` // the name its client gave in initialize
	// Subscriptions are the resource URIs it subscribed to
	// (resources/subscribe), whichever replica took them: the replica
	// that holds its stream of server messages tells it of their updates.
	Subscriptions []string `json:",omitempty"`
	// Stream is the replica holding its legacy HTTP+SSE stream
	// (HoldStream); "" for a Streamable HTTP session.
	Stream string `json:",omitempty"`
}

// sessionStore holds the records of the initialized sessions, by id. A
// record is bound to its owner: get for another owner finds nothing. A
// session that was never initialized has no record. Records are values:
// the store keeps none of the slices put passes it, and callers do not
// modify those get returns.
//
// The errors are those of a shared backend (issue 27); the store in memory
// has none. A shared store expires a record by itself, some time after its
// last touch, so that a session no replica serves does not stay forever;
// delete removes it at once, when the session closes.
type sessionStore interface {
	// get returns the record of session id if owner owns it.
	get(id, owner string) (rec sessionRecord, ok bool, err error)
	// put creates or replaces the record of session rec.ID.
	put(rec sessionRecord) error
	// touch records that session id was used at, and reports whether it
	// has a record.
	touch(id string, at time.Time) (bool, error)
	// delete removes the record of session id, if any.
	delete(id string) error
}

// memorySessionStore is the default session store: the records of the
// process's own sessions, in a map. It keeps records as they are, where a
// shared store would encode them, so a read costs a map lookup.
type memorySessionStore struct {
	mu      sync.Mutex
	records map[string]sessionRecord
}

// newMemorySessionStore returns an empty store in memory.
func newMemorySessionStore() sessionStore {
	return &memorySessionStore{records: map[string]sessionRecord{}}
}

func (s *memorySessionStore) get(id, owner string) (sessionRecord, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.records[id]
	if !ok || rec.Owner != owner {
		return sessionRecord{}, false, nil
	}
	return rec, true, nil
}

func (s *memorySessionStore) put(rec sessionRecord) error {
	rec.Scopes = slices.Clone(rec.Scopes)
	rec.ClientCaps = slices.Clone(rec.ClientCaps)
	rec.Subscriptions = slices.Clone(rec.Subscriptions)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records[rec.ID] = rec
	return nil
}

func (s *memorySessionStore) touch(id string, at time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.records[id]
	if ok {
		rec.LastUsed = at
		s.records[id] = rec
	}
	return ok, nil
}

func (s *memorySessionStore) delete(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.records, id)
	return nil
}

// A ready session's record is kept on the Session once read or written,
// for recordFresh: a request then reads the store once a second at most,
// not at each of the places it needs the record. What a record holds does
// not change once the session is ready, but for its log level, which
// logging/setLevel on another replica sharing the store changes here
// within recordFresh. (The record's end is not cached: Refresh asks the
// store at each request of a transport that serves on several replicas.)
const recordFresh = time.Second

// lookup reads the session's record; ok is false before initialize. A
// legacy session served on several replicas (sharedlegacy.go) may have
// been initialized on another: until it is here, its record is read.
func (sess *Session) lookup() (rec sessionRecord, ok bool, err error) {
	sess.mu.Lock()
	began, owner, cached, at, stream := sess.began, sess.owner, sess.cached, sess.cachedAt, sess.stream
	sess.mu.Unlock()
	if !began && stream == "" {
		return sessionRecord{}, false, nil
	}
	if !began {
		rec, ok, err = sess.read(owner)
		if !ok || rec.Version == "" {
			return sessionRecord{}, false, err
		}
		sess.mu.Lock()
		sess.began = true
		sess.mu.Unlock()
		return rec, true, nil
	}
	if cached != nil && time.Since(at) < recordFresh {
		return *cached, true, nil
	}
	return sess.read(owner)
}

// read reads the session's record of owner from the store, and keeps it
// when the session is ready.
func (sess *Session) read(owner string) (sessionRecord, bool, error) {
	rec, ok, err := sess.srv.sessionStore.get(sess.id, owner)
	if ok {
		sess.keep(rec)
	}
	return rec, ok, err
}

// keep keeps rec, the session's record as read or written, for
// recordFresh, if the session is ready, and mirrors its subscriptions in
// the server's index of them (Server.subs).
func (sess *Session) keep(rec sessionRecord) {
	if !rec.Ready {
		return
	}
	sess.mu.Lock()
	sess.cached, sess.cachedAt = &rec, time.Now()
	closed := sess.closed
	sess.mu.Unlock()
	if !closed {
		sess.srv.subs.set(sess, rec.Subscriptions)
	}
}

// record reads the session's record for a caller that cannot fail: when
// the store does, it logs why and reports no record, as before initialize.
func (sess *Session) record() (sessionRecord, bool) {
	rec, ok, err := sess.lookup()
	if err != nil {
		sess.srv.log().Warn("reading the session's state failed", "session", sess.id, "err", err)
	}
	return rec, ok
}

// update changes the session's record with f and puts it back; it does
// nothing before initialize. Two updates may interleave without a loss
// that matters: Ready only ever becomes true, LogLevel is set only once
// the session is ready, and of two logging/setLevel at once one wins,
// whichever store holds the record.
func (sess *Session) update(f func(*sessionRecord)) error {
	sess.mu.Lock()
	began, owner := sess.began, sess.owner
	sess.mu.Unlock()
	if !began {
		return nil
	}
	rec, ok, err := sess.srv.sessionStore.get(sess.id, owner)
	if err != nil || !ok {
		return err
	}
	f(&rec)
	if err := sess.srv.sessionStore.put(rec); err != nil {
		return err
	}
	sess.keep(rec)
	return nil
}

// SessionRefresh is how often, at most, a replica touches the record of a
// session in use in a shared store (Options.SessionStore), which keeps it
// for minutes after the last touch, and learns whether it is still there:
// a session ended on another replica (DELETE) is unknown on this one
// within SessionRefresh, and a store that stops answering fails requests
// from then on. Touching at every request cost a round trip on each
// (RATIONALE.md, "How many Redis round trips does a request cost?").
const SessionRefresh = time.Second

// touch records that a message arrived on the session, for a shared store
// to keep its record as long as it is used, unless the session was touched
// in the last SessionRefresh.
func (sess *Session) touch() {
	if _, err := sess.refresh(SessionRefresh); err != nil {
		sess.srv.log().Warn("touching the session's state failed", "session", sess.id, "err", err)
	}
}

// Refresh touches the session's record, as a message on it does, unless
// it did in the last SessionRefresh, and fails with ErrNoSession when the
// record is gone: the session ended on another replica sharing the store
// (a DELETE there), or the store expired it. A transport that may serve a
// session on several replicas asks before it hands the session a message,
// and answers as for an unknown session.
func (sess *Session) Refresh() error {
	if lost, err := sess.refresh(SessionRefresh); err != nil || !lost {
		return err
	}
	return ErrNoSession
}

// refresh touches the session's record unless it was touched in the last
// fresh, and reports whether the record is gone. A session not yet
// initialized has none to touch.
func (sess *Session) refresh(fresh time.Duration) (lost bool, err error) {
	now := time.Now()
	sess.mu.Lock()
	// A legacy session served on several replicas has a record from
	// its start (HoldStream).
	began, recent := sess.began || sess.stream != "", now.Sub(sess.touched) < fresh
	if began && !recent {
		sess.touched = now
	}
	sess.mu.Unlock()
	if !began || recent {
		return false, nil
	}
	ok, err := sess.srv.sessionStore.touch(sess.id, now)
	return err == nil && !ok, err
}

// capabilities returns what the client declared at initialize. They are
// decoded once, on first use, and kept on the Session: the record never
// changes them, and a shared store, which would hold only their JSON, is
// not read again for them by the replica that decoded them.
func (sess *Session) capabilities() clientCapabilities {
	sess.mu.Lock()
	caps := sess.caps
	sess.mu.Unlock()
	if caps != nil {
		return *caps
	}
	rec, ok := sess.record()
	if !ok {
		return clientCapabilities{}
	}
	caps = new(clientCapabilities)
	_ = json.Unmarshal(rec.ClientCaps, caps)
	sess.mu.Lock()
	sess.caps = caps
	sess.mu.Unlock()
	return *caps
}
