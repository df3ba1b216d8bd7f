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

// publishChanges tells the other replicas what changed here.
func (s *Server) publishChanges(changes ListChanges) {
	if s.opts.Changes == nil || !changes.Any() {
		return
	}
	b, _ := json.Marshal(changes)
	ctx, cancel := context.WithTimeout(context.Background(), sharedStoreTimeout)
	defer cancel()
	if err := s.opts.Changes.Publish(ctx, s.origin, b); err != nil {
		s.log().Warn("telling the other replicas that lists changed failed", "err", err)
	}
}

// FollowChanges announces to this replica's sessions and listen streams
// the list changes the other replicas publish (Options.Changes), until ctx
// ends; a feed that fails is followed again after followRetry. Without
// Options.Changes it returns at once.
func (s *Server) FollowChanges(ctx context.Context) {
	if s.opts.Changes == nil {
		return
	}
	for ctx.Err() == nil {
		err := s.opts.Changes.Follow(ctx, s.origin, func(b []byte) {
			var changes ListChanges
			if json.Unmarshal(b, &changes) == nil {
				s.announce(changes, nil)
			}
		})
		if ctx.Err() != nil {
			return
		}
		s.log().Warn("following the other replicas' list changes failed; trying again", "err", err, "after", followRetry)
		select {
		case <-ctx.Done():
		case <-time.After(followRetry):
		}
	}
}
