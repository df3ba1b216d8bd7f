package host

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"
)

// sessionSet is the server's registry of live sessions: a session joins in
// NewSession and leaves in Close. Server-initiated notifications that
// concern every client (list changes) go to the sessions in it.
type sessionSet struct {
	mu sync.Mutex
	m  map[*Session]struct{}
}

func (s *sessionSet) add(sess *Session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[*Session]struct{}{}
	}
	s.m[sess] = struct{}{}
}

func (s *sessionSet) remove(sess *Session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, sess)
}

// all returns the sessions of the set.
func (s *sessionSet) all() []*Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Collect(maps.Keys(s.m))
}

// withID returns the session of this process whose id (its id's hash in
// a shared store) is id; nil for none.
func (s *sessionSet) withID(id string) *Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	for sess := range s.m {
		if sess.id == id {
			return sess
		}
	}
	return nil
}

// initialized returns the sessions that completed the handshake
// (notifications/initialized) and are not closed.
func (s *sessionSet) initialized() []*Session {
	all := s.all()
	out := all[:0]
	for _, sess := range all {
		if sess.live() {
			out = append(out, sess)
		}
	}
	return out
}

// ListChanges says which lists, as clients see them, differ between two
// catalogs. Resources covers resources and resource templates.
type ListChanges struct {
	Tools, Prompts, Resources bool
}

// Any reports whether any list changed.
func (c ListChanges) Any() bool { return c.Tools || c.Prompts || c.Resources }

// diffCatalogs compares what clients see of two catalogs, kind by kind.
func diffCatalogs(a, b *Catalog) ListChanges { return diffCatalogsFor(a, b, everything) }

// diffCatalogsFor compares what the view v sees of two catalogs.
func diffCatalogsFor(a, b *Catalog, v view) ListChanges {
	return ListChanges{
		Tools:   !sameList(visible(v, a.tools), visible(v, b.tools), func(e *toolEntry) any { return e.tool }),
		Prompts: !sameList(visible(v, a.prompts), visible(v, b.prompts), func(e *promptEntry) any { return e.prompt }),
		Resources: !sameList(visible(v, a.resources), visible(v, b.resources), func(e *resourceEntry) any { return e.resource }) ||
			!sameList(visible(v, a.templates), visible(v, b.templates), func(e *templateEntry) any { return e.template }),
	}
}

// sameList reports whether two lists of entries look the same to clients.
func sameList[E any](a, b []E, view func(E) any) bool {
	if len(a) != len(b) {
		return false
	}
	enc := func(list []E) []byte {
		items := make([]any, len(list))
		for i, e := range list {
			items[i] = view(e)
		}
		raw, _ := json.Marshal(items)
		return raw
	}
	return string(enc(a)) == string(enc(b))
}

// Refresh lists the named plugins of the current catalog again (every
// plugin when none is named), keeps the lists of the others, swaps the new
// catalog in and sends notifications/{tools,prompts,resources}/list_changed,
// for the kinds that changed, to every initialized session. A listing that
// fails keeps the plugin's previous list of that kind. Refreshes and swaps
// are serialized; requests already running keep the catalog they started
// with. It returns what changed.
func (s *Server) Refresh(ctx context.Context, plugins ...string) ListChanges {
	_, changes := s.replaceCatalog(func(cur *Catalog) *Catalog {
		relist := func(p *Plugin) bool { return len(plugins) == 0 || slices.Contains(plugins, p.Name) }
		return buildCatalog(ctx, cur.plugins, s.log(), cur, relist)
	})
	return changes
}

// ReplacePlugins makes the server serve plugins from now on (hot swap). A
// plugin also in the current catalog (the same *Plugin) keeps its lists;
// the others are listed. Sessions are told which kinds of list changed, as
// by Refresh, and subscribers of resources no plugin serves anymore are told
// and unsubscribed. It returns the previous catalog: the caller closes those
// of its plugins that are not in plugins, once the requests using them
// ended.
func (s *Server) ReplacePlugins(ctx context.Context, plugins []*Plugin) (old *Catalog, changes ListChanges) {
	old, changes = s.replaceCatalog(func(cur *Catalog) *Catalog {
		return buildCatalog(ctx, plugins, s.log(), cur, func(*Plugin) bool { return false })
	})
	s.dropOrphanSubscriptions()
	return old, changes
}

// replaceCatalog builds a catalog from the current one and swaps it in, with
// other swaps held off, then announces what changed.
func (s *Server) replaceCatalog(build func(cur *Catalog) *Catalog) (*Catalog, ListChanges) {
	s.refreshMu.Lock()
	cur := s.Catalog()
	if cur == nil {
		cur = &Catalog{}
	}
	next := build(cur)
	old, changes := s.swapCatalog(next)
	s.refreshMu.Unlock()
	s.announce(changes, viewChanges(old, next, s.partial.Load()))
	s.publishChanges(changes)
	return old, changes
}

// swapCatalog installs c and returns the catalog it replaced and what
// changed. The caller holds refreshMu and announces the changes.
func (s *Server) swapCatalog(c *Catalog) (*Catalog, ListChanges) {
	old := s.catalog.Swap(c)
	s.swaps.swapped()
	if old == nil {
		old = &Catalog{}
	}
	return old, diffCatalogs(old, c)
}

// announce sends each initialized session, on its server-initiated
// stream, and each subscription the list_changed notifications of what its
// view sees change (of), or of changes when of is nil: every client sees
// every plugin.
func (s *Server) announce(changes ListChanges, of func(view) ListChanges) {
	if !changes.Any() && of == nil {
		return
	}
	if of == nil {
		of = func(view) ListChanges { return changes }
	}
	sessions := s.sessions.initialized()
	level := slog.LevelInfo
	if len(sessions) == 0 {
		level = slog.LevelDebug // e.g. the first catalog, at startup
	}
	s.log().Log(context.Background(), level, "plugin lists changed", "tools", changes.Tools, "prompts", changes.Prompts, "resources", changes.Resources, "sessions", len(sessions))
	for _, sess := range sessions {
		for _, method := range of(sess.view()).methods() {
			if err := sess.out.Send(encodeNotification(method, struct{}{})); err != nil {
				s.log().Debug("list_changed not delivered", "err", err)
				break
			}
		}
	}
	s.listeners.listChanged(of)
}

// methods returns the list_changed notifications of c.
func (c ListChanges) methods() []string {
	var out []string
	for _, k := range []struct {
		changed bool
		method  string
	}{
		{c.Tools, methodToolsListChanged},
		{c.Prompts, methodPromptsListChanged},
		{c.Resources, methodResourcesListChanged},
	} {
		if k.changed {
			out = append(out, k.method)
		}
	}
	return out
}

// The list_changed notifications.
const (
	methodToolsListChanged     = "notifications/tools/list_changed"
	methodPromptsListChanged   = "notifications/prompts/list_changed"
	methodResourcesListChanged = "notifications/resources/list_changed"
)

// Debouncing of notify_*_list_changed: the first call arms a timer; calls
// within listChangedDelay of the previous one push it back, but never more
// than listChangedMaxDelay after the first. When it fires, the plugins that
// called are listed again (Refresh), in the background. A plugin that cannot be listed then (busy: its only instance runs a long
// call) is tried again, up to listChangedRetries times in a row.
const (
	listChangedDelay    = 100 * time.Millisecond
	listChangedMaxDelay = time.Second
	listChangedRetries  = 3
)

type listChangeDebounce struct {
	mu          sync.Mutex
	dirty       map[string]struct{} // plugins that announced a change
	retries     map[string]int      // failed refreshes in a row, by plugin
	armed       bool
	first, last time.Time
}

// notifyListChanged is the host function notify_{tool,prompt,resource}_list_changed:
// it records that the plugin's lists changed and returns at once. The
// refresh runs later, outside the plugin call: the calling instance is busy
// until the call returns, so listing it now could wait for itself.
func (s *Server) notifyListChanged(plugin string) func(context.Context, []byte) ([]byte, error) {
	return func(context.Context, []byte) ([]byte, error) {
		s.listChanged(plugin)
		return nil, nil
	}
}

// listChanged marks a plugin's lists as changed and arms the debounce timer.
func (s *Server) listChanged(plugin string) {
	d := &s.listChanges
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dirty == nil {
		d.dirty = map[string]struct{}{}
	}
	d.dirty[plugin] = struct{}{}
	d.last = time.Now()
	if !d.armed {
		d.armed, d.first = true, d.last
		time.AfterFunc(listChangedDelay, s.flushListChanges)
	}
}

// flushListChanges runs when the debounce timer fires: it waits longer if a
// change came in meanwhile, else refreshes the plugins that changed.
func (s *Server) flushListChanges() {
	d := &s.listChanges
	d.mu.Lock()
	now := time.Now()
	if more := min(listChangedDelay-now.Sub(d.last), listChangedMaxDelay-now.Sub(d.first)); more > 0 {
		time.AfterFunc(more, s.flushListChanges)
		d.mu.Unlock()
		return
	}
	plugins := slices.Sorted(maps.Keys(d.dirty))
	d.dirty, d.armed = nil, false
	d.mu.Unlock()
	s.log().Debug("plugins announced list changes", "plugins", plugins)
	s.Refresh(context.Background(), plugins...)

	// Try again the plugins that could not be listed.
	c := s.Catalog()
	for _, p := range c.plugins {
		if !slices.Contains(plugins, p.Name) {
			continue
		}
		d.mu.Lock()
		if d.retries == nil {
			d.retries = map[string]int{}
		}
		retry := false
		if l := c.lists[p]; l != nil && l.failed && d.retries[p.Name] < listChangedRetries {
			d.retries[p.Name]++
			retry = true
		} else {
			delete(d.retries, p.Name)
		}
		d.mu.Unlock()
		if retry {
			s.log().Warn("listing a plugin that announced changes failed; trying again", "plugin", p.Name)
			s.listChanged(p.Name)
		}
	}
}

// log returns the server's logger; a zero Server discards.
func (s *Server) log() *slog.Logger {
	if s.logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.logger
}

// SetCatalog makes the server serve c from now on, and tells initialized
// sessions which of its lists differ from the previous catalog's (see
// ReplacePlugins).
func (s *Server) SetCatalog(c *Catalog) {
	s.replaceCatalog(func(*Catalog) *Catalog { return c })
}

// Logger returns the server's logger.
func (s *Server) Logger() *slog.Logger { return s.logger }
