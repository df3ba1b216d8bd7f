package mcphttp

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/haproxytest"
)

// The per-client limits behind reverse proxies: X-Forwarded-For names the
// client only when the request comes from a trusted proxy.

// initializeVia sends an initialize to url from the loopback address from,
// with X-Forwarded-For values (none when empty), and returns the status.
func initializeVia(t *testing.T, url, from string, forwardedFor ...string) int {
	t.Helper()
	client := clientFrom(from)
	defer client.CloseIdleConnections()
	return initializeFrom(t, client, url, forwardedFor...)
}

// TestForwardedForIsBelievedOnlyFromTrustedProxies: a client that is not a
// trusted proxy cannot escape its per-client session cap by claiming other
// addresses in X-Forwarded-For; a trusted proxy's clients are counted
// apart, each by the rightmost address the trusted proxies did not add
// (so that what a client writes to the left does not count), IPv6 clients
// by their /64.
func TestForwardedForIsBelievedOnlyFromTrustedProxies(t *testing.T) {
	hh := newHTTPHarness(t, Options{MaxSessionsPerClient: 2, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("10.0.0.0/8")}})

	// A spoofer on 127.0.0.2, not a trusted proxy.
	for i := range 2 {
		if code := initializeVia(t, hh.url, "127.0.0.2", fmt.Sprintf("198.51.100.%d", i)); code != http.StatusOK {
			t.Fatalf("spoofer's session %d: %d", i+1, code)
		}
	}
	if code := initializeVia(t, hh.url, "127.0.0.2", "198.51.100.99"); code != http.StatusServiceUnavailable {
		t.Fatalf("a third session from an untrusted peer claiming yet another address: %d, want 503", code)
	}

	// Through the trusted proxy on 127.0.0.1: two clients, counted apart.
	for _, client := range []string{"192.0.2.1", "192.0.2.2"} {
		for i := range 2 {
			if code := initializeVia(t, hh.url, "127.0.0.1", client); code != http.StatusOK {
				t.Fatalf("%s's session %d through the proxy: %d", client, i+1, code)
			}
		}
	}
	if code := initializeVia(t, hh.url, "127.0.0.1", "192.0.2.1"); code != http.StatusServiceUnavailable {
		t.Fatalf("192.0.2.1's third session through the proxy: %d, want 503", code)
	}
	// What the client wrote to the left of the address the proxy added,
	// and the trusted proxies of a chain (10.0.0.0/8), do not count.
	for _, xff := range [][]string{{"203.0.113.7, 192.0.2.1"}, {"203.0.113.8", "192.0.2.1, 10.1.2.3"}} {
		if code := initializeVia(t, hh.url, "127.0.0.1", xff...); code != http.StatusServiceUnavailable {
			t.Fatalf("X-Forwarded-For %q: %d, want 503 as 192.0.2.1's third session", xff, code)
		}
	}
	// IPv6 clients by their /64.
	for i, client := range []string{"2001:db8:1:2::1", "2001:db8:1:2:ffff::9"} {
		if code := initializeVia(t, hh.url, "127.0.0.1", client); code != http.StatusOK {
			t.Fatalf("IPv6 session %d: %d", i+1, code)
		}
	}
	if code := initializeVia(t, hh.url, "127.0.0.1", "[2001:db8:1:2::3]:4711"); code != http.StatusServiceUnavailable {
		t.Fatalf("a third session from the same /64: %d, want 503", code)
	}
	if code := initializeVia(t, hh.url, "127.0.0.1", "2001:db8:1:3::1"); code != http.StatusOK {
		t.Fatalf("a session from the next /64: %d", code)
	}
}

// TestTrustedProxyConnectionsCountOnlyInAll: every client behind a trusted
// proxy shares its connections, so they are bounded by max_connections
// only, not by max_connections_per_client.
func TestTrustedProxyConnectionsCountOnlyInAll(t *testing.T) {
	hh, _, _ := serveOnLoopback(t, Options{MaxConnectionsPerClient: 1, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	addr := strings.TrimPrefix(hh.url, "http://")
	var conns []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	for i, c := range conns {
		_, _ = fmt.Fprintf(c, "GET /mcp HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", addr)
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 64)
		n, _ := c.Read(buf)
		if got := string(buf[:n]); !strings.HasPrefix(got, "HTTP/1.1 400 ") { // served: no session id
			t.Fatalf("connection %d from the trusted proxy: %q", i+1, got)
		}
	}
}

// TestPerClientLimitsBehindHAProxy puts a real haproxy (mode http, option
// forwardfor) in front of the server: with the proxy trusted, two clients
// behind it have a session cap each; without, they share one.
func TestPerClientLimitsBehindHAProxy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		trusted []netip.Prefix
		second  int // the status of the second client's first session
	}{
		{"proxy trusted", []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, http.StatusOK},
		{"proxy not trusted", nil, http.StatusServiceUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hh, _, _ := serveOnLoopback(t, Options{MaxSessionsPerClient: 1, TrustedProxies: tc.trusted, AllowedHosts: []string{"127.0.0.1"}})
			proxy := haproxytest.Start(t, haproxytest.Options{}, strings.TrimPrefix(hh.url, "http://")).URL
			if code := initializeVia(t, proxy, "127.0.0.2"); code != http.StatusOK {
				t.Fatalf("the first client's session: %d", code)
			}
			if code := initializeVia(t, proxy, "127.0.0.3"); code != tc.second {
				t.Fatalf("the second client's session: %d, want %d", code, tc.second)
			}
			if code := initializeVia(t, proxy, "127.0.0.2"); code != http.StatusServiceUnavailable {
				t.Fatalf("the first client's second session: %d, want 503", code)
			}
		})
	}
}
