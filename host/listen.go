package host

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
)

// subscriptions/listen (2026-07-28) replaces the GET stream and
// resources/subscribe: a long-lived request whose answer is a stream of the
// notifications its filter asks for. Its first message is the
// acknowledgement; every message carries the subscription's id (the
// request's JSON-RPC id) in _meta. The client ends it by closing the stream
// (HTTP) or with notifications/cancelled (stdio), and then gets no
// response; the server ends it at shutdown with a complete result.

const (
	methodListen       = "subscriptions/listen"
	metaSubscriptionID = "io.modelcontextprotocol/subscriptionId"
)

// maxListenParams caps the params of subscriptions/listen. A subscription
// holds them for as long as it lasts (three times over: its request's
// body, the params, the filter decoded), and only the connection limits
// bound how many subscriptions a client opens. 16 KiB lists some 300
// resource URIs; a client watching more opens more subscriptions.
const maxListenParams = 16 << 10

// listenMethod serves subscriptions/listen, refusing params over
// maxListenParams before they are decoded.
func listenMethod() method {
	m := handle(handleListen)
	decode := m.decode
	m.decode = func(raw json.RawMessage) (params, *RPCError) {
		if len(raw) > maxListenParams {
			return nil, rpcErrorf(CodeInvalidParams, "invalid params: %s params of %d bytes, more than the %d bytes a subscription may hold; split its resourceSubscriptions across subscriptions",
				methodListen, len(raw), maxListenParams)
		}
		return decode(raw)
	}
	return m
}

// listenFilter is the notifications a subscription asks for; the
// acknowledgement names those the server honours (honoured).
type listenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

// listenParams are the params of subscriptions/listen.
type listenParams struct {
	meta
	Notifications listenFilter `json:"notifications"`
}

// listenResult ends a subscription the server closes.
type listenResult struct {
	Meta map[string]json.RawMessage `json:"_meta"`
}

// honoured returns the part of f the server honours: the list changes of
// the lists whose capabilities (caps, at 2026-07-28) declare listChanged,
// and the resource updates.
func (f listenFilter) honoured(caps map[string]any) listenFilter {
	changes := func(list string) bool {
		c, _ := caps[list].(map[string]any)
		return c["listChanged"] == true
	}
	f.ToolsListChanged = f.ToolsListChanged && changes("tools")
	f.PromptsListChanged = f.PromptsListChanged && changes("prompts")
	f.ResourcesListChanged = f.ResourcesListChanged && changes("resources")
	return f
}

// listener is one open subscription.
type listener struct {
	id     json.RawMessage
	conn   *conn // what the request that opened it arrived on
	out    Outbound
	filter listenFilter
	view   view          // what the request that opened it sees
	end    chan struct{} // closed when the server ends the subscription
	ended  sync.Once
	// sending is held while a message is sent, and from registration
	// until the acknowledgement is sent, so that nothing precedes it.
	sending sync.Mutex
}

// send sends a notification on the subscription, tagged with its id.
func (l *listener) send(method string, params map[string]any) {
	l.sending.Lock()
	defer l.sending.Unlock()
	l.sendLocked(method, params)
}

// sendLocked is send for a caller that holds l.sending.
func (l *listener) sendLocked(method string, params map[string]any) {
	params["_meta"] = map[string]json.RawMessage{metaSubscriptionID: l.id}
	_ = l.out.Send(encodeNotification(method, params))
}

func (l *listener) close() { l.ended.Do(func() { close(l.end) }) }

// listeners are the open subscriptions of a server. The zero value is
// ready to use.
type listeners struct {
	mu  sync.Mutex
	set map[*listener]struct{}
	// ended are the conns whose subscriptions the server ended, and
	// all is set once it ended every one: a subscription that registers
	// later ends at once.
	ended map[*conn]bool
	all   bool
}

func (ls *listeners) add(l *listener) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.all || ls.ended[l.conn] {
		l.close()
		return
	}
	if ls.set == nil {
		ls.set = map[*listener]struct{}{}
	}
	ls.set[l] = struct{}{}
}

// forget drops what the listeners know of a conn that closed.
func (ls *listeners) forget(c *conn) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	delete(ls.ended, c)
}

func (ls *listeners) remove(l *listener) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	delete(ls.set, l)
}

// active returns the number of open subscriptions.
func (ls *listeners) active() int {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return len(ls.set)
}

// matching returns the open subscriptions that want a notification.
func (ls *listeners) matching(wants func(listenFilter) bool) []*listener {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	var out []*listener
	for l := range ls.set {
		if wants(l.filter) {
			out = append(out, l)
		}
	}
	return out
}

// listChanged tells each subscription of the changes it asked for that
// its view sees (of).
func (ls *listeners) listChanged(of func(view) ListChanges) {
	for _, l := range ls.matching(func(listenFilter) bool { return true }) {
		for _, method := range of(l.view).methods() {
			if l.filter.wants(method) {
				l.send(method, map[string]any{})
			}
		}
	}
}

// wants reports whether the filter asks for the list_changed notification
// method.
func (f listenFilter) wants(method string) bool {
	switch method {
	case methodToolsListChanged:
		return f.ToolsListChanged
	case methodPromptsListChanged:
		return f.PromptsListChanged
	}
	return f.ResourcesListChanged
}

// resourceUpdated tells the subscriptions that listed uri that it changed,
// if their view is one the update is for (to).
func (ls *listeners) resourceUpdated(uri string, to func(view) bool) {
	for _, l := range ls.matching(func(f listenFilter) bool { return slices.Contains(f.ResourceSubscriptions, uri) }) {
		if to(l.view) {
			l.send("notifications/resources/updated", map[string]any{"uri": uri})
		}
	}
}

// end ends the subscriptions opened on c: each is answered with a complete
// result.
func (ls *listeners) end(c *conn) {
	ls.mu.Lock()
	if ls.ended == nil {
		ls.ended = map[*conn]bool{}
	}
	ls.ended[c] = true
	ls.mu.Unlock()
	ls.closeMatching(func(l *listener) bool { return l.conn == c })
}

// endAll ends every subscription, and those that open later at once.
func (ls *listeners) endAll() {
	ls.mu.Lock()
	ls.all = true
	ls.mu.Unlock()
	ls.closeMatching(func(*listener) bool { return true })
}

// closeMatching ends the subscriptions that match.
func (ls *listeners) closeMatching(match func(*listener) bool) {
	for _, l := range ls.matching(func(listenFilter) bool { return true }) {
		if match(l) {
			l.close()
		}
	}
}

// handleListen serves subscriptions/listen: it registers the subscription
// and acknowledges it, then lasts until the client or the server ends it.
// Registering first means that no change made once the acknowledgement is
// on its way is missed; holding l.sending until it is sent means that no
// notification overtakes it.
func handleListen(ctx context.Context, req *request, p *listenParams) (any, error) {
	srv := req.srv
	v := req.view()
	l := &listener{id: req.id, conn: req.conn, out: req.reply, filter: p.Notifications.honoured(srv.capabilities20260728(v)), view: v, end: make(chan struct{})}
	l.sending.Lock()
	srv.listeners.add(l)
	defer srv.listeners.remove(l)
	l.sendLocked("notifications/subscriptions/acknowledged", map[string]any{"notifications": l.filter})
	l.sending.Unlock()
	select {
	case <-ctx.Done():
	case <-l.end:
	}
	return listenResult{Meta: map[string]json.RawMessage{metaSubscriptionID: req.id}}, nil
}
