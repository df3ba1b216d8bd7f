package mcphttp

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/jsonrpc"
)

// Options configure the HTTP transports. Zero values take the defaults.
type Options struct {
	// TLS, when not nil, serves HTTPS with it. Connections are counted and
	// refused (MaxConnections) before their handshake.
	TLS *tls.Config
	// Denied, when set, is told of each request refused for using the
	// session of another subject (DeniedSessionOwner), for the audit
	// trail; subject is the request's.
	Denied func(r *http.Request, reason, subject string)
	// AllowedHosts are the Host header values accepted, as host or
	// host:port; a host without a port accepts any port. Empty: localhost,
	// 127.0.0.1 and [::1] with the listen port.
	AllowedHosts []string
	// AllowedOrigins are the Origin header values accepted when a request
	// has one, as scheme://host[:port]. Empty: http:// and https:// of the
	// allowed hosts.
	AllowedOrigins []string
	// SessionIdleTimeout closes a Streamable HTTP session that has had no
	// request and no open stream for this long (default 5m); its client
	// gets 404 and initializes a new one, as the spec asks.
	SessionIdleTimeout time.Duration
	// MaxSessions bounds the sessions open at once, of both transports; a
	// new one beyond it is refused with 503 (default 1000).
	MaxSessions int
	// InitTimeout ends a Streamable HTTP session whose client has not
	// finished initializing (sent notifications/initialized) this long after
	// its last request (default 10s).
	InitTimeout time.Duration
	// MaxSessionsPerClient bounds the sessions open at once from one client,
	// its user under SubjectsAreUsers or else its address; a new one beyond
	// it is refused with 503 (default 256). Behind a reverse proxy every
	// client has the proxy's address, unless the proxy is one of
	// TrustedProxies.
	MaxSessionsPerClient int
	// MaxBodyBytes bounds a request body; a larger one gets 413 (default
	// 4 MiB).
	MaxBodyBytes int64
	// MaxBodyBytesInFlight bounds the request body bytes being received at
	// once, server-wide (default 256 MiB). A body is reserved whole before
	// it is read, by its Content-Length or, when that is not known, by
	// MaxBodyBytes; one that does not fit is refused at once with 503 and
	// Retry-After, unread. Raised to MaxBodyBytes when lower.
	MaxBodyBytesInFlight int64
	// MaxBodyBytesInFlightPerClient bounds the request body bytes being
	// received at once from one client (a user or an address, as for
	// MaxSessionsPerClient), as MaxBodyBytesInFlight does server-wide
	// (default 64 MiB), so that one client cannot spend the whole budget.
	// Raised to MaxBodyBytes when lower.
	MaxBodyBytesInFlightPerClient int64
	// MaxConnections bounds the connections Server.ServeHTTP keeps open at
	// once (default 4096); one beyond it is answered 503 and closed before
	// anything of it is read. Keep it below the process's open-file limit.
	MaxConnections int
	// MaxConnectionsPerClient bounds the connections Server.ServeHTTP keeps
	// open at once from one client address (default 512), as
	// MaxConnections does in all, so that one client's idle or slow
	// connections (slowloris) cannot take them all.
	MaxConnectionsPerClient int
	// TrustedProxies are the reverse proxies whose X-Forwarded-For is
	// believed (default none: the header is ignored). For a request from
	// one of them, the client the per-client limits count is the rightmost
	// X-Forwarded-For address that is not a trusted proxy; a trusted
	// proxy's connections count against MaxConnections only. The
	// per-client limits count an IPv6 client by its /64.
	TrustedProxies []netip.Prefix
	// SubjectsAreUsers says that each authenticated subject
	// (Options.Subject) is a user of its own, as a JWT's sub is, rather
	// than one name for every holder of a shared token. Then
	// MaxSessionsPerClient and MaxBodyBytesInFlightPerClient count a
	// request that has a subject against its subject, not its address, so
	// that users behind one address (a NAT) have a share each and one
	// cannot refuse the others. Connections are counted by address
	// whatever this says: a connection has no token when it opens.
	SubjectsAreUsers bool
	// MaxBatchResponseBytes bounds the reply to a JSON-RPC batch (2025-03-26
	// sessions), of at most 100 messages (default 8 MiB). A response that
	// does not fit is replaced by an error naming this limit, so that every
	// request of the batch is still answered; a notification or a request
	// to the client that does not fit is not sent (its sender gets an
	// error).
	MaxBatchResponseBytes int64
	// MaxStreamBuffer bounds the message bytes an SSE stream keeps: those
	// not yet written and those kept for replay. A connection that falls
	// further behind is dropped (default 1 MiB).
	MaxStreamBuffer int64
	// ReconnectDelay is the SSE retry sent to 2025-11-25 clients: how long
	// they wait before resuming a stream whose connection ended (default 1s).
	ReconnectDelay time.Duration
	// ReadHeaderTimeout bounds the time Server.ServeHTTP gives a client to
	// send a request's headers (default 10s).
	ReadHeaderTimeout time.Duration
	// ShutdownGrace is how long Server.ServeHTTP lets requests in flight
	// finish when its context ends, before cancelling them (default 5s).
	ShutdownGrace time.Duration
	// Middleware wraps the MCP endpoints (/mcp, /sse and /messages), e.g.
	// for authentication; it runs after the Host and Origin checks. The
	// ResponseWriter it passes on must flush (http.Flusher, or Unwrap).
	// Nil: none.
	Middleware func(http.Handler) http.Handler
	// Endpoints are further MCP endpoints, each serving only some
	// plugins; an Endpoint at /mcp changes what the default one serves.
	// None: /mcp serves every plugin.
	Endpoints []Endpoint
	// Public maps further paths to handlers served after the Host and Origin
	// checks but without Middleware, e.g. the OAuth protected resource
	// metadata, which clients must read before they have a token.
	Public map[string]http.Handler
	// Probes maps paths to health probes served to GET before the Host
	// and Origin checks too: load balancers and kubelets ask them with
	// whatever Host they like (an address, or none), and they answer
	// nothing a page could use.
	Probes map[string]http.Handler
}

// Defaults of Options, and fixed limits of the HTTP transports.
const (
	defaultSessionIdleTimeout = 5 * time.Minute
	defaultMaxSessions        = 1000
	defaultInitTimeout        = 10 * time.Second
	defaultMaxClientSessions  = 256
	defaultMaxBodyBytes       = 4 << 20
	defaultMaxBodyInFlight    = 256 << 20
	defaultMaxClientInFlight  = 64 << 20
	defaultMaxConnections     = 4096
	defaultMaxClientConns     = 512
	defaultMaxStreamBuffer    = 1 << 20
	defaultReconnectDelay     = time.Second
	defaultShutdownGrace      = 5 * time.Second
	defaultReadHeaderTimeout  = 10 * time.Second

	bodyReadTimeout   = 30 * time.Second // to send a request body
	idleConnTimeout   = 2 * time.Minute  // keep-alive connections
	maxHeaderBytes    = 64 << 10         // request headers
	sseWriteTimeout   = 10 * time.Second // for a client to take one write of its SSE stream
	shutdownMargin    = 2 * time.Second  // after the grace, for streams to end
	maxIdleStreams    = 16               // POST streams per session kept with no connection, for resumption
	maxReplays        = 8                // streams per session resumed at once from other replicas' logs
	sessionIDBytes    = 32               // random bytes of a session id
	headerSessionID   = "Mcp-Session-Id" // names the Streamable HTTP session of a request
	headerVersion     = "Mcp-Protocol-Version"
	headerLastEventID = "Last-Event-ID"
)

func (o Options) withDefaults() Options {
	setDefault(&o.SessionIdleTimeout, defaultSessionIdleTimeout)
	setDefault(&o.MaxSessions, defaultMaxSessions)
	setDefault(&o.InitTimeout, defaultInitTimeout)
	setDefault(&o.MaxSessionsPerClient, defaultMaxClientSessions)
	setDefault(&o.MaxBodyBytes, defaultMaxBodyBytes)
	setDefault(&o.MaxBodyBytesInFlight, defaultMaxBodyInFlight)
	setDefault(&o.MaxBodyBytesInFlightPerClient, defaultMaxClientInFlight)
	o.MaxBodyBytesInFlight = max(o.MaxBodyBytesInFlight, o.MaxBodyBytes)
	o.MaxBodyBytesInFlightPerClient = max(o.MaxBodyBytesInFlightPerClient, o.MaxBodyBytes)
	setDefault(&o.MaxConnections, defaultMaxConnections)
	setDefault(&o.MaxConnectionsPerClient, defaultMaxClientConns)
	setDefault(&o.MaxBatchResponseBytes, host.DefaultMaxBatchReplyBytes)
	setDefault(&o.MaxStreamBuffer, defaultMaxStreamBuffer)
	setDefault(&o.ReconnectDelay, defaultReconnectDelay)
	setDefault(&o.ShutdownGrace, defaultShutdownGrace)
	setDefault(&o.ReadHeaderTimeout, defaultReadHeaderTimeout)
	if o.Middleware == nil {
		o.Middleware = func(h http.Handler) http.Handler { return h }
	}
	return o
}

func setDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// Handler serves MCP over HTTP: Streamable HTTP at /mcp (streamable.go)
// and the legacy HTTP+SSE transport at /sse and /messages (sse.go), and
// the same at each of Options.Endpoints; other paths get 404. Every
// request first passes the DNS-rebinding checks: a Host or Origin header
// that is not allowed gets 403.
type Handler struct {
	srv   *host.Server
	log   *slog.Logger
	opts  Options
	hosts []hostPort // allowed Host values
	mux   *http.ServeMux

	bodies         *bodyBudget // request bodies being received
	bodyRefusal    refusalLog
	sessionRefusal refusalLog

	mu       sync.Mutex
	sessions map[string]*httpSession
	clients  map[string]int // open sessions by client (Handler.client)
	closing  bool           // shutting down: no new sessions
}

// hostPort is a host name (IPv6 without brackets) and a port, "" for any.
type hostPort struct{ host, port string }

func parseHostPort(s string) hostPort {
	s = strings.ToLower(s)
	if host, port, err := net.SplitHostPort(s); err == nil {
		return hostPort{host, port}
	}
	return hostPort{strings.Trim(s, "[]"), ""}
}

// NewHandler returns the HTTP handler of the MCP endpoints of s.
// listenAddr is the address the server listens on; its port goes into the
// default allowed hosts.
func NewHandler(s *host.Server, listenAddr string, opts Options) *Handler {
	h := &Handler{srv: s, log: s.Logger(), opts: opts.withDefaults(), sessions: map[string]*httpSession{}, clients: map[string]int{}}
	h.bodies = newBodyBudget(h.opts.MaxBodyBytesInFlight, h.opts.MaxBodyBytesInFlightPerClient)
	allowed := opts.AllowedHosts
	if len(allowed) == 0 {
		_, port, _ := net.SplitHostPort(listenAddr)
		for _, name := range []string{"localhost", "127.0.0.1", "[::1]"} {
			allowed = append(allowed, name+":"+port)
		}
	}
	for _, a := range allowed {
		h.hosts = append(h.hosts, parseHostPort(a))
	}
	h.mux = http.NewServeMux()
	for _, ep := range endpoints(s, opts.Endpoints) {
		for pattern, fn := range map[string]http.HandlerFunc{
			"POST " + ep.path:     h.postMCP,
			"GET " + ep.path:      h.getMCP,
			"DELETE " + ep.path:   h.deleteMCP,
			"GET " + ep.sse:       h.getSSE,
			"POST " + ep.messages: h.postMessages,
		} {
			h.mux.Handle(pattern, h.opts.Middleware(ep.serve(fn)))
		}
	}
	for path, handler := range h.opts.Public {
		h.mux.Handle(path, handler)
	}
	return h
}

// ServeHTTP checks the Host and Origin headers and serves the endpoints.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if probe, ok := h.opts.Probes[r.URL.Path]; ok && r.Method == http.MethodGet {
		probe.ServeHTTP(w, r)
		return
	}
	if !h.hostAllowed(r.Host) {
		h.refuse(w, r, "Host", r.Host, "allowed_hosts")
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" && !h.originAllowed(origin) {
		h.refuse(w, r, "Origin", origin, "allowed_origins")
		return
	}
	h.mux.ServeHTTP(w, r)
}

// refuse answers 403 to a request whose header (Host or Origin) has a
// value that the [http] setting does not allow, naming the setting, and
// logs it with the client's address: DNS-rebinding protection, which a
// server reached by another name than its default loopback ones needs
// configured.
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, header, value, setting string) {
	h.log.Warn("request refused: "+header+" not allowed", "header", header, "value", value,
		"client", h.clientAddress(r), "setting", "[http] "+setting)
	writeRPCError(w, http.StatusForbidden, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest,
		"forbidden: %s %q is not allowed: add %q to [http] %s in the server's config", header, value, value, setting))
}

// hostAllowed reports whether a Host value (host or host:port) is allowed.
func (h *Handler) hostAllowed(s string) bool {
	got := parseHostPort(s)
	return slices.ContainsFunc(h.hosts, func(a hostPort) bool {
		return a.host == got.host && (a.port == "" || a.port == got.port)
	})
}

// originAllowed reports whether an Origin value is allowed.
func (h *Handler) originAllowed(origin string) bool {
	if len(h.opts.AllowedOrigins) > 0 {
		return slices.ContainsFunc(h.opts.AllowedOrigins, func(a string) bool { return strings.EqualFold(a, origin) })
	}
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && h.hostAllowed(u.Host)
}

// httpSession is a Session served over HTTP, with its SSE streams.
type httpSession struct {
	id         string
	subject    string // the authenticated subject that opened it; only it may use it
	client     string // the client that opened it, as the per-client limits count it
	legacy     bool   // HTTP+SSE: the session lives as long as its /sse stream
	log        *slog.Logger
	endpoint   *endpoint // the endpoint that opened it; only it may use it
	sess       *host.Session
	standalone *eventStream // the GET stream (Streamable HTTP), or the /sse stream
	// relay, for a legacy session whose /sse stream another replica
	// holds, takes what it sends to that stream (host.ResumeLegacy); nil
	// for one served where its stream is.
	relay   host.Outbound
	done    chan struct{} // closed when the session ends
	endOnce sync.Once

	// Guarded by the handler's mu.
	active int         // HTTP requests being served for the session
	idle   *time.Timer // ends the session once it has been idle long enough

	gate     sync.RWMutex // held for reading while a message is handed to sess
	draining bool         // shutting down: no new requests reach sess

	mu         sync.Mutex
	streams    map[int]*eventStream // by stream id; 0 is standalone
	lastStream int
	replays    int // streams of other replicas being resumed here (replayStream)
}

var errClosing = errors.New("the server is shutting down")

// sessionNotFound is the body of a 404 for a session id no session has.
const sessionNotFound = "session not found: it ended or never existed; initialize a new one"

// DeniedSessionOwner is the reason Options.Denied is given for a request
// that used the session of another subject.
const DeniedSessionOwner = "session_owner"

// newSession starts a session, in use by the request r that starts it and
// bound to r's authenticated subject.
func (h *Handler) newSession(r *http.Request, legacy bool) (*httpSession, error) {
	id := make([]byte, sessionIDBytes)
	_, _ = rand.Read(id)
	hs := h.httpSession(r, base64.RawURLEncoding.EncodeToString(id), legacy)
	hs.active = 1

	h.mu.Lock()
	err := h.admitLocked(hs.client)
	h.mu.Unlock()
	if err != nil {
		return nil, err
	}
	// Across the replicas sharing the session store, if any (the bounds
	// are the same numbers).
	switch refused, err := h.srv.AdmitSession(r.Context(), hs.id, hs.client, h.opts.MaxSessions, h.opts.MaxSessionsPerClient); {
	case err != nil:
		return nil, fmt.Errorf("session state unavailable: %w", err)
	case refused == host.SessionBoundAll:
		h.sessionRefusal.log(h.log, "refusing a new HTTP session: at the session limit of the service's replicas", "max", h.opts.MaxSessions)
		return nil, fmt.Errorf("too many sessions: [http] max_sessions (%d) are open across the service's replicas; try again later", h.opts.MaxSessions)
	case refused != "":
		h.sessionRefusal.log(h.log, "refusing a new HTTP session: at the limit of one client across the service's replicas", "client", hs.client, "max", h.opts.MaxSessionsPerClient)
		return nil, fmt.Errorf("too many sessions from this client: [http] max_sessions_per_client (%d) are open across the service's replicas; end some, or try again later", h.opts.MaxSessionsPerClient)
	}
	h.mu.Lock()
	err = h.admitLocked(hs.client) // others came meanwhile, or a shutdown
	if err == nil {
		hs.sess = h.srv.OpenSession(hs.standalone, h.sessionOptions(hs))
		hs.standalone.name = hs.sess.StreamName(0, nil)
		h.sessions[hs.id] = hs
		h.clients[hs.client]++
	}
	h.mu.Unlock()
	if err != nil {
		if err := h.srv.ReleaseSession(context.WithoutCancel(r.Context()), hs.id); err != nil {
			h.log.Warn("freeing a refused session's place in the shared store failed: it is held until it expires", "err", err)
		}
		return nil, err
	}
	return hs, nil
}

// admitLocked refuses a new session of client beyond the bounds of this
// handler's sessions. h.mu is held.
func (h *Handler) admitLocked(client string) error {
	switch {
	case h.closing:
		return errClosing
	case len(h.sessions) >= h.opts.MaxSessions:
		h.sessionRefusal.log(h.log, "refusing a new HTTP session: at the session limit", "max", h.opts.MaxSessions)
		return fmt.Errorf("too many sessions: [http] max_sessions (%d) are open; try again later", h.opts.MaxSessions)
	case h.clients[client] >= h.opts.MaxSessionsPerClient:
		h.sessionRefusal.log(h.log, "refusing a new HTTP session: at the limit of one client", "client", client, "max", h.opts.MaxSessionsPerClient)
		return fmt.Errorf("too many sessions from this client: [http] max_sessions_per_client (%d) are open; end some, or try again later", h.opts.MaxSessionsPerClient)
	}
	return nil
}

// httpSession returns a session id for request r, not yet started.
func (h *Handler) httpSession(r *http.Request, id string, legacy bool) *httpSession {
	hs := &httpSession{id: id, subject: h.srv.Subject(r.Context()), client: h.client(r), legacy: legacy, log: h.log,
		endpoint: endpointOf(r), done: make(chan struct{})}
	hs.standalone = newEventStream(hs, 0, h.opts.MaxStreamBuffer)
	hs.standalone.name = "0"
	hs.streams = map[int]*eventStream{0: hs.standalone}
	return hs
}

// sessionOptions are those of the host session of hs.
func (h *Handler) sessionOptions(hs *httpSession) host.SessionOptions {
	return host.SessionOptions{Plugins: hs.endpoint.plugins, MaxBatchReplyBytes: h.opts.MaxBatchResponseBytes, Transport: host.TransportHTTP,
		ID: hs.id, Endpoint: hs.endpoint.path}
}

// resume serves here the session id that r names and this handler does
// not hold: a Streamable HTTP one that r's subject initialized at r's
// endpoint on another replica sharing the session store ([state]), or
// here before this process let it go (host.Server.ResumeSession); or a
// legacy one whose stream another replica holds (host.Server.ResumeLegacy).
// It returns nil when there is none, and the store's error when it cannot
// be read.
func (h *Handler) resume(r *http.Request, id string, legacy bool) error {
	hs := h.httpSession(r, id, legacy)
	var sess *host.Session
	var err error
	if legacy {
		sess, hs.relay, err = h.srv.ResumeLegacy(r.Context(), h.sessionOptions(hs), hs.subject)
	} else {
		sess, err = h.srv.ResumeSession(r.Context(), hs.standalone, h.sessionOptions(hs), hs.subject)
	}
	if err != nil {
		if errors.Is(err, host.ErrNoSession) {
			return nil
		}
		return err
	}
	hs.sess = sess
	hs.standalone.name = sess.StreamName(0, nil)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing || h.sessions[id] != nil { // closing, or resumed meanwhile by another request
		sess.Detach()
		return nil
	}
	h.sessions[id] = hs
	h.clients[hs.client]++
	h.log.Debug("HTTP session resumed from the shared session store", "legacy", legacy)
	return nil
}

// acquire finds the session request r names by id and marks it in use.
// When it cannot, it answers the request (400, 404) and returns nil. A
// session is found only for the subject that opened it: to anyone else it
// is unknown, and the attempt is logged; and only at the endpoint that
// opened it.
func (h *Handler) acquire(w http.ResponseWriter, r *http.Request, id string, legacy bool) *httpSession {
	if id == "" {
		writeRPCError(w, http.StatusBadRequest, missingSessionID)
		return nil
	}
	hs := h.acquireHeld(w, r, id, legacy)
	if hs == nil || legacy && hs.relay == nil {
		return hs
	}
	switch err := hs.sess.Refresh(); {
	case errors.Is(err, host.ErrNoSession): // ended on another replica, or expired
		h.release(hs)
		h.endHere(hs)
		http.Error(w, sessionNotFound, http.StatusNotFound)
		return nil
	case err != nil:
		h.release(hs)
		h.log.Warn("touching a session in the shared session store failed", "err", err)
		writeRPCError(w, http.StatusServiceUnavailable, jsonrpc.Errorf(jsonrpc.CodeInternalError, "session state unavailable: %v", err))
		return nil
	}
	return hs
}

// acquireHeld is acquire of a session this handler holds, or resumes
// (resume) when it holds none of that id.
func (h *Handler) acquireHeld(w http.ResponseWriter, r *http.Request, id string, legacy bool) *httpSession {
	h.mu.Lock()
	_, held := h.sessions[id]
	h.mu.Unlock()
	if !held {
		if err := h.resume(r, id, legacy); err != nil {
			h.log.Warn("reading a session from the shared session store failed", "err", err)
			writeRPCError(w, http.StatusServiceUnavailable, jsonrpc.Errorf(jsonrpc.CodeInternalError, "session state unavailable: %v", err))
			return nil
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	hs := h.sessions[id]
	if hs != nil && hs.legacy == legacy {
		if subject := h.srv.Subject(r.Context()); subject != hs.subject {
			h.log.Warn("refused a request for another subject's HTTP session", "subject", subject, "remote", r.RemoteAddr)
			if h.opts.Denied != nil {
				h.opts.Denied(r, DeniedSessionOwner, subject)
			}
			hs = nil
		}
	}
	if hs == nil || hs.legacy != legacy || hs.endpoint != endpointOf(r) {
		http.Error(w, sessionNotFound, http.StatusNotFound)
		return nil
	}
	hs.active++
	if hs.idle != nil {
		hs.idle.Stop()
	}
	return hs
}

// release marks a request done with its session. A Streamable HTTP session
// no request uses is ended after SessionIdleTimeout, unless one comes; one
// whose client has not finished initializing, after InitTimeout.
func (h *Handler) release(hs *httpSession) {
	h.mu.Lock()
	defer h.mu.Unlock()
	hs.active--
	if hs.active > 0 || hs.legacy && hs.relay == nil || h.sessions[hs.id] != hs {
		return
	}
	after := h.opts.SessionIdleTimeout
	if !hs.sess.Initialized() {
		after = h.opts.InitTimeout
	}
	if hs.idle == nil {
		hs.idle = time.AfterFunc(after, func() { h.expire(hs) })
	} else {
		hs.idle.Reset(after)
	}
}

// forgetLocked makes a session unknown: no request finds it from then on,
// and it no longer counts against its client's limit. h.mu is held.
func (h *Handler) forgetLocked(hs *httpSession) {
	delete(h.sessions, hs.id)
	if h.clients[hs.client]--; h.clients[hs.client] <= 0 {
		delete(h.clients, hs.client)
	}
}

// expire ends a session that is still idle; it is unknown from then on.
func (h *Handler) expire(hs *httpSession) {
	h.mu.Lock()
	idle := hs.active == 0 && h.sessions[hs.id] == hs
	if idle {
		h.forgetLocked(hs)
	}
	h.mu.Unlock()
	if !idle {
		return
	}
	if hs.relay != nil { // its replica holds it on
		h.endHere(hs)
		return
	}
	if hs.sess.Initialized() {
		h.log.Info("ending an idle HTTP session", "idle", h.opts.SessionIdleTimeout)
	} else {
		h.log.Info("ending an HTTP session whose client did not finish initializing", "after", h.opts.InitTimeout, "client", hs.client)
		h.end(hs) // no replica can resume it: its place in a shared store goes too
		return
	}
	h.endHere(hs)
}

// end ends a session: its requests in flight are cancelled, its streams end
// once what they hold is written, and its id is no longer known, here or
// on any replica that shares the session store.
func (h *Handler) end(hs *httpSession) { h.finish(hs, (*host.Session).Close) }

// endHere ends a session in this process, as end does, but leaves it to
// the replicas that share the session store ([state]): they, or this one,
// resume it when a request names it, until the store expires it
// (host.Session.Detach).
func (h *Handler) endHere(hs *httpSession) { h.finish(hs, (*host.Session).Detach) }

// finish ends hs here, with stop ending its host session.
func (h *Handler) finish(hs *httpSession, stop func(*host.Session)) {
	h.mu.Lock()
	if h.sessions[hs.id] == hs {
		h.forgetLocked(hs)
	}
	if hs.idle != nil {
		hs.idle.Stop()
	}
	h.mu.Unlock()
	hs.endOnce.Do(func() {
		stop(hs.sess)
		close(hs.done)
		hs.mu.Lock()
		streams := slices.Collect(maps.Values(hs.streams))
		hs.mu.Unlock()
		for _, st := range streams {
			st.close()
		}
	})
}

// handOver hands a POST body to the session, replies going to reply. A body
// that starts requests is refused (503) once the session drains for
// shutdown, so that its requests can be waited for. The requests outlive a
// client that disconnects: only notifications/cancelled cancels them.
func (h *Handler) handOver(w http.ResponseWriter, r *http.Request, hs *httpSession, body []byte, reply host.Outbound, startsRequests bool) bool {
	hs.gate.RLock()
	defer hs.gate.RUnlock()
	if hs.draining && startsRequests {
		writeRPCError(w, http.StatusServiceUnavailable, jsonrpc.Errorf(jsonrpc.CodeInternalError, "%v", errClosing))
		return false
	}
	hs.sess.Handle(h.requestContext(context.WithoutCancel(r.Context()), r), body, reply)
	return true
}

// Close ends every session at once: requests in flight are cancelled and
// every stream ends. New sessions are refused.
func (h *Handler) Close() { h.shutdown(0) }

// shutdown refuses new sessions and requests, lets the requests in flight
// run for grace, cancels the rest and ends every session.
func (h *Handler) shutdown(grace time.Duration) {
	h.mu.Lock()
	h.closing = true
	all := slices.Collect(maps.Values(h.sessions))
	h.mu.Unlock()
	h.srv.EndSubscriptions() // the subscriptions of 2026-07-28 requests

	var wg sync.WaitGroup
	for _, hs := range all {
		wg.Go(func() {
			hs.gate.Lock()
			hs.draining = true
			hs.gate.Unlock()
			hs.sess.Shutdown(grace)
			h.endHere(hs)
		})
	}
	wg.Wait()
}

// Serve serves the MCP endpoints of s (NewHandler) on ln until ctx ends,
// within opts.MaxConnections and MaxConnectionsPerClient, then shuts down
// gracefully: new sessions and requests are refused, the requests in
// flight get opts.ShutdownGrace to finish and are then cancelled, and every
// stream ends. It returns nil after such a shutdown,
// or the error that stopped serving.
func Serve(ctx context.Context, s *host.Server, ln net.Listener, opts Options) error {
	h := NewHandler(s, ln.Addr().String(), opts)
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: h.opts.ReadHeaderTimeout,
		IdleTimeout:       idleConnTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(h.log.Handler(), slog.LevelDebug),
	}
	served := make(chan error, 1)
	var limited net.Listener = newConnLimiter(ln, h.opts, h.log)
	if opts.TLS != nil {
		limited = tls.NewListener(limited, opts.TLS)
	}
	go func() { served <- hs.Serve(limited) }()
	select {
	case err := <-served:
		h.Close()
		return err
	case <-ctx.Done():
	}
	ended := make(chan struct{})
	go func() { h.shutdown(h.opts.ShutdownGrace); close(ended) }()
	stopCtx, cancel := context.WithTimeout(context.Background(), h.opts.ShutdownGrace+shutdownMargin)
	defer cancel()
	if err := hs.Shutdown(stopCtx); err != nil {
		h.log.Warn("closing HTTP connections still open after the shutdown grace", "err", err)
		_ = hs.Close()
	}
	<-ended
	<-served
	return nil
}

// readBody checks a POST's Content-Type and reads its body, within
// MaxBodyBytes, bodyReadTimeout and the body budgets. When it cannot, it
// answers the request (415, 413, 503, 400) and returns false. A body that
// does not fit the budgets is refused before any of it is read, and its
// connection closed.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeRPCError(w, http.StatusUnsupportedMediaType, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "unsupported media type: the body must be application/json"))
		return nil, false
	}
	if r.ContentLength > h.opts.MaxBodyBytes {
		writeRPCError(w, http.StatusRequestEntityTooLarge, tooLarge(h.opts.MaxBodyBytes))
		return nil, false
	}
	reserved := r.ContentLength
	if reserved < 0 {
		reserved = h.opts.MaxBodyBytes
	}
	client := h.client(r)
	if rpcErr := h.bodies.reserve(client, reserved); rpcErr != nil {
		h.bodyRefusal.log(h.log, "refusing a request body: over the budget of bodies in flight", "client", client, "bytes", reserved, "err", rpcErr.Message)
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Connection", "close")
		writeRPCError(w, http.StatusServiceUnavailable, rpcErr)
		return nil, false
	}
	defer h.bodies.release(client, reserved)
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(bodyReadTimeout))
	body, err := readAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes), r.ContentLength)
	_ = rc.SetReadDeadline(time.Time{})
	var maxErr *http.MaxBytesError
	switch {
	case errors.As(err, &maxErr):
		writeRPCError(w, http.StatusRequestEntityTooLarge, tooLarge(maxErr.Limit))
		return nil, false
	case err != nil:
		writeRPCError(w, http.StatusBadRequest, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "reading the request body: %v", err))
		return nil, false
	}
	return bytes.TrimSpace(body), true
}

// readAll reads a body of the given length, or of unknown length when it
// is negative. A known length is read into one buffer of that size, with
// none of the copies io.ReadAll's growth makes.
func readAll(r io.Reader, length int64) ([]byte, error) {
	if length < 0 {
		return io.ReadAll(r)
	}
	body := make([]byte, length)
	_, err := io.ReadFull(r, body)
	return body, err
}

func tooLarge(limit int64) *jsonrpc.Error {
	return jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "request body larger than %d bytes ([http] max_body_bytes)", limit)
}

// accepts reports whether the request's Accept header admits every one of
// the media types (wildcards count).
func accepts(r *http.Request, types ...string) bool {
	var listed []string
	for _, v := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(v, ",") {
			if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil {
				listed = append(listed, mt)
			}
		}
	}
	return !slices.ContainsFunc(types, func(t string) bool {
		major, _, _ := strings.Cut(t, "/")
		return !slices.ContainsFunc(listed, func(l string) bool { return l == t || l == "*/*" || l == major+"/*" })
	})
}

// writeRPCError answers with an HTTP error status and a JSON-RPC error
// response without an id as the body.
func writeRPCError(w http.ResponseWriter, status int, rpcErr *jsonrpc.Error) {
	writeJSON(w, status, jsonrpc.EncodeResponse(nil, nil, rpcErr))
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
