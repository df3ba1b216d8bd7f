package host

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// SharedSessionStore holds what each 2025-era session negotiated in a
// backend that several replicas of one service share (Options.SessionStore,
// [state] backend = "redis"), so that any replica can serve any session.
// The records are opaque to it: the server encodes each one and binds it to
// its session with a MAC under Options.RequestStateKeys, which the replicas
// share, so that whoever can write to the backend cannot hand one subject's
// session to another, nor make one up.
type SharedSessionStore interface {
	// Load returns the record of session id; ok is false when there is
	// none.
	Load(ctx context.Context, id string) (record []byte, ok bool, err error)
	// Save creates or replaces the record of session id, which the store
	// keeps for ttl after its last Save or Touch.
	Save(ctx context.Context, id string, record []byte, ttl time.Duration) error
	// Touch keeps the record of session id for ttl from now, and reports
	// whether there is one.
	Touch(ctx context.Context, id string, ttl time.Duration) (bool, error)
	// Delete removes the record of session id, if any, and frees its
	// place (Admit).
	Delete(ctx context.Context, id string) error
	// Admit takes a place for the new session id of client, unless the
	// store holds most sessions' places, or perClient of client's: then
	// it returns the bound that refused it, SessionBoundAll or
	// SessionBoundClient. A place lasts ttl, as long as the session's
	// record after that (Touch), and Delete frees it.
	Admit(ctx context.Context, id, client string, ttl time.Duration, most, perClient int) (refused string, err error)
}

// The bounds SharedSessionStore.Admit says refused a session.
const (
	SessionBoundAll    = "all"    // max_sessions, across the replicas
	SessionBoundClient = "client" // max_sessions_per_client, across the replicas
)

// AdmitSession takes a place in the shared session store
// (Options.SessionStore) for the new session of id on its transport, of
// client (the key the per-client limit counts), within most sessions in
// all and perClient of client's across the replicas; it returns the bound
// that refused it, or "". Without a shared store it admits every session:
// the transport counts its own.
func (s *Server) AdmitSession(ctx context.Context, id, client string, most, perClient int) (refused string, err error) {
	shared, ok := s.sessionStore.(*sharedSessions)
	if !ok {
		return "", nil
	}
	ctx, cancel := context.WithTimeout(ctx, sharedStoreTimeout)
	defer cancel()
	return shared.backend.Admit(ctx, hashSession(id), storeName([]byte(client)), shared.ttl, most, perClient)
}

// ReleaseSession frees the place AdmitSession took for the session of id,
// which did not open after all. Without a shared store it does nothing.
func (s *Server) ReleaseSession(ctx context.Context, id string) error {
	shared, ok := s.sessionStore.(*sharedSessions)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, sharedStoreTimeout)
	defer cancel()
	return shared.backend.Delete(ctx, hashSession(id))
}

// DefaultSessionTTL is how long a shared store keeps the record of a
// session no request uses, when Options.SessionTTL is not positive.
const DefaultSessionTTL = 30 * time.Minute

// sharedStoreTimeout bounds each operation on a shared store, so that a
// backend that does not answer fails a request instead of holding it.
const sharedStoreTimeout = 5 * time.Second

// sharedSessions is the sessionStore over a SharedSessionStore: records
// encoded in JSON and sealed (recordSeal), kept for ttl after their last
// use.
type sharedSessions struct {
	backend SharedSessionStore
	seal    recordSeal
	ttl     time.Duration
}

func (s *sharedSessions) get(id, owner string) (sessionRecord, bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), sharedStoreTimeout)
	defer cancel()
	sealed, ok, err := s.backend.Load(ctx, id)
	if err != nil || !ok {
		return sessionRecord{}, false, err
	}
	payload, err := s.seal.open("session", id, sealed)
	if err != nil {
		return sessionRecord{}, false, err
	}
	var rec sessionRecord
	if err := json.Unmarshal(payload, &rec); err != nil {
		return sessionRecord{}, false, fmt.Errorf("the record of session %s does not decode: %v", id, err)
	}
	if rec.ID != id || rec.Owner != owner {
		return sessionRecord{}, false, nil
	}
	return rec, true, nil
}

func (s *sharedSessions) put(rec sessionRecord) error {
	sealed, err := s.seal.sealedJSON("session", rec.ID, rec)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), sharedStoreTimeout)
	defer cancel()
	return s.backend.Save(ctx, rec.ID, sealed, s.ttl)
}

func (s *sharedSessions) touch(id string, _ time.Time) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), sharedStoreTimeout)
	defer cancel()
	return s.backend.Touch(ctx, id, s.ttl)
}

func (s *sharedSessions) delete(id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), sharedStoreTimeout)
	defer cancel()
	return s.backend.Delete(ctx, id)
}

// recordSeal binds the records the server puts in a shared store to what
// they are and to their id, with an HMAC-SHA256 under a key derived from
// each of the server's requestState keys (the first seals, any opens):
// "r1.<key id>.<MAC>.<payload>".
type recordSeal struct {
	keys [][]byte // derived, the sealing one first
	ids  []string // of stateKeys
}

// newRecordSeal derives the record keys from sk's keys, apart from the
// requestState MACs made with those keys.
func newRecordSeal(sk stateKeys) recordSeal {
	rs := recordSeal{ids: sk.ids}
	for _, k := range sk.keys {
		h := hmac.New(sha256.New, k)
		h.Write([]byte("mcphost shared state records v1"))
		rs.keys = append(rs.keys, h.Sum(nil))
	}
	return rs
}

// errRecordSeal says a record in a shared store was not sealed by a
// replica of this service, or was changed since.
var errRecordSeal = errors.New("its MAC does not match: it was written or changed outside this service (or under a key it no longer has)")

// mac returns the MAC of a record of kind and id with key.
func (rs recordSeal) mac(key []byte, kind, id string, payload []byte) []byte {
	h := hmac.New(sha256.New, key)
	fmt.Fprintf(h, "%s\x00%d:%s\x00", kind, len(id), id)
	h.Write(payload)
	return h.Sum(nil)
}

// sealed returns payload, the record of kind and id, sealed.
func (rs recordSeal) sealed(kind, id string, payload []byte) []byte {
	mac := base64.RawURLEncoding.EncodeToString(rs.mac(rs.keys[0], kind, id, payload))
	out := make([]byte, 0, 4+len(rs.ids[0])+len(mac)+len(payload))
	out = append(append(append(append(out, "r1."...), rs.ids[0]...), '.'), mac...)
	return append(append(out, '.'), payload...)
}

// sealedJSON returns v in JSON, the record of kind and id, sealed.
func (rs recordSeal) sealedJSON(kind, id string, v any) ([]byte, error) {
	payload, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return rs.sealed(kind, id, payload), nil
}

// openJSON decodes into v the JSON payload of sealed, the record of kind
// and id, or returns why it cannot: its seal does not hold, or it does not
// decode.
func (rs recordSeal) openJSON(kind, id string, sealed []byte, v any) error {
	payload, err := rs.open(kind, id, sealed)
	if err != nil {
		return err
	}
	return json.Unmarshal(payload, v)
}

// open returns the payload of sealed, the record of kind and id, or an
// error naming it when its seal does not hold.
func (rs recordSeal) open(kind, id string, sealed []byte) ([]byte, error) {
	fail := fmt.Errorf("the shared store's record of %s %s is refused: %w", kind, id, errRecordSeal)
	rest, ok := bytes.CutPrefix(sealed, []byte("r1."))
	if !ok {
		return nil, fail
	}
	kid, rest, _ := bytes.Cut(rest, []byte("."))
	mac, payload, found := bytes.Cut(rest, []byte("."))
	if !found {
		return nil, fail
	}
	want, err := base64.RawURLEncoding.DecodeString(string(mac))
	if err != nil {
		return nil, fail
	}
	for i, id0 := range rs.ids {
		if id0 == string(kid) && hmac.Equal(want, rs.mac(rs.keys[i], kind, id, payload)) {
			return payload, nil
		}
	}
	return nil, fail
}
