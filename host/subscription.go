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

// subscriptions records which sessions subscribed to which resource URIs.
type subscriptions struct {
	mu     sync.Mutex
	byURI  map[string]map[*Session]struct{}
	byUser map[*Session]map[string]struct{}
	bytes  map[*Session]int // of the URIs each session subscribed to
}

// add subscribes sess to uri, unless that would take it past
// maxSessionSubscriptions or maxSessionSubscriptionBytes.
func (s *subscriptions) add(sess *Session, uri string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byURI == nil {
		s.byURI, s.byUser, s.bytes = map[string]map[*Session]struct{}{}, map[*Session]map[string]struct{}{}, map[*Session]int{}
	}
	if _, ok := s.byUser[sess][uri]; ok {
		return nil
	}
	switch {
	case len(s.byUser[sess]) >= maxSessionSubscriptions:
		return rpcErrorf(CodeInternalError, "too many subscriptions: this session holds %d, the most one may; unsubscribe from some first", maxSessionSubscriptions)
	case s.bytes[sess]+len(uri) > maxSessionSubscriptionBytes:
		return rpcErrorf(CodeInternalError, "too many subscriptions: their URIs would take %d bytes, more than the %d one session may hold; unsubscribe from some first", s.bytes[sess]+len(uri), maxSessionSubscriptionBytes)
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
	return nil
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
	if err := req.srv.subs.add(req.session(), p.URI); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

func handleUnsubscribe(_ context.Context, req *request, p *subscribeParams) (any, error) {
	if p.URI == "" {
		return nil, rpcErrorf(CodeInvalidParams, "invalid params: uri is required")
	}
	req.srv.subs.remove(req.session(), p.URI)
	return struct{}{}, nil
}

// notifyResourceUpdated tells the sessions and subscriptions/listen
// streams subscribed to a resource that it changed: those to which the
// plugin serves it, as their views route the URI. A plugin may only speak
// for resources it serves.
func (s *Server) notifyResourceUpdated(plugin string) func(ctx context.Context, in []byte) ([]byte, error) {
	return func(_ context.Context, in []byte) ([]byte, error) {
		var p abi.ResourceUpdatedParams
		if err := json.Unmarshal(in, &p); err != nil {
			return nil, fmt.Errorf("notify_resource_updated: bad input: %w", err)
		}
		c := s.Catalog()
		if !c.serves(plugin, p.URI) {
			return nil, errors.New("notify_resource_updated: " + p.URI + " is not a resource of this plugin")
		}
		servedBy := func(v view) bool {
			owner := c.resolveResource(p.URI, v)
			return owner != nil && owner.Name == plugin
		}
		msg := encodeNotification("notifications/resources/updated", p)
		for _, sess := range s.subs.subscribers(p.URI) {
			if servedBy(sess.view()) {
				_ = sess.out.Send(msg)
			}
		}
		s.listeners.resourceUpdated(p.URI, servedBy)
		return nil, nil
	}
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
				told++
			}
		}
		if told > 0 {
			s.log().Info("resource gone; subscribers told and unsubscribed", "uri", uri, "sessions", told)
		}
	}
}
