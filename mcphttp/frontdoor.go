package mcphttp

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcphost/mcphost/internal/jsonrpc"
)

// The HTTP front door: what clients can make the server hold before a
// request reaches a session is bounded, server-wide and per client. See
// RATIONALE.md, "How does the HTTP front door bound what clients can
// hold?".

// refusalLogEvery is how often a kind of refusal is logged as a warning;
// the refusals in between are logged at debug level and counted in the
// next warning.
const refusalLogEvery = 10 * time.Second

// refusalLog logs a kind of refusal as a warning at most once per
// refusalLogEvery, so that a flood cannot flood the log too. The zero value
// is ready to use.
type refusalLog struct {
	mu     sync.Mutex
	last   time.Time
	missed int // refusals since the last warning
}

// log logs one refusal.
func (l *refusalLog) log(log *slog.Logger, msg string, args ...any) {
	l.mu.Lock()
	now := time.Now()
	if now.Sub(l.last) < refusalLogEvery {
		l.missed++
		l.mu.Unlock()
		log.Debug(msg, args...)
		return
	}
	missed := l.missed
	l.last, l.missed = now, 0
	l.mu.Unlock()
	if missed > 0 {
		args = append(args, "alsoRefusedSinceLastWarning", missed)
	}
	log.Warn(msg, args...)
}

// bodyBudget accounts the request body bytes being received, server-wide
// and by client (Handler.client). A body is reserved whole before it
// is read: by its Content-Length, or by MaxBodyBytes when the length is
// not known.
type bodyBudget struct {
	total, perClient int64

	mu       sync.Mutex
	held     int64
	byClient map[string]int64
}

func newBodyBudget(total, perClient int64) *bodyBudget {
	return &bodyBudget{total: total, perClient: perClient, byClient: map[string]int64{}}
}

// reserve takes n bytes for a body from client, or returns the error that
// refuses it, naming the setting it would exceed.
func (b *bodyBudget) reserve(client string, n int64) *jsonrpc.Error {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.byClient[client]+n > b.perClient:
		return jsonrpc.Errorf(jsonrpc.CodeInternalError, "server busy: the request bodies being received from this client would exceed [http] max_body_bytes_in_flight_per_client (%d bytes); retry later", b.perClient)
	case b.held+n > b.total:
		return jsonrpc.Errorf(jsonrpc.CodeInternalError, "server busy: the request bodies being received would exceed [http] max_body_bytes_in_flight (%d bytes); retry later", b.total)
	}
	b.held += n
	b.byClient[client] += n
	return nil
}

// release gives back what reserve took.
func (b *bodyBudget) release(client string, n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held -= n
	if b.byClient[client] -= n; b.byClient[client] <= 0 {
		delete(b.byClient, client)
	}
}

// connLimiter is a listener that refuses connections beyond max open at
// once, or beyond perClient from one client address other than a trusted
// proxy, whose clients share its connections. A refused connection is
// answered 503, naming the setting, and closed at once, before anything of
// it is read.
type connLimiter struct {
	net.Listener
	max, perClient int
	proxies        []netip.Prefix
	log            *slog.Logger
	refusals       refusalLog

	mu       sync.Mutex
	open     int
	byClient map[string]int
}

func newConnLimiter(ln net.Listener, opts Options, log *slog.Logger) *connLimiter {
	return &connLimiter{Listener: ln, max: opts.MaxConnections, perClient: opts.MaxConnectionsPerClient, proxies: opts.TrustedProxies, log: log, byClient: map[string]int{}}
}

// Accept returns the next connection within the limits.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		peer := c.RemoteAddr().String()
		client := addrPrefix + peer
		if ip, ok := peerIP(peer); ok {
			client = addrKey(ip)
			if trusted(l.proxies, ip) {
				client = "" // a trusted proxy: counted in all only
			}
		}
		if rpcErr := l.admit(client); rpcErr != nil {
			l.refusals.log(l.log, "refusing an HTTP connection", "client", client, "err", rpcErr.Message)
			refuseConn(c, rpcErr)
			continue
		}
		return &limitedConn{Conn: c, done: func() { l.release(client) }}, nil
	}
}

// admit counts a new connection from client, or returns the error that
// refuses it.
func (l *connLimiter) admit(client string) *jsonrpc.Error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case client != "" && l.byClient[client] >= l.perClient:
		return jsonrpc.Errorf(jsonrpc.CodeInternalError, "too many connections from this client: [http] max_connections_per_client (%d) are open; close some, or retry later", l.perClient)
	case l.open >= l.max:
		return jsonrpc.Errorf(jsonrpc.CodeInternalError, "server busy: [http] max_connections (%d) are open; retry later", l.max)
	}
	l.open++
	l.byClient[client]++
	return nil
}

func (l *connLimiter) release(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.byClient[client]--; l.byClient[client] <= 0 {
		delete(l.byClient, client)
	}
}

// refuseWriteTimeout bounds the write of a refusal to a new connection,
// whose send buffer is empty: it never has to wait in practice.
const refuseWriteTimeout = 100 * time.Millisecond

// refuseConn answers a connection it will not serve with 503 and closes it.
func refuseConn(c net.Conn, rpcErr *jsonrpc.Error) {
	body := jsonrpc.EncodeResponse(nil, nil, rpcErr)
	_ = c.SetWriteDeadline(time.Now().Add(refuseWriteTimeout))
	_, _ = fmt.Fprintf(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	_ = c.Close()
}

// limitedConn is a connection a connLimiter counts until it is closed.
type limitedConn struct {
	net.Conn
	done func()
	once sync.Once
}

func (c *limitedConn) Close() error {
	c.once.Do(c.done)
	return c.Conn.Close()
}

// CloseWrite shuts the writing side down, when the connection can: the
// HTTP server does so before closing, so that its last response is not
// lost to a reset.
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// peerIP is the IP address of a host:port, IPv4-mapped IPv6 addresses as
// IPv4.
func peerIP(hostPort string) (netip.Addr, bool) {
	ap, err := netip.ParseAddrPort(hostPort)
	if err != nil {
		return netip.Addr{}, false
	}
	return ap.Addr().Unmap(), true
}

// addrPrefix starts the per-client limits' key of a client counted by its
// address, so that the key says its kind wherever it is logged.
const addrPrefix = "addr:"

// addrKey is the key of the per-client limits for a client's IP address:
// addrPrefix and the address for IPv4, its /64 for IPv6, as one client (a
// home, a host) is commonly given a whole /64.
func addrKey(ip netip.Addr) string {
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return addrPrefix + p.String()
	}
	return addrPrefix + ip.String()
}

// trusted reports whether ip is one of the trusted proxies.
func trusted(proxies []netip.Prefix, ip netip.Addr) bool {
	return slices.ContainsFunc(proxies, func(p netip.Prefix) bool { return p.Contains(ip) })
}

// subjectPrefix starts the per-client limits' key of a client counted by
// its authenticated subject (Options.SubjectsAreUsers): no subject's
// key is an address's.
const subjectPrefix = "sub:"

// client is the key request r counts against under the per-client limits
// on sessions and request bodies: its subject's when subjects are users
// and it has one, else its address's (clientAddress). It is known before
// the body is read, as the subject comes from the request's headers.
func (h *Handler) client(r *http.Request) string {
	if h.opts.SubjectsAreUsers {
		if subject := h.srv.Subject(r.Context()); subject != "" {
			return subjectPrefix + subject
		}
	}
	return h.clientAddress(r)
}

// clientAddress is the key (addrKey) of the address a request comes
// from, as the per-client limits count it (clientIP).
func (h *Handler) clientAddress(r *http.Request) string {
	client, _, ok := h.clientIP(r)
	if !ok {
		return addrPrefix + r.RemoteAddr
	}
	return addrKey(client)
}

// clientIP is the address a request comes from, and whether that is the
// peer's (else a trusted proxy's X-Forwarded-For named it): the peer's
// address, unless the peer is a trusted proxy: then it is the rightmost
// address of X-Forwarded-For that is not a trusted proxy, as each proxy
// appends the address it got the request from and only what trusted
// proxies appended can be believed. An entry that is not an address ends
// the walk: the client is then the trusted proxy that appended it. Not ok
// when the peer's address is not an IP address.
func (h *Handler) clientIP(r *http.Request) (client netip.Addr, isPeer, ok bool) {
	peer, ok := peerIP(r.RemoteAddr)
	if !ok {
		return netip.Addr{}, false, false
	}
	client = peer
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0 && trusted(h.opts.TrustedProxies, client); i-- {
		hop, ok := parseHop(hops[i])
		if !ok {
			break
		}
		client = hop
	}
	return client, client == peer, true
}

// parseHop reads an X-Forwarded-For entry: an IP address, with or without a
// port (IPv6 in brackets then).
func parseHop(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if ip, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		return ip.Unmap(), true
	}
	return peerIP(s)
}
