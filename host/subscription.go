package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/mcphost/mcphost/abi"
)

// Bounds on what one session's subscriptions hold: it may subscribe to as
// many URIs as a resource template matches, each up to max_body_bytes long.
const (
	maxSessionSubscriptions     = 1000
	maxSessionSubscriptionBytes = 1 << 20
)

// subscriptions indexes which of this process's sessions subscribed to
// which resource URIs. A session's record holds its subscriptions
// (sessionRecord.Subscriptions), whichever replica took them; the index
// mirrors the records of the sessions here (Session.keep) and the changes
// other replicas publish (sharedchanges.go), so that the replica holding a
// session's stream of server messages tells it of the updates.
type subscriptions struct {
	mu     sync.Mutex
	byURI  map[string]map[*Session]struct{}
	byUser map[*Session]map[string]struct{}
	bytes  map[*Session]int // of the URIs each session subscribed to
}

// refuseSubscription returns why a session holding uris may not
// subscribe to uri as well: past maxSessionSubscriptions or
// maxSessionSubscriptionBytes; nil when it may.
func refuseSubscription(uris []string, uri string) error {
	n := len(uri)
	for _, u := range uris {
		n += len(u)
	}
	switch {
	case len(uris) >= maxSessionSubscriptions:
		return rpcErrorf(CodeInternalError, "too many subscriptions: this session holds %d, the most one may; unsubscribe from some first", maxSessionSubscriptions)
	case n > maxSessionSubscriptionBytes:
		return rpcErrorf(CodeInternalError, "too many subscriptions: their URIs would take %d bytes, more than the %d one session may hold; unsubscribe from some first", n, maxSessionSubscriptionBytes)
	}
	return nil
}

// add indexes sess as subscribed to uri.
func (s *subscriptions) add(sess *Session, uri string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addLocked(sess, uri)
}

func (s *subscriptions) addLocked(sess *Session, uri string) {
	if s.byURI == nil {
		s.byURI, s.byUser, s.bytes = map[string]map[*Session]struct{}{}, map[*Session]map[string]struct{}{}, map[*Session]int{}
	}
	if _, ok := s.byUser[sess][uri]; ok {
		return
	}
	if s.byURI[uri] == nil {
		s.byURI[uri] = map[*Session]struct{}{}
	}
	if s.byUser[sess] == nil {
		s.byUser[sess] = map[string]struct{}{}
	}
	s.byURI[uri][sess] = struct{}{}
	s.byUser[sess][uri] = struct{}{}
	s.bytes[sess] += len(uri)
}

// set indexes sess as subscribed to uris, and to nothing else.
func (s *subscriptions) set(sess *Session, uris []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.byUser[sess]) == len(uris) {
		same := true
		for _, uri := range uris {
			if _, ok := s.byUser[sess][uri]; !ok {
				same = false
				break
			}
		}
		if same {
			return
		}
	}
	s.forgetLocked(sess)
	for _, uri := range uris {
		s.addLocked(sess, uri)
	}
}

func (s *subscriptions) remove(sess *Session, uri string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byUser[sess][uri]; !ok {
		return
	}
	delete(s.byURI[uri], sess)
	if len(s.byURI[uri]) == 0 {
		delete(s.byURI, uri)
	}
	delete(s.byUser[sess], uri)
	s.bytes[sess] -= len(uri)
}

// forget drops every subscription of a session that ended.
func (s *subscriptions) forget(sess *Session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgetLocked(sess)
}

func (s *subscriptions) forgetLocked(sess *Session) {
	for uri := range s.byUser[sess] {
		delete(s.byURI[uri], sess)
		if len(s.byURI[uri]) == 0 {
			delete(s.byURI, uri)
		}
	}
	delete(s.byUser, sess)
	delete(s.bytes, sess)
}

// subscribers returns the sessions subscribed to uri.
func (s *subscriptions) subscribers(uri string) []*Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Session, 0, len(s.byURI[uri]))
	for sess := range s.byURI[uri] {
		out = append(out, sess)
	}
	return out
}

// handleSubscribe subscribes the session to updates of a resource some
// plugin serves.
func handleSubscribe(_ context.Context, req *request, p *subscribeParams) (any, error) {
	if req.srv.Catalog().resolveResource(p.URI, req.view()) == nil {
		return nil, &RPCError{Code: CodeResourceNotFound, Message: "resource not found: " + p.URI, Data: mustJSON(map[string]string{"uri": p.URI})}
	}
	if err := req.session().subscribe(p.URI, true); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

func handleUnsubscribe(_ context.Context, req *request, p *subscribeParams) (any, error) {
	if p.URI == "" {
		return nil, rpcErrorf(CodeInvalidParams, "invalid params: uri is required")
	}
	if err := req.session().subscribe(p.URI, false); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

// subscribe adds uri to the resources the session subscribed to, or, when
// off, removes it, in its record, which the index follows (keep); the
// other replicas sharing the store learn of it, as one of them may hold
// the session's stream.
func (sess *Session) subscribe(uri string, on bool) error {
	var refused error
	changed := false
	err := sess.update(func(rec *sessionRecord) {
		i := slices.Index(rec.Subscriptions, uri)
		switch {
		case on && i < 0:
			if refused = refuseSubscription(rec.Subscriptions, uri); refused == nil {
				rec.Subscriptions = append(slices.Clone(rec.Subscriptions), uri)
				changed = true
			}
		case !on && i >= 0:
			rec.Subscriptions = slices.Delete(slices.Clone(rec.Subscriptions), i, i+1)
			changed = true
		}
	})
	switch {
	case refused != nil:
		return refused
	case err != nil:
		return rpcErrorf(CodeInternalError, "internal error: recording the subscription: %v", err)
	case changed:
		sess.srv.publishChange(sharedChange{Subscription: &subscriptionChange{Session: sess.id, URI: uri, Off: !on}})
	}
	return nil
}

// notifyResourceUpdated tells the sessions and subscriptions/listen
// streams subscribed to a resource that it changed, here (resourceUpdated)
// and on the other replicas. A plugin may only speak for resources it
// serves.
func (s *Server) notifyResourceUpdated(plugin string) func(ctx context.Context, in []byte) ([]byte, error) {
	return func(_ context.Context, in []byte) ([]byte, error) {
		var p abi.ResourceUpdatedParams
		if err := json.Unmarshal(in, &p); err != nil {
			return nil, fmt.Errorf("notify_resource_updated: bad input: %w", err)
		}
		if !s.Catalog().serves(plugin, p.URI) {
			return nil, errors.New("notify_resource_updated: " + p.URI + " is not a resource of this plugin")
		}
		s.resourceUpdated(plugin, p.URI)
		s.publishChange(sharedChange{Updated: &resourceUpdate{Plugin: plugin, URI: p.URI}})
		return nil, nil
	}
}

// resourceUpdated tells the sessions and subscriptions/listen streams of
// this process subscribed to uri, which plugin serves, that it changed:
// those to which the plugin serves it, as their views route the URI.
func (s *Server) resourceUpdated(plugin, uri string) {
	c := s.Catalog()
	servedBy := func(v view) bool {
		owner := c.resolveResource(uri, v)
		return owner != nil && owner.Name == plugin
	}
	msg := encodeNotification("notifications/resources/updated", abi.ResourceUpdatedParams{URI: uri})
	for _, sess := range s.subs.subscribers(uri) {
		if servedBy(sess.view()) {
			_ = sess.out.Send(msg)
		}
	}
	s.listeners.resourceUpdated(uri, servedBy)
}

// dropOrphanSubscriptions tells each session subscribed to a resource that
// no plugin it sees serves anymore that the resource changed (it is gone),
// and drops that subscription. What a plugin hidden from the session
// serves does not keep it: that would tell the session the plugin is there.
func (s *Server) dropOrphanSubscriptions() {
	c := s.Catalog()
	s.subs.mu.Lock()
	uris := slices.Sorted(maps.Keys(s.subs.byURI))
	s.subs.mu.Unlock()
	for _, uri := range uris {
		msg := encodeNotification("notifications/resources/updated", abi.ResourceUpdatedParams{URI: uri})
		told := 0
		for _, sess := range s.subs.subscribers(uri) {
			if c.resolveResource(uri, sess.view()) == nil {
				_ = sess.out.Send(msg)
				s.subs.remove(sess, uri)
				if err := sess.subscribe(uri, false); err != nil {
					s.log().Warn("dropping a subscription to a resource gone failed", "uri", uri, "err", err)
				}
				told++
			}
		}
		if told > 0 {
			s.log().Info("resource gone; subscribers told and unsubscribed", "uri", uri, "sessions", told)
		}
	}
}
