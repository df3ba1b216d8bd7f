package host

import (
	"context"
	"encoding/json"
	"time"
)

// SharedChanges carries the news that a replica's lists changed (a hot
// swap, a config reload) to the other replicas of the service
// (Options.Changes), so that their clients hear list_changed too: a
// client's stream of server messages is held by one replica, its requests
// may land on any.
type SharedChanges interface {
	// Publish tells the other replicas that the lists of kinds changed
	// here; origin names this replica.
	Publish(ctx context.Context, origin string, change []byte) error
	// Follow calls each with the changes the other replicas publish from
	// now on, until ctx ends; it returns why it stopped.
	Follow(ctx context.Context, origin string, each func(change []byte)) error
}

// followRetry is how long a replica waits before following the shared
// changes again after the feed failed (a Redis that does not answer).
const followRetry = time.Second

// sharedChange is what a replica publishes to the others
// (SharedChanges): that lists changed here (the fields of ListChanges,
// which is all replicas of earlier versions read), that a plugin here said
// a resource changed, that a session's subscriptions changed here, or
// that a URL elicitation completed here.
type sharedChange struct {
	ListChanges
	Updated      *resourceUpdate     `json:"updated,omitempty"`
	Subscription *subscriptionChange `json:"subscription,omitempty"`
	// Elicitation is an elicitationDone, sealed (recordSeal): it makes
	// a client hear from the service.
	Elicitation []byte `json:"elicitation,omitempty"`
}

// resourceUpdate is a plugin's notify_resource_updated.
type resourceUpdate struct {
	Plugin string `json:"plugin"`
	URI    string `json:"uri"`
}

// subscriptionChange is a session (by its id in the store) subscribing to
// a resource URI, or, when Off, unsubscribing.
type subscriptionChange struct {
	Session string `json:"session"`
	URI     string `json:"uri"`
	Off     bool   `json:"off,omitempty"`
}

// publishChanges tells the other replicas that lists changed here.
func (s *Server) publishChanges(changes ListChanges) {
	if changes.Any() {
		s.publishChange(sharedChange{ListChanges: changes})
	}
}

// publishChange tells the other replicas what changed here; without
// Options.Changes there are none.
func (s *Server) publishChange(change sharedChange) {
	if s.opts.Changes == nil {
		return
	}
	b, _ := json.Marshal(change)
	ctx, cancel := context.WithTimeout(context.Background(), sharedStoreTimeout)
	defer cancel()
	if err := s.opts.Changes.Publish(ctx, s.origin, b); err != nil {
		s.log().Warn("telling the other replicas of a change failed", "err", err)
	}
}

// FollowChanges takes here what the other replicas publish
// (Options.Changes) until ctx ends: list changes announced to this
// replica's sessions and listen streams, resource updates told to those
// subscribed, subscriptions of the sessions here changed; a feed that
// fails is followed again after followRetry. Without Options.Changes it
// returns at once.
func (s *Server) FollowChanges(ctx context.Context) {
	if s.opts.Changes != nil {
		s.followShared(ctx, "the other replicas' changes", func(ctx context.Context) error { return s.opts.Changes.Follow(ctx, s.origin, s.take) })
	}
}

// followShared runs follow, which reads what of a shared backend until ctx
// ends, again followRetry after each failure, until ctx ends.
func (s *Server) followShared(ctx context.Context, what string, follow func(context.Context) error) {
	for ctx.Err() == nil {
		err := follow(ctx)
		if ctx.Err() != nil {
			return
		}
		s.log().Warn("following "+what+" failed; trying again", "err", err, "after", followRetry)
		select {
		case <-ctx.Done():
		case <-time.After(followRetry):
		}
	}
}

// take takes here a change another replica published.
func (s *Server) take(b []byte) {
	var change sharedChange
	if json.Unmarshal(b, &change) != nil {
		return
	}
	s.announce(change.ListChanges, nil)
	if u := change.Updated; u != nil && u.URI != "" {
		s.resourceUpdated(u.Plugin, u.URI)
	}
	if change.Elicitation != nil {
		var d elicitationDone
		if err := s.seal.openJSON("elicitation done", "", change.Elicitation, &d); err != nil {
			s.log().Warn("a URL elicitation's completion from the changes stream is refused", "err", err)
		} else {
			s.elicitationCompleted(d)
		}
	}
	if c := change.Subscription; c != nil && c.URI != "" {
		switch sess := s.sessions.withID(c.Session); {
		case sess == nil:
		case c.Off:
			s.subs.remove(sess, c.URI)
		default:
			s.subs.add(sess, c.URI)
		}
	}
}
