package host

import (
	"context"
	"encoding/json"
	"time"
)

// SharedElicitations holds the URL elicitations in progress of the
// replicas of a service (Options.Elicitations): which session each one was
// sent to, so that whichever replica's plugin call completes it, its
// client hears. Values are sealed by the host.
type SharedElicitations interface {
	// Hold keeps value under key for ttl.
	Hold(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// Take removes the value under key and returns it; ok is false when
	// there is none. Of replicas taking one key at once, one gets it.
	Take(ctx context.Context, key string) (value []byte, ok bool, err error)
}

// URLElicitationTTL is how long a URL elicitation a user accepted may take
// to complete on another replica than the one that sent it.
const URLElicitationTTL = time.Hour

// elicitationDone is a URL elicitation that completed: the session (by
// its name, conn.id) whose client is told, on every replica holding it.
type elicitationDone struct {
	Session string `json:"session"`
	ID      string `json:"id"`
}

// elicitationKey is the key of plugin's URL elicitation id.
func elicitationKey(plugin, id string) string {
	return storeName([]byte(plugin + "\x00" + id))
}

// holdElicitation records where plugin's URL elicitation id, accepted by
// the client of c, was sent, for the other replicas (Options.Elicitations);
// only a session's, named as every replica names it.
func (s *Server) holdElicitation(plugin, id string, c *conn) {
	shared := s.opts.Elicitations
	if shared == nil || c.sessionHash == "" {
		return
	}
	key := elicitationKey(plugin, id)
	payload, _ := json.Marshal(elicitationDone{Session: c.id, ID: id})
	ctx, cancel := context.WithTimeout(context.Background(), sharedStoreTimeout)
	defer cancel()
	if err := shared.Hold(ctx, key, s.seal.sealed("elicitation", key, payload), URLElicitationTTL); err != nil {
		s.log().Warn("recording a URL elicitation for the other replicas failed: only this one can complete it", "plugin", plugin, "err", err)
	}
}

// takeElicitation takes plugin's URL elicitation id from the other
// replicas' record: the session it was sent to; ok is false when none
// holds it (never sent, completed, or no Options.Elicitations).
func (s *Server) takeElicitation(ctx context.Context, plugin, id string) (done elicitationDone, ok bool, err error) {
	shared := s.opts.Elicitations
	if shared == nil {
		return done, false, nil
	}
	key := elicitationKey(plugin, id)
	ctx, cancel := context.WithTimeout(ctx, sharedStoreTimeout)
	defer cancel()
	sealed, ok, err := shared.Take(ctx, key)
	if err != nil || !ok {
		return done, false, err
	}
	payload, err := s.seal.open("elicitation", key, sealed)
	if err == nil {
		err = json.Unmarshal(payload, &done)
	}
	if err != nil || done.ID != id {
		return done, false, err
	}
	return done, true, nil
}

// elicitationCompleted tells the client of the session d names, if this
// replica holds it and the client takes it, that the URL elicitation
// completed.
func (s *Server) elicitationCompleted(d elicitationDone) {
	sess := s.sessions.withID(d.Session)
	if sess == nil {
		return
	}
	caps := sess.capabilities()
	if caps.Elicitation == nil || caps.Elicitation.URL == nil || !atLeast(sess.Version(), Version20251125) {
		return
	}
	if err := sess.out.Send(encodeNotification("notifications/elicitation/complete", map[string]string{"elicitationId": d.ID})); err != nil {
		s.log().Debug("telling a client its URL elicitation completed failed", "err", err)
	}
}
