package sandbox

import (
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// forwardProxy is a plain-HTTP forward proxy that counts what it forwards.
type forwardProxy struct {
	*httpServer
	forwarded atomic.Int32
}

func newForwardProxy(t *testing.T) *forwardProxy {
	p := &forwardProxy{}
	p.httpServer = newHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.forwarded.Add(1)
		out, err := http.NewRequestWithContext(r.Context(), r.Method, r.URL.String(), r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		resp, err := http.DefaultTransport.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	return p
}

// TestEgressGoesThroughTheOperatorsProxyWithinTheGrants: with a proxy,
// granted requests go through it (the proxy itself may be on a private
// address), refused ones never reach it, and a granted name that resolves
// to a private address is still refused.
func TestEgressGoesThroughTheOperatorsProxyWithinTheGrants(t *testing.T) {
	t.Parallel()
	target := newHTTPServer(t, pong())
	other := newHTTPServer(t, pong()) // granted by name only
	proxy := newForwardProxy(t)
	proxyURL, _ := url.Parse(proxy.URL)
	e, err := NewEngine(EngineOptions{Egress: Egress{Proxy: func(u *url.URL) (*url.URL, error) {
		if u.Hostname() == "no-proxy.example" {
			return nil, nil
		}
		return proxyURL, nil
	}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	p, err := e.Load(t.Context(), "fetcher", testWasm(t, "guest"), grantHosts("127.0.0.1:"+target.port, "localhost:"+other.port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(t.Context()) })

	if got, err := httpGet(t, p, "http://127.0.0.1:"+target.port+"/"); err != nil || !strings.Contains(got, "pong") {
		t.Fatalf("a granted request through the proxy: %q, %v", got, err)
	}
	if proxy.forwarded.Load() != 1 || target.hits.Load() != 1 {
		t.Errorf("proxy forwarded %d, target hit %d; want 1 and 1", proxy.forwarded.Load(), target.hits.Load())
	}
	_, err = httpGet(t, p, "http://example.com/")
	wantRefused(t, "a host not granted", err, "host example.com is not in the allowed_hosts of plugin fetcher")
	_, err = httpGet(t, p, "http://localhost:"+other.port+"/")
	wantRefused(t, "a granted name resolving to loopback", err, "is a loopback address: plugin fetcher may not connect to it")
	if n := proxy.forwarded.Load(); n != 1 {
		t.Errorf("the proxy saw %d requests; refused ones must not reach it", n)
	}
}

// TestEgressTrustsTheOperatorsCABundle: an HTTPS server whose certificate
// an operator's CA signed is reached only with that CA given.
func TestEgressTrustsTheOperatorsCABundle(t *testing.T) {
	t.Parallel()
	ts := httptest.NewTLSServer(pong())
	t.Cleanup(ts.Close)
	_, port, _ := net.SplitHostPort(ts.Listener.Addr().String())
	pool := x509.NewCertPool()
	pool.AddCert(ts.Certificate())
	for _, c := range []struct {
		roots *x509.CertPool
		ok    bool
	}{{nil, false}, {pool, true}} {
		e, err := NewEngine(EngineOptions{Egress: Egress{RootCAs: c.roots}})
		if err != nil {
			t.Fatal(err)
		}
		p, err := e.Load(t.Context(), "fetcher", testWasm(t, "guest"), grantHosts("https://127.0.0.1:"+port))
		if err != nil {
			t.Fatal(err)
		}
		got, err := httpGet(t, p, "https://127.0.0.1:"+port+"/")
		if c.ok && (err != nil || !strings.Contains(got, "pong")) || !c.ok && err == nil {
			t.Errorf("CA given %v: %q, %v", c.roots != nil, got, err)
		}
		_ = p.Close(t.Context())
		_ = e.Close()
	}
}
