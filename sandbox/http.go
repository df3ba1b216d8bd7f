package sandbox

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gobwas/glob"
)

// How plugin HTTP requests are guarded.
//
// The sandbox serves the kernel's http_request itself (see kernel.go): it
// sends the request with the plugin's client, under the context of the
// plugin call. That client's transport and redirect policy make sure that
// every request of the plugin, and every redirect it is sent to:
//
//   - uses http or https, to a host, port and scheme that one of the
//     plugin's AllowedHosts rules grants (host glob, port, optional scheme);
//   - goes through the plugin's own *http.Transport (no proxy, no
//     connection shared with another plugin), whose dialer checks the
//     address it is about to connect to, after name resolution: loopback,
//     private, link-local (cloud metadata), CGNAT and other special
//     addresses are refused unless the plugin has AllowPrivateNetwork or
//     lists that address literally.
//
// A request they refuse fails with a *deniedError, which names the grant
// that would allow it; describeFailure turns any failure into the message
// the plugin, or its caller, is told.

// netPolicy is what one plugin may reach over HTTP, and the client its
// requests are sent with.
type netPolicy struct {
	plugin       string
	rules        []hostRule
	allowPrivate bool
	egress       Egress
	proxies      sync.Map // "host:port" of the proxies requests went to: dialed unchecked
	transport    *http.Transport
	client       *http.Client
}

// Egress is how plugins' granted HTTP requests leave the machine: the
// operator's settings, the same for every plugin of an Engine.
type Egress struct {
	// Proxy returns the proxy of a request's URL, nil for none, as
	// http.Transport.Proxy (e.g. from HTTPS_PROXY and NO_PROXY). The
	// grants still apply to the URL and the addresses its host resolves
	// to; the proxy itself, which the operator chose, may be anywhere.
	// Nil: no proxy.
	Proxy func(*url.URL) (*url.URL, error)
	// RootCAs are the certificate authorities HTTPS servers are checked
	// against; nil for the system's.
	RootCAs *x509.CertPool
}

// hostRule is one parsed AllowedHosts entry: [scheme "://"] host [":" port].
type hostRule struct {
	text   string
	scheme string     // "http", "https", or "" for either
	host   string     // lower case; IPv6 without brackets
	glob   glob.Glob  // host pattern, when host has a '*'
	ip     netip.Addr // valid when host is an IP address
	port   string     // "" for the scheme's default port, "*" for any
}

// parseHostRule parses an AllowedHosts entry.
func parseHostRule(s string) (hostRule, error) {
	r := hostRule{text: s}
	rest := s
	if scheme, after, ok := strings.Cut(rest, "://"); ok {
		scheme = strings.ToLower(scheme)
		if scheme != "http" && scheme != "https" {
			return r, fmt.Errorf("allowed host %q: scheme must be http or https", s)
		}
		r.scheme, rest = scheme, after
	}
	if strings.ContainsAny(rest, "/?#@ ") {
		return r, fmt.Errorf("allowed host %q: write a host, with an optional scheme and port, e.g. \"https://api.example.com:8443\"", s)
	}
	host := rest
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return r, fmt.Errorf("allowed host %q: unclosed '['", s)
		}
		host = rest[1:end]
		after := rest[end+1:]
		if after != "" {
			if after[0] != ':' {
				return r, fmt.Errorf("allowed host %q: text after the IPv6 address", s)
			}
			r.port = after[1:]
			if r.port == "" {
				return r, fmt.Errorf("allowed host %q: empty port", s)
			}
		}
		ip, err := netip.ParseAddr(host)
		if err != nil || !ip.Is6() {
			return r, fmt.Errorf("allowed host %q: bad IPv6 address", s)
		}
	} else if strings.Count(rest, ":") > 1 {
		return r, fmt.Errorf("allowed host %q: put IPv6 addresses in brackets, e.g. \"[::1]:8080\"", s)
	} else if h, port, ok := strings.Cut(rest, ":"); ok {
		host, r.port = h, port
		if port == "" {
			return r, fmt.Errorf("allowed host %q: empty port", s)
		}
	}
	if r.port != "" && r.port != "*" {
		n, err := parsePort(r.port)
		if err != nil || n == 0 {
			return r, fmt.Errorf("allowed host %q: bad port %q (want 1..65535 or *)", s, r.port)
		}
	}
	if host == "" {
		return r, fmt.Errorf("allowed host %q: no host", s)
	}
	r.host = strings.ToLower(host)
	if ip, err := netip.ParseAddr(r.host); err == nil {
		r.ip = ip.Unmap()
		r.host = r.ip.String()
		return r, nil
	}
	if strings.Contains(r.host, "*") {
		g, err := glob.Compile(r.host)
		if err != nil {
			return r, fmt.Errorf("allowed host %q: %w", s, err)
		}
		r.glob = g
	}
	return r, nil
}

// parsePort parses a decimal port number.
func parsePort(s string) (int, error) {
	n := 0
	if s == "" || len(s) > 5 {
		return 0, errors.New("bad port")
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, errors.New("bad port")
		}
		n = n*10 + int(c-'0')
	}
	if n > 65535 {
		return 0, errors.New("bad port")
	}
	return n, nil
}

// extismPattern is the rule as Extism's own check sees it: the host alone.
// The guard checks the rest.
func (r hostRule) extismPattern() string { return r.host }

// defaultPort returns the port a URL of scheme uses when it names none.
func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// matches reports whether the rule grants scheme://host:port; host is lower
// case, without brackets.
func (r hostRule) matches(scheme, host, port string) bool {
	if r.scheme != "" && r.scheme != scheme {
		return false
	}
	switch {
	case r.port == "*":
	case r.port == "" && port != defaultPort(scheme):
		return false
	case r.port != "" && r.port != port:
		return false
	}
	if r.ip.IsValid() {
		ip, err := netip.ParseAddr(host)
		return err == nil && ip.Unmap() == r.ip
	}
	if r.glob != nil {
		return r.glob.Match(host)
	}
	return r.host == host
}

// newNetPolicy parses a plugin's grants into its network policy, whose
// requests leave as egress says.
func newNetPolicy(plugin string, g Grants, egress Egress) (*netPolicy, error) {
	pol := &netPolicy{plugin: plugin, allowPrivate: g.AllowPrivateNetwork, egress: egress}
	for _, h := range g.AllowedHosts {
		r, err := parseHostRule(h)
		if err != nil {
			return nil, err
		}
		pol.rules = append(pol.rules, r)
	}
	checked := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: pol.control}
	unchecked := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	pol.transport = &http.Transport{
		Proxy: pol.proxy,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if _, isProxy := pol.proxies.Load(addr); isProxy {
				return unchecked.DialContext(ctx, network, addr)
			}
			return checked.DialContext(ctx, network, addr)
		},
		TLSClientConfig:        &tls.Config{RootCAs: egress.RootCAs},
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           16,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 1 << 20,
	}
	pol.client = &http.Client{Transport: pol, CheckRedirect: pol.checkRedirect}
	return pol, nil
}

// extismHosts returns the host patterns for Extism's manifest.
func (pol *netPolicy) extismHosts() []string {
	out := make([]string, 0, len(pol.rules))
	for _, r := range pol.rules {
		out = append(out, r.extismPattern())
	}
	return out
}

// deniedError is the network policy's refusal of a request: what the
// plugin's grants do not allow, and the grant that would.
type deniedError struct{ reason string }

func (e *deniedError) Error() string { return e.reason }

// denied returns the refusal of a request that no allowed_hosts entry
// grants, naming the entry to add: what is refused (e.g. "host x.org")
// and the entry for scheme://host:port, with its scheme when withScheme.
func (pol *netPolicy) denied(what, scheme, host, port string, withScheme bool) *deniedError {
	entry := host
	if strings.Contains(host, ":") {
		entry = "[" + host + "]"
	}
	if port != defaultPort(scheme) {
		entry += ":" + port
	}
	if withScheme {
		entry = scheme + "://" + entry
	}
	return &deniedError{fmt.Sprintf("%s is not in the allowed_hosts of plugin %s (add %q to allowed_hosts in [plugins.%s])",
		what, pol.plugin, entry, pol.plugin)}
}

// checkURL returns why the plugin may not request u (a *deniedError), or
// nil.
func (pol *netPolicy) checkURL(u *url.URL) error {
	scheme, host, port := target(u)
	if scheme != "http" && scheme != "https" {
		return &deniedError{fmt.Sprintf("scheme %q is not allowed (only http and https)", u.Scheme)}
	}
	hostOK, portOK := false, false
	for _, r := range pol.rules {
		if r.matches(scheme, host, port) {
			return nil
		}
		if r.matches(r.schemeOr(scheme), host, r.portOr(scheme, port)) {
			hostOK = true
			portOK = portOK || r.matches(r.schemeOr(scheme), host, port) || r.port == port
		}
	}
	switch {
	case !hostOK:
		return pol.denied("host "+host, scheme, host, port, false)
	case !portOK:
		return pol.denied("port "+port+" of "+host, scheme, host, port, false)
	}
	return pol.denied(scheme+" to "+net.JoinHostPort(host, port), scheme, host, port, true)
}

// rule returns the allowed_hosts entry, as granted, that grants u, "" when
// none does.
func (pol *netPolicy) rule(u *url.URL) string {
	scheme, host, port := target(u)
	for _, r := range pol.rules {
		if r.matches(scheme, host, port) {
			return r.text
		}
	}
	return ""
}

// target returns the scheme and host of u in lower case, and its port, the
// scheme's default when it names none: what a rule matches.
func target(u *url.URL) (scheme, host, port string) {
	scheme = strings.ToLower(u.Scheme)
	port = u.Port()
	if port == "" {
		port = defaultPort(scheme)
	}
	return scheme, strings.ToLower(u.Hostname()), port
}

// schemeOr returns the rule's scheme, or scheme when the rule has none.
func (r hostRule) schemeOr(scheme string) string {
	if r.scheme != "" {
		return r.scheme
	}
	return scheme
}

// portOr returns a port the rule grants for scheme, port when it grants any.
func (r hostRule) portOr(scheme, port string) string {
	switch r.port {
	case "*":
		return port
	case "":
		return defaultPort(r.schemeOr(scheme))
	}
	return r.port
}

// proxy is the transport's Proxy: the operator's proxy for a request,
// whose address it records, so that the dialer connects to it unchecked.
func (pol *netPolicy) proxy(req *http.Request) (*url.URL, error) {
	if pol.egress.Proxy == nil {
		return nil, nil
	}
	u, err := pol.egress.Proxy(req.URL)
	if u != nil && err == nil {
		pol.proxies.Store(canonicalAddr(u), struct{}{})
	}
	return u, err
}

// canonicalAddr is u's host:port, with the scheme's default port.
func canonicalAddr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = defaultPort(strings.ToLower(u.Scheme))
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// checkResolved applies the dialer's address check to the addresses the
// host of a request that goes through a proxy resolves to: the proxy
// connects to them, so a granted name must not lead to a private address
// that way either.
func (pol *netPolicy) checkResolved(ctx context.Context, u *url.URL) error {
	port := u.Port()
	if port == "" {
		port = defaultPort(strings.ToLower(u.Scheme))
	}
	host := u.Hostname()
	ips := []netip.Addr{}
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = append(ips, ip)
	} else if ips, err = net.DefaultResolver.LookupNetIP(ctx, "ip", host); err != nil {
		return err
	}
	for _, ip := range ips {
		if err := pol.checkAddr(ip, port); err != nil {
			return err
		}
	}
	return nil
}

// control is the dialer's check of the address it connects to, after name
// resolution, so that a granted name cannot lead to a private address. It
// refuses one with a *deniedError.
func (pol *netPolicy) control(_, address string, _ syscall.RawConn) error {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("sandbox: bad dial address %q", address)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("sandbox: dial address %q is not an IP address", address)
	}
	return pol.checkAddr(ip, port)
}

// checkAddr returns why the plugin may not connect to ip:port (a
// *deniedError), or nil.
func (pol *netPolicy) checkAddr(ip netip.Addr, port string) error {
	ip = ip.WithZone("").Unmap()
	kind := specialAddress(ip)
	if kind == "" || pol.allowPrivate || pol.listed(ip, port) {
		return nil
	}
	return &deniedError{fmt.Sprintf("address %s is %s: plugin %s may not connect to it (set allow_private_network = true in [plugins.%s], or add %q to its allowed_hosts)",
		ip, kind, pol.plugin, pol.plugin, net.JoinHostPort(ip.String(), port))}
}

// listed reports whether an allowed_hosts rule names ip (and port)
// literally.
func (pol *netPolicy) listed(ip netip.Addr, port string) bool {
	for _, r := range pol.rules {
		if r.ip == ip && (r.port == "*" || r.port == port || r.port == "" && (port == "80" || port == "443")) {
			return true
		}
	}
	return false
}

// specialRanges are the addresses a plugin reaches only when granted: what
// is not the public internet.
var specialRanges = []struct {
	prefix netip.Prefix
	kind   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "a \"this network\" address"},
	{netip.MustParsePrefix("10.0.0.0/8"), "a private address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a shared (CGNAT) address"},
	{netip.MustParsePrefix("127.0.0.0/8"), "a loopback address"},
	{netip.MustParsePrefix("169.254.0.0/16"), "a link-local address (cloud metadata lives here)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "a private address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol address"},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address"},
	{netip.MustParsePrefix("192.88.99.0/24"), "a 6to4 relay address"},
	{netip.MustParsePrefix("192.168.0.0/16"), "a private address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address"},
	{netip.MustParsePrefix("224.0.0.0/4"), "a multicast address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address"},
	{netip.MustParsePrefix("::/128"), "the unspecified address"},
	{netip.MustParsePrefix("::1/128"), "a loopback address"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a local NAT64 address"},
	{netip.MustParsePrefix("100::/64"), "a discard address"},
	{netip.MustParsePrefix("2001::/32"), "a Teredo address"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address"},
	{netip.MustParsePrefix("fc00::/7"), "a unique local (private) address (cloud metadata lives here)"},
	{netip.MustParsePrefix("fe80::/10"), "a link-local address"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address"},
	{netip.MustParsePrefix("ff00::/8"), "a multicast address"},
}

// Prefixes of IPv6 addresses that embed an IPv4 address: NAT64 (RFC 6052,
// the last 32 bits) and 6to4 (RFC 3056, bits 16 to 48).
var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour   = netip.MustParsePrefix("2002::/16")
)

// specialAddress describes ip when it is not a public internet address,
// and returns "" when it is one. An IPv6 address embedding an IPv4 address
// (NAT64, 6to4) is judged by the IPv4 address.
func specialAddress(ip netip.Addr) string {
	ip = ip.Unmap()
	if ip.Is6() {
		b := ip.As16()
		switch {
		case nat64Prefix.Contains(ip):
			return specialAddress(netip.AddrFrom4([4]byte(b[12:16])))
		case sixToFour.Contains(ip):
			return specialAddress(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	for _, r := range specialRanges {
		if r.prefix.Contains(ip) {
			return r.kind
		}
	}
	if ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return "the broadcast address"
	}
	return ""
}

// RoundTrip implements http.RoundTripper for the plugin's client: it sends
// req on the plugin's transport if the policy grants its URL.
func (pol *netPolicy) RoundTrip(req *http.Request) (*http.Response, error) {
	err := pol.checkURL(req.URL)
	if err == nil && pol.egress.Proxy != nil {
		var via *url.URL
		if via, err = pol.egress.Proxy(req.URL); err == nil && via != nil {
			err = pol.checkResolved(req.Context(), req.URL)
		}
	}
	if err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	return pol.transport.RoundTrip(req)
}

// checkRedirect is the redirect policy of the plugin's client: the policy
// must grant the redirect's URL, and http.Client's default limit of 10
// redirects applies.
func (pol *netPolicy) checkRedirect(req *http.Request, via []*http.Request) error {
	if err := pol.checkURL(req.URL); err != nil {
		return &deniedError{"redirect to " + req.URL.Redacted() + ": " + err.Error()}
	}
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	return nil
}

// requestError is why an http_request call failed: the message the plugin,
// or under Extism's contract its caller, is told, and whether the plugin's
// grants refused the request (rather than the network or the server
// failing it).
type requestError struct {
	msg    string
	denied bool
}

func (e *requestError) Error() string { return e.msg }

// describeFailure returns the requestError of a request to rawURL that
// failed with err, from the plugin's client or reading the response: the
// policy's refusal, or the kind of failure (timeout, TLS, connection,
// response size) and its cause.
func describeFailure(rawURL string, err error) *requestError {
	err = urlCause(err) // the message names the URL the plugin asked for
	prefix := "HTTP request to '" + rawURL + "'"
	var (
		denied   *deniedError
		tooLarge *http.MaxBytesError
		timeout  net.Error
		op       *net.OpError
	)
	switch {
	case errors.As(err, &denied):
		return &requestError{msg: prefix + " is not allowed: " + denied.reason, denied: true}
	case errors.As(err, &tooLarge):
		return &requestError{msg: fmt.Sprintf("%s failed: the response body exceeds the limit of %d bytes (%d MiB) on HTTP responses",
			prefix, tooLarge.Limit, tooLarge.Limit>>20)}
	case errors.As(err, &timeout) && timeout.Timeout():
		return &requestError{msg: prefix + " timed out: " + err.Error()}
	case isTLSError(err):
		return &requestError{msg: prefix + " failed: TLS error: " + err.Error()}
	case errors.As(err, &op) && op.Op == "dial":
		return &requestError{msg: prefix + " failed: could not connect: " + err.Error()}
	}
	return &requestError{msg: prefix + " failed: " + err.Error()}
}

// urlCause returns the cause of a *url.Error, without the operation and
// URL it adds, or err itself.
func urlCause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// isTLSError reports whether err comes from the TLS handshake: a
// certificate that does not verify, a server that does not speak TLS, or
// an alert from the server.
func isTLSError(err error) bool {
	var (
		verify *tls.CertificateVerificationError
		record tls.RecordHeaderError
		op     *net.OpError
	)
	return errors.As(err, &verify) || errors.As(err, &record) || errors.As(err, &op) && op.Op == "remote error"
}

// HostGranted reports whether the AllowedHosts entries allowed grant need,
// a host a plugin asks for in its manifest ("api.example.com",
// "api.example.com:8443", "https://api.example.com"): whether a request to
// it, over its scheme (or either) and port (or the default), would pass
// the host check. The address check at connection time still applies.
func HostGranted(allowed []string, need string) bool {
	want, err := parseHostRule(need)
	if err != nil || want.glob != nil {
		return false
	}
	host := want.host
	for _, s := range allowed {
		r, err := parseHostRule(s)
		if err != nil {
			continue
		}
		for _, scheme := range []string{"https", "http"} {
			if want.scheme != "" && want.scheme != scheme {
				continue
			}
			port := want.port
			if port == "" {
				port = defaultPort(scheme)
			}
			if r.matches(scheme, host, port) {
				return true
			}
		}
	}
	return false
}
