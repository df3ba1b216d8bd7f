package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// maxURLElicitations bounds the URL elicitations the host remembers per
// plugin; beyond it the oldest are forgotten (and can no longer complete).
const maxURLElicitations = 256

// urlElicitations remembers which session each URL-mode elicitation of a
// plugin was sent to, so that its completion goes to that session's client
// and to no other. The zero value is ready to use.
type urlElicitations struct {
	mu       sync.Mutex
	byPlugin map[string]*pluginElicitations
	seq      uint64
}

type pluginElicitations struct {
	byID  map[string]elicitationEntry
	order []elicitationRef // oldest first; stale refs are skipped
}

// elicitationEntry is where a URL elicitation was sent: the conn of the
// request that sent it, and the request's era, which says whether its
// client takes the completion.
type elicitationEntry struct {
	conn *conn
	era  era
	seq  uint64
}

type elicitationRef struct {
	id  string
	seq uint64
}

// start records that plugin sent URL elicitation id to the client of req.
// An id the plugin has in progress with another conn is refused.
func (u *urlElicitations) start(plugin, id string, req *request) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.byPlugin == nil {
		u.byPlugin = map[string]*pluginElicitations{}
	}
	pe := u.byPlugin[plugin]
	if pe == nil {
		pe = &pluginElicitations{byID: map[string]elicitationEntry{}}
		u.byPlugin[plugin] = pe
	}
	if e, ok := pe.byID[id]; ok {
		if e.conn != req.conn {
			return fmt.Errorf("create_elicitation: elicitationId %q is already in use by another elicitation of this plugin", id)
		}
		return nil
	}
	u.seq++
	pe.byID[id] = elicitationEntry{conn: req.conn, era: req.era, seq: u.seq}
	pe.order = append(pe.order, elicitationRef{id: id, seq: u.seq})
	for len(pe.byID) > maxURLElicitations {
		oldest := pe.order[0]
		pe.order = pe.order[1:]
		if e, ok := pe.byID[oldest.id]; ok && e.seq == oldest.seq {
			delete(pe.byID, oldest.id)
		}
	}
	if len(pe.order) > 2*maxURLElicitations {
		live := make([]elicitationRef, 0, len(pe.byID))
		for _, r := range pe.order {
			if e, ok := pe.byID[r.id]; ok && e.seq == r.seq {
				live = append(live, r)
			}
		}
		pe.order = live
	}
	return nil
}

// take forgets elicitation id of plugin and returns where it was sent; ok
// is false when the plugin has no such elicitation in progress. When c is
// not nil, only an elicitation sent on c is taken.
func (u *urlElicitations) take(plugin, id string, c *conn) (e elicitationEntry, ok bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	pe := u.byPlugin[plugin]
	if pe == nil {
		return e, false
	}
	e, ok = pe.byID[id]
	if !ok || (c != nil && e.conn != c) {
		return e, false
	}
	delete(pe.byID, id)
	return e, true
}

// forget forgets the elicitations sent on a conn that closed.
func (u *urlElicitations) forget(c *conn) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, pe := range u.byPlugin {
		for id, e := range pe.byID {
			if e.conn == c {
				delete(pe.byID, id)
			}
		}
	}
}

// createElicitation is the host function create_elicitation of plugin. A
// URL-mode elicitation the user accepts is remembered until the plugin
// announces its completion (notify_elicitation_complete).
func (s *Server) createElicitation(plugin string) func(context.Context, []byte) ([]byte, error) {
	return func(ctx context.Context, in []byte) ([]byte, error) {
		return createElicitation(ctx, in, func(req *request, p *elicitParams) (func(json.RawMessage, error), error) {
			if err := s.elicitations.start(plugin, p.ElicitationID, req); err != nil {
				return nil, err
			}
			return func(res json.RawMessage, err error) {
				var r struct {
					Action string `json:"action"`
				}
				if err != nil || json.Unmarshal(res, &r) != nil || r.Action != "accept" {
					s.elicitations.take(plugin, p.ElicitationID, req.conn)
					return
				}
				s.holdElicitation(plugin, p.ElicitationID, req.conn)
			}, nil
		})
	}
}

// notifyElicitationComplete is the host function notify_elicitation_complete
// (hyper-mcp: notify_url_elicitation_completed) of plugin: it sends
// notifications/elicitation/complete to the client of the session the
// plugin's URL elicitation was sent to, once. Ids the plugin did not create,
// or already completed, are refused. With replicas sharing a backend, the
// elicitation may have been sent by another (Options.Elicitations), and
// the session's client is told by whichever replicas hold the session
// (Options.Changes): its stream of server messages is on one of them.
func (s *Server) notifyElicitationComplete(plugin string) func(context.Context, []byte) ([]byte, error) {
	return func(ctx context.Context, in []byte) ([]byte, error) {
		var p struct {
			ElicitationID string `json:"elicitationId"`
		}
		if err := json.Unmarshal(in, &p); err != nil {
			return nil, fmt.Errorf("notify_elicitation_complete: bad input: %w", err)
		}
		if p.ElicitationID == "" {
			return nil, errors.New("notify_elicitation_complete: elicitationId is required")
		}
		e, ok := s.elicitations.take(plugin, p.ElicitationID, nil)
		done, shared, err := s.takeElicitation(ctx, plugin, p.ElicitationID)
		switch {
		case !ok && err != nil:
			return nil, fmt.Errorf("notify_elicitation_complete: reading the replicas' URL elicitations: %w", err)
		case !ok && !shared:
			return nil, fmt.Errorf("notify_elicitation_complete: %q is not a URL elicitation of this plugin in progress", p.ElicitationID)
		case !ok || s.opts.Changes != nil && shared:
			s.elicitationCompleted(done)
			sealed, _ := s.seal.sealedJSON("elicitation done", "", done)
			s.publishChange(sharedChange{Elicitation: sealed})
			return nil, nil
		}
		if e.conn.isClosed() {
			return nil, fmt.Errorf("notify_elicitation_complete: the session of elicitation %q has ended", p.ElicitationID)
		}
		if !takesElicitationComplete(e.era.capabilities(), e.era.version()) {
			return nil, errClientCannot{"elicitation completion needs a 2025-11-25 client that declared elicitation.url"}
		}
		return nil, e.conn.out.Send(elicitationComplete(p.ElicitationID))
	}
}

// takesElicitationComplete reports whether a client of caps, at version,
// takes notifications/elicitation/complete: a 2025-11-25 one that
// declared elicitation.url.
func takesElicitationComplete(caps clientCapabilities, version string) bool {
	return caps.Elicitation != nil && caps.Elicitation.URL != nil && atLeast(version, Version20251125)
}

// elicitationComplete is the notification that URL elicitation id
// completed.
func elicitationComplete(id string) []byte {
	return encodeNotification("notifications/elicitation/complete", map[string]string{"elicitationId": id})
}
