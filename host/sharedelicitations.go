package host

import (
	"context"
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
	sealed, _ := s.seal.sealedJSON("elicitation", key, elicitationDone{Session: c.id, ID: id})
	ctx, cancel := context.WithTimeout(context.Background(), sharedStoreTimeout)
	defer cancel()
	if err := shared.Hold(ctx, key, sealed, URLElicitationTTL); err != nil {
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
	if err = s.seal.openJSON("elicitation", key, sealed, &done); err != nil || done.ID != id {
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
	if !takesElicitationComplete(sess.capabilities(), sess.Version()) {
		return
	}
	if err := sess.out.Send(elicitationComplete(d.ID)); err != nil {
		s.log().Debug("telling a client its URL elicitation completed failed", "err", err)
	}
}
