package sandbox

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
)

// httpServer is a test server that counts its hits.
type httpServer struct {
	*httptest.Server
	hits atomic.Int32
	port string
}

func newHTTPServer(t *testing.T, h http.Handler) *httpServer {
	s := &httpServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	_, s.port, _ = net.SplitHostPort(s.Listener.Addr().String())
	return s
}

func pong() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "pong") })
}

func httpGet(t *testing.T, p *Plugin, url string) (string, error) {
	t.Helper()
	out, err := p.Call(t.Context(), "http", []byte(`{"url":"`+url+`"}`))
	return string(out), err
}

// wantRefused checks that the plugin's grants refused a request and that
// stopped the call: err is KindDenied, with a message that contains want.
func wantRefused(t *testing.T, what string, err error, want string) {
	t.Helper()
	wantFailed(t, what, err, KindDenied, want)
}

// wantFailed checks that err is of kind and its message contains want.
func wantFailed(t *testing.T, what string, err error, kind ErrorKind, want string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: request went through; want it to fail with %q", what, want)
		return
	}
	if ce := wantKind(t, err, kind); !strings.Contains(ce.Message, want) {
		t.Errorf("%s: got %q, want it to contain %q", what, ce.Message, want)
	}
}

func grantHosts(hosts ...string) Options {
	return Options{Grants: Grants{AllowedHosts: hosts}}
}

func TestHTTPHostsPortsAndSchemes(t *testing.T) {
	t.Parallel()
	server := newHTTPServer(t, pong())
	ip := "127.0.0.1:" + server.port

	for _, hosts := range [][]string{nil, {"example.com"}, {"127.0.0.2:" + server.port}} {
		_, err := httpGet(t, load(t, "guest", grantHosts(hosts...)), server.URL)
		wantRefused(t, strings.Join(hosts, ","), err, "not allowed")
	}
	// Ports: none means the scheme's default port.
	_, err := httpGet(t, load(t, "guest", grantHosts("127.0.0.1")), server.URL)
	wantRefused(t, "no port granted", err, "port "+server.port+" of 127.0.0.1 is not in the allowed_hosts of plugin guest")
	_, err = httpGet(t, load(t, "guest", grantHosts("127.0.0.1:1")), server.URL)
	wantRefused(t, "other port granted", err, "port "+server.port+" of 127.0.0.1 is not in the allowed_hosts")
	// Schemes.
	_, err = httpGet(t, load(t, "guest", grantHosts("https://"+ip)), server.URL)
	wantRefused(t, "https only", err, "http to 127.0.0.1:"+server.port+" is not in the allowed_hosts")
	_, err = httpGet(t, load(t, "guest", grantHosts("*:*")), "ftp://"+ip+"/")
	wantRefused(t, "ftp", err, `scheme "ftp" is not allowed (only http and https)`)
	if n := server.hits.Load(); n != 0 {
		t.Fatalf("%d denied requests reached the server", n)
	}

	for _, hosts := range [][]string{{ip}, {"http://" + ip}, {"127.0.0.1:*"}} {
		if got, err := httpGet(t, load(t, "guest", grantHosts(hosts...)), server.URL); got != "pong" || err != nil {
			t.Errorf("granted %q: got %q, %v", hosts, got, err)
		}
	}
}

func TestHTTPStatusCode(t *testing.T) {
	t.Parallel()
	server := newHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusTeapot)
	}))
	p := load(t, "guest", grantHosts("127.0.0.1:"+server.port))
	if got := call(t, p, "httpstatus", `{"url":"`+server.URL+`"}`); got != "418" {
		t.Errorf("http_status_code returned %s, want 418", got)
	}
}

func TestHTTPPrivateAddressesNeedAGrant(t *testing.T) {
	t.Parallel()
	server := newHTTPServer(t, pong())
	byName := "http://localhost:" + server.port

	// A granted name that resolves to loopback is refused when connecting.
	_, err := httpGet(t, load(t, "guest", grantHosts("localhost:"+server.port)), byName)
	wantRefused(t, "localhost by name", err, "is a loopback address: plugin guest may not connect to it (set allow_private_network = true in [plugins.guest], or add ")
	// So is any address through a wildcard.
	_, err = httpGet(t, load(t, "guest", grantHosts("*:*")), server.URL)
	wantRefused(t, "wildcard", err, "address 127.0.0.1 is a loopback address")
	_, err = httpGet(t, load(t, "guest", grantHosts("*:*")), "http://169.254.169.254/latest/meta-data/")
	wantRefused(t, "cloud metadata", err, "address 169.254.169.254 is a link-local address")
	if n := server.hits.Load(); n != 0 {
		t.Fatalf("%d refused requests reached the server", n)
	}

	// allow_private_network, or the address itself listed, grants it.
	opts := grantHosts("localhost:" + server.port)
	opts.Grants.AllowPrivateNetwork = true
	if got, err := httpGet(t, load(t, "guest", opts), byName); got != "pong" || err != nil {
		t.Errorf("allow_private_network: got %q, %v", got, err)
	}
	// localhost may resolve to ::1 first; list both.
	if got, err := httpGet(t, load(t, "guest", grantHosts("localhost:"+server.port, "127.0.0.1:"+server.port, "[::1]:"+server.port)), byName); got != "pong" || err != nil {
		t.Errorf("address listed: got %q, %v", got, err)
	}
}

func TestHTTPRedirectsAreChecked(t *testing.T) {
	t.Parallel()
	target := newHTTPServer(t, pong())
	redirectTo := func(u string) *httpServer {
		return newHTTPServer(t, http.RedirectHandler(u, http.StatusFound))
	}
	byName := "http://localhost:" + target.port
	toName := redirectTo(byName)
	toOtherLoopback := redirectTo("http://127.0.0.2:" + target.port)
	toMetadata := redirectTo("http://169.254.169.254/latest/meta-data/")

	// The plugin may reach the redirecting server (listed by address), not
	// where it redirects.
	_, err := httpGet(t, load(t, "guest", grantHosts("127.0.0.1:"+toName.port)), toName.URL)
	wantRefused(t, "redirect to a host not granted", err, "redirect to "+byName+": host localhost is not in the allowed_hosts")
	_, err = httpGet(t, load(t, "guest", grantHosts("127.0.0.1:"+toMetadata.port)), toMetadata.URL)
	wantRefused(t, "redirect to metadata", err, "redirect to http://169.254.169.254/latest/meta-data/: host 169.254.169.254 is not in the allowed_hosts")
	// A granted name or wildcard is still checked on the address.
	_, err = httpGet(t, load(t, "guest", grantHosts("127.0.0.1:"+toName.port, "localhost:"+target.port)), toName.URL)
	wantRefused(t, "redirect to a granted name of loopback", err, "is a loopback address")
	_, err = httpGet(t, load(t, "guest", grantHosts("127.0.0.1:"+toOtherLoopback.port, "*:*")), toOtherLoopback.URL)
	wantRefused(t, "redirect through a wildcard", err, "address 127.0.0.2 is a loopback address")
	if n := target.hits.Load(); n != 0 {
		t.Fatalf("%d refused redirects reached the target", n)
	}

	opts := grantHosts("127.0.0.1:"+toName.port, "localhost:"+target.port)
	opts.Grants.AllowPrivateNetwork = true
	if got, err := httpGet(t, load(t, "guest", opts), toName.URL); got != "pong" || err != nil {
		t.Errorf("redirect to an allowed host: got %q, %v", got, err)
	}
}

func TestHTTPSizeAndTimeCaps(t *testing.T) {
	t.Parallel()
	big := newHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		chunk := strings.Repeat("x", 1<<20)
		for range maxHTTPResponseBytes>>20 + 1 {
			io.WriteString(w, chunk)
		}
	}))
	_, err := httpGet(t, load(t, "guest", grantHosts("127.0.0.1:"+big.port)), big.URL)
	wantFailed(t, "response over the cap", err, KindTrap, "failed: the response body exceeds the limit of 16777216 bytes (16 MiB) on HTTP responses")

	release := make(chan struct{})
	slow := newHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer close(release)
	opts := grantHosts("127.0.0.1:" + slow.port)
	opts.Limits.Timeout = 300 * time.Millisecond
	start := time.Now()
	_, err = httpGet(t, load(t, "guest", opts), slow.URL)
	wantKind(t, err, KindTimeout)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a hanging server held the call for %v", d)
	}
}

func TestHostRules(t *testing.T) {
	for _, bad := range []string{"", "ftp://x.com", "x.com/path", "x.com:0", "x.com:99999", "x.com:", "::1", "[::1", "[x]:80", "user@x.com", "[a-"} {
		if _, err := parseHostRule(bad); err == nil {
			t.Errorf("parseHostRule(%q) accepted", bad)
		}
	}
	for _, c := range []struct {
		rule string
		url  string
		want bool
	}{
		{"api.example.com", "https://api.example.com/x", true},
		{"api.example.com", "http://api.example.com/x", true},
		{"api.example.com", "https://API.example.com/x", true},
		{"api.example.com", "https://api.example.com:8443/x", false},
		{"api.example.com", "http://api.example.com:443/x", false},
		{"api.example.com:8443", "https://api.example.com:8443/x", true},
		{"https://api.example.com", "http://api.example.com/x", false},
		{"https://api.example.com", "https://api.example.com/x", true},
		{"*.example.com", "https://a.b.example.com/", true},
		{"*.example.com", "https://example.com/", false},
		{"*", "https://anything.org/", true},
		{"*", "https://anything.org:8080/", false},
		{"*:*", "http://anything.org:8080/", true},
		{"[::1]:8080", "http://[::1]:8080/", true},
		{"10.0.0.1", "http://10.0.0.1/", true},
		{"10.0.0.1", "http://10.0.0.2/", false},
	} {
		pol, err := newNetPolicy("p", Grants{AllowedHosts: []string{c.rule}}, Egress{})
		if err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(c.url)
		if got := pol.checkURL(u) == nil; got != c.want {
			t.Errorf("rule %q, %s: allowed=%v, want %v", c.rule, c.url, got, c.want)
		}
	}
}

func TestSpecialAddresses(t *testing.T) {
	for _, special := range []string{
		"127.0.0.1", "127.1.2.3", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1",
		"169.254.169.254", "100.64.0.1", "100.100.100.200", "0.0.0.0", "224.0.0.1", "255.255.255.255",
		"::1", "::", "fd00:ec2::254", "fe80::1", "fc00::1", "ff02::1",
		"::ffff:127.0.0.1", "::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe", "2002:7f00:1::1",
	} {
		if specialAddress(netip.MustParseAddr(special)) == "" {
			t.Errorf("%s counted as public", special)
		}
	}
	for _, public := range []string{"8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "64:ff9b::808:808"} {
		if kind := specialAddress(netip.MustParseAddr(public)); kind != "" {
			t.Errorf("%s counted as %s", public, kind)
		}
	}
}

// TestDeniedHTTPRequestsSayWhichGrantWouldAllowThem: a refused request
// fails the call with a message that names the host and the grant to add,
// and without the host's wasm stack trace.
func TestDeniedHTTPRequestsSayWhichGrantWouldAllowThem(t *testing.T) {
	t.Parallel()
	_, err := httpGet(t, load(t, "guest", grantHosts("example.com")), "http://api.example.org/v1")
	wantRefused(t, "a host not granted", err, `HTTP request to 'http://api.example.org/v1' is not allowed: host api.example.org is not in the allowed_hosts of plugin guest (add "api.example.org" to allowed_hosts in [plugins.guest])`)
	if ce := wantKind(t, err, KindDenied); strings.Contains(ce.Message, "wasm stack trace") || strings.Contains(ce.Message, "\n") {
		t.Errorf("the refusal carries a stack trace: %q", ce.Message)
	}
}

// pdkFetch has the pdkfetch test plugin (mcphost's Go PDK) fetch url and
// returns its tool's text: "STATUS BODY", or "fallback: MESSAGE" when the
// request failed and the plugin went on.
func pdkFetch(t *testing.T, p *Plugin, url string) string {
	t.Helper()
	in, _ := json.Marshal(map[string]any{"request": map[string]any{"name": "fetch", "arguments": map[string]string{"url": url}}, "context": map[string]any{}})
	var res abi.CallToolResult
	if err := json.Unmarshal([]byte(call(t, p, abi.ExportCallTool, string(in))), &res); err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("fetch %s: %+v", url, res)
	}
	return res.Content[0].Text
}

// httpFailure is an HTTP request that fails, with the grants it is made
// under and the message that says why; PLUGIN in want stands for the
// plugin's name.
type httpFailure struct {
	name  string
	url   string
	hosts []string
	// kind is the kind of the failure of a call the request stops:
	// KindDenied when the grants refuse it, KindTrap when it fails.
	kind ErrorKind
	want string
}

// httpFailures returns a request that fails for each reason a request can
// fail, against servers of the test that none of them may reach.
func httpFailures(t *testing.T) (_ []httpFailure, unreached func() int32) {
	target := newHTTPServer(t, pong())
	redirect := newHTTPServer(t, http.RedirectHandler("http://api.example.org/", http.StatusFound))
	tlsServer := httptest.NewUnstartedServer(pong())
	tlsServer.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	tlsServer.StartTLS()
	t.Cleanup(tlsServer.Close)
	_, tlsPort, _ := net.SplitHostPort(tlsServer.Listener.Addr().String())
	big := newHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		chunk := strings.Repeat("x", 1<<20)
		for range maxHTTPResponseBytes>>20 + 1 {
			io.WriteString(w, chunk)
		}
	}))
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, closedPort, _ := net.SplitHostPort(closed.Addr().String())
	closed.Close()

	tp := target.port
	return []httpFailure{
		{"host not granted", "http://api.example.org/v1", []string{"example.com"}, KindDenied,
			`HTTP request to 'http://api.example.org/v1' is not allowed: host api.example.org is not in the allowed_hosts of plugin PLUGIN (add "api.example.org" to allowed_hosts in [plugins.PLUGIN])`},
		{"port not granted", target.URL, []string{"127.0.0.1"}, KindDenied,
			`HTTP request to '` + target.URL + `' is not allowed: port ` + tp + ` of 127.0.0.1 is not in the allowed_hosts of plugin PLUGIN (add "127.0.0.1:` + tp + `" to allowed_hosts in [plugins.PLUGIN])`},
		{"scheme not granted", target.URL, []string{"https://127.0.0.1:" + tp}, KindDenied,
			`HTTP request to '` + target.URL + `' is not allowed: http to 127.0.0.1:` + tp + ` is not in the allowed_hosts of plugin PLUGIN (add "http://127.0.0.1:` + tp + `" to allowed_hosts in [plugins.PLUGIN])`},
		{"private address", target.URL, []string{"*:*"}, KindDenied,
			`HTTP request to '` + target.URL + `' is not allowed: address 127.0.0.1 is a loopback address: plugin PLUGIN may not connect to it (set allow_private_network = true in [plugins.PLUGIN], or add "127.0.0.1:` + tp + `" to its allowed_hosts)`},
		{"redirect to a host not granted", redirect.URL, []string{"127.0.0.1:" + redirect.port}, KindDenied,
			`HTTP request to '` + redirect.URL + `' is not allowed: redirect to http://api.example.org/: host api.example.org is not in the allowed_hosts of plugin PLUGIN (add "api.example.org" to allowed_hosts in [plugins.PLUGIN])`},
		{"invalid URL", "http://[::1", []string{"*:*"}, KindTrap,
			`HTTP request to 'http://[::1' failed: invalid URL: missing ']' in host`},
		{"connection refused", "http://127.0.0.1:" + closedPort + "/", []string{"127.0.0.1:" + closedPort}, KindTrap,
			`HTTP request to 'http://127.0.0.1:` + closedPort + `/' failed: could not connect: dial tcp 127.0.0.1:` + closedPort + `: connect: connection refused`},
		{"TLS error", tlsServer.URL, []string{"127.0.0.1:" + tlsPort}, KindTrap,
			`HTTP request to '` + tlsServer.URL + `' failed: TLS error: tls: failed to verify certificate: x509: certificate signed by unknown authority`},
		{"response too large", big.URL, []string{"127.0.0.1:" + big.port}, KindTrap,
			`HTTP request to '` + big.URL + `' failed: the response body exceeds the limit of 16777216 bytes (16 MiB) on HTTP responses`},
	}, target.hits.Load
}

// TestHTTPFailuresAreErrorValuesForPDKPlugins: a plugin built with
// mcphost's PDK gets a failed request as an error value carrying the
// message that says why (and which grant would allow it), handles it and
// goes on, on the same instance.
func TestHTTPFailuresAreErrorValuesForPDKPlugins(t *testing.T) {
	t.Parallel()
	ok := newHTTPServer(t, pong())
	failures, unreached := httpFailures(t)
	for _, f := range failures {
		t.Run(f.name, func(t *testing.T) {
			var logs logRecorder
			opts := grantHosts(append(f.hosts, "127.0.0.1:"+ok.port)...)
			opts.Logger = logs.logger()
			opts.Limits.MaxInstances = 1
			p := load(t, "pdkfetch", opts)
			want := strings.ReplaceAll(f.want, "PLUGIN", "pdkfetch")
			if got := pdkFetch(t, p, f.url); got != "fallback: "+want {
				t.Errorf("got  %q\nwant %q", got, "fallback: "+want)
			}
			if got := pdkFetch(t, p, ok.URL); got != "200 pong" {
				t.Errorf("the request after the failure got %q", got)
			}
			// The operator learns of refusals the plugin handled.
			if refused := logs.records(t, "HTTP request refused"); strings.Contains(want, "is not allowed") &&
				(len(refused) != 1 || refused[0]["level"] != "WARN" || refused[0]["error"] != want) {
				t.Errorf("log records of the refusal: %v", refused)
			}
		})
	}
	if n := unreached(); n != 0 {
		t.Errorf("%d refused requests reached the server", n)
	}
}

// TestHTTPFailuresFailExtismPDKCalls: a plugin built with Extism's own PDK
// expects Extism's contract, so a failed request fails its call, with the
// same message and nothing else: no host or wasm stack trace.
func TestHTTPFailuresFailExtismPDKCalls(t *testing.T) {
	t.Parallel()
	failures, unreached := httpFailures(t)
	for _, f := range failures {
		t.Run(f.name, func(t *testing.T) {
			p := load(t, "extismfetch", grantHosts(f.hosts...))
			_, err := p.Call(t.Context(), "http", []byte(f.url))
			if ce := wantKind(t, err, f.kind); ce.Message != strings.ReplaceAll(f.want, "PLUGIN", "extismfetch") {
				t.Errorf("got  %q\nwant %q", ce.Message, strings.ReplaceAll(f.want, "PLUGIN", "extismfetch"))
			}
		})
	}
	if n := unreached(); n != 0 {
		t.Errorf("%d refused requests reached the server", n)
	}
}

// TestHTTPTimeoutIsAnErrorValue: a request that times out (here the TLS
// handshake, after 10 s) is an error value for a PDK plugin whose call has
// time left, and fails the call of an Extism PDK plugin.
func TestHTTPTimeoutIsAnErrorValue(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the 10 s TLS handshake timeout")
	}
	t.Parallel()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	go func() { // accepts connections and never answers
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	_, port, _ := net.SplitHostPort(silent.Addr().String())
	url := "https://127.0.0.1:" + port + "/"
	want := "HTTP request to '" + url + "' timed out: net/http: TLS handshake timeout"
	opts := grantHosts("127.0.0.1:" + port)
	opts.Limits.Timeout = 20 * time.Second
	t.Run("pdk", func(t *testing.T) {
		t.Parallel()
		if got := pdkFetch(t, load(t, "pdkfetch", opts), url); got != "fallback: "+want {
			t.Errorf("got %q, want %q", got, "fallback: "+want)
		}
	})
	t.Run("extism", func(t *testing.T) {
		t.Parallel()
		_, err := load(t, "extismfetch", opts).Call(t.Context(), "http", []byte(url))
		if ce := wantKind(t, err, KindTrap); ce.Message != want {
			t.Errorf("got %q, want %q", ce.Message, want)
		}
	})
}

// TestCallsInsideWaitingHostFunctionsEndWithinTheGrace checks, for each
// way a call can wait inside the host — a WASI sleep (Go's time.Sleep of
// an hour), an HTTP request to a server that never answers, and a host
// function that waits for what it serves (as sampling and elicitation
// wait for the client) — that the call ends within its timeout and the
// grace SECURITY.md states for a host function.
func TestCallsInsideWaitingHostFunctionsEndWithinTheGrace(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	hang := newHTTPServer(t, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	waitForCtx := func(ctx context.Context, _ []byte) ([]byte, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	for _, c := range []struct {
		what, plugin, export, input string
		opts                        Options
	}{
		{"a WASI sleep", "guest", "sleep", "", Options{}},
		{"http_request to a server that never answers", "guest", "http", `{"url":"` + hang.URL + `"}`, grantHosts("127.0.0.1:" + hang.port)},
		{"a host function waiting for its answer", "hostcall", "call_wait", "", Options{HostFunctions: hostcallFns(map[string]hostFn{"wait": waitForCtx})}},
	} {
		t.Run(c.what, func(t *testing.T) {
			t.Parallel()
			c.opts.Limits.Timeout = timeout
			p := load(t, c.plugin, c.opts)
			start := time.Now()
			_, err := p.Call(t.Context(), c.export, []byte(c.input))
			wantKind(t, err, KindTimeout)
			late := time.Since(start) - timeout
			t.Logf("%s: the call ended %v after its %v timeout", c.what, late, timeout)
			if late > hostFunctionGrace+schedulingSlack {
				t.Errorf("%s: the call ended %v after its %v timeout", c.what, late, timeout)
			}
		})
	}
}
