package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/mcphost/mcphost/internal/testrig/syncbuf"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The hostile-plugin suite: plugins built at test time from
// internal/testrig/testplugins (hostile, attacker, liar) attack a real server
// beside a healthy plugin (the tools example). Each attack must fail with
// a specific error, the healthy plugin must answer in another session
// during and after the attacks, and the server's memory must come back.

// server is a running `mcphost serve --transport http`.
type server struct {
	url  string
	pid  int
	log  *syncbuf.Buffer // its stderr
	stop func(t *testing.T)
}

// start serves the fixture over HTTP at debug level with extra environment
// variables, and returns once it listens.
func (f fixture) start(t *testing.T, env ...string) *server {
	t.Helper()
	cmd := exec.Command(mcphostBin, append([]string{"serve", "--plugins", f.plugins, "--config", f.config,
		"--transport", "http", "--listen", "127.0.0.1:0", "--log-level", "debug"}, f.serveArgs...)...)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := sync.OnceFunc(func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() })
	s := &server{pid: cmd.Process.Pid, log: &syncbuf.Buffer{}, stop: func(*testing.T) { stop() }}
	failOnCrash(t, s.log)
	t.Cleanup(func() { // registered first, run last: after stop, the whole log
		if t.Failed() {
			t.Logf("the server's log (its last %d bytes):\n%s", maxLogShown, tail(s.log.String(), maxLogShown))
		}
	})
	t.Cleanup(stop)
	found := make(chan string, 1)
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			_, _ = s.log.WriteString(sc.Text() + "\n")
			if m := listeningURL.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1] + m[2] // text or JSON
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	select {
	case s.url = <-found:
		return s
	case <-exited:
		t.Fatalf("mcphost serve exited before listening:\n%s", s.log)
	case <-time.After(60 * time.Second):
		t.Fatal("mcphost serve did not listen within 60s")
	}
	return nil
}

// maxLogShown bounds the server log a failed test shows.
const maxLogShown = 16 << 10

// crashStart matches the first line the Go runtime writes when the process
// dies of a panic, a fatal error or a signal, and the line mcphost logs
// when it recovers a panic of its own or of the WebAssembly runtime (a bug
// all the same: host/panics.go, sandbox/runtimepanic.go).
var crashStart = regexp.MustCompile(`(?m)^(panic: |fatal error: |unexpected fault address |SIGSEGV: |SIGBUS: |unexpected signal |.*\bmsg"?[=:]"[^"]*panicked: a bug of )`)

// maxCrashShown bounds the part of a crash a failed test shows: what
// killed the process and the first goroutines (the whole dump is in the
// log, whose tail may hold only the last ones).
const maxCrashShown = 8 << 10

// failOnCrash fails t, when it ends, if the server log holds a crash
// (goCrash). Register it before what stops the server: cleanups run last
// first, and it must read the whole log.
func failOnCrash(t testing.TB, log *syncbuf.Buffer) {
	t.Cleanup(func() {
		if crash := goCrash(log.String()); crash != "" {
			t.Errorf("mcphost serve crashed, or recovered a panic:\n%s", crash)
		}
	})
}

// goCrash returns the start of the crash the log of a Go process ends
// with, or "" if it holds none.
func goCrash(log string) string {
	loc := crashStart.FindStringIndex(log)
	if loc == nil {
		return ""
	}
	crash := log[loc[0]:]
	if len(crash) > maxCrashShown {
		crash = crash[:maxCrashShown] + "…"
	}
	return crash
}

// tail returns the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// session opens a client session on the server.
func (s *server) session(t *testing.T, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "hostile-test", Version: "1"}, opts)
	cs, err := client.Connect(ctxT(t), &mcp.StreamableClientTransport{Endpoint: s.url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// hostileCall calls a tool and returns its text and whether it is an error
// result; a protocol error is returned as err.
func hostileCall(ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) (string, bool, error) {
	if args == nil {
		args = map[string]any{}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", false, err
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n"), res.IsError, nil
}

// waitStarted waits until log, from its byte from on, shows n calls of
// plugin's tool started: the line "TOOL: started" that the test plugins'
// long-running tools (hostile's slow, attacker's hold, greedy's sleep)
// write to stderr first, which the server logs.
func waitStarted(t *testing.T, log *syncbuf.Buffer, from int, plugin, tool string, n int) {
	t.Helper()
	poll.Until(t, 30*time.Second, fmt.Sprintf("%d calls of %s's %s started", n, plugin, tool), func() bool {
		started := 0
		for line := range strings.Lines(log.String()[from:]) {
			if logHas(line, "plugin="+plugin+" ", `msg="`+tool+`: started"`) {
				started++
			}
		}
		return started >= n
	})
}

// healthy keeps calling the healthy plugin in its own session until
// stopped, counting failures.
type healthy struct {
	calls, failures atomic.Int64
	lastErr         atomic.Value
	stop            chan struct{}
	done            chan struct{}
}

func keepCalling(t *testing.T, cs *mcp.ClientSession) *healthy {
	h := &healthy{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		for {
			select {
			case <-h.stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			text, isErr, err := hostileCall(ctx, cs, "hash", map[string]any{"text": "abc"})
			cancel()
			h.calls.Add(1)
			if err != nil || isErr || !strings.Contains(text, sha256abc) {
				h.failures.Add(1)
				h.lastErr.Store(fmt.Sprintf("%v %v %q", err, isErr, text))
			}
			time.Sleep(20 * time.Millisecond) // kept: the healthy client's pace, a call every 20 ms
		}
	}()
	return h
}

func (h *healthy) finish(t *testing.T) {
	t.Helper()
	close(h.stop)
	<-h.done
	if h.failures.Load() > 0 || h.calls.Load() == 0 {
		t.Errorf("healthy plugin: %d of %d calls failed during the attacks (last: %v)", h.failures.Load(), h.calls.Load(), h.lastErr.Load())
	}
}

// attack is one hostile call and the error text it must produce.
type attack struct {
	name string
	tool string
	args map[string]any
	want string // in the error result's text
}

func TestHostilePluginsAreContained(t *testing.T) {
	// The network: a target that must never be reached, and a redirector
	// the attacker may reach (it is listed by address).
	var targetHits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		targetHits.Add(1)
		io.WriteString(w, "internal data")
	}))
	defer target.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	}))
	defer redirector.Close()
	_, tport, _ := net.SplitHostPort(target.Listener.Addr().String())
	_, rport, _ := net.SplitHostPort(redirector.Listener.Addr().String())

	// The files: a mount with a link the host left pointing out of it.
	dir := t.TempDir()
	data, outside := filepath.Join(dir, "data"), filepath.Join(dir, "outside.txt")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "inside.txt"), []byte("inside"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(outside, []byte("host secret file"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(data, "escape")); err != nil {
		t.Fatal(err)
	}

	const secret = "sk-hostile-0123456789abcdef"
	const marker = "MCPHOST_HOSTILE_MARKER=visible-to-the-host-only"
	f := newFixture(t, fmt.Sprintf(`
[plugins.attacker]
timeout = "2s"
# Low enough that the floods trip it even where each notification takes
# a few milliseconds to reach the client (a loaded CI machine).
host_calls_per_second = 100
max_instances = 1
max_queue = 0
breaker_failures = 0
host_functions = ["notify_progress", "notify_logging_message"]
allowed_hosts = ["127.0.0.1:%s", "localhost:%s"]
secrets = { api_key = "env:MCPHOST_HOSTILE_SECRET" }
[[plugins.attacker.mounts]]
host = %q
guest = "/data"
mode = "ro"

# After attacker's table: attacker keeps the tool name ok they share.
[plugins.hostile]
# Room for the memory bomb and the deep recursion to trap (1.4-2.1 s on a
# 2-core machine), so that only the infinite loop times out.
timeout = "5s"
memory_mib = 64
max_output_bytes = 1048576
breaker_failures = 0

[plugins.liar]
breaker_failures = 0
`, rport, tport, data), "internal/testrig/testplugins/hostile", "internal/testrig/testplugins/attacker", "internal/testrig/testplugins/liar", "plugins/examples/tools")
	srv := f.start(t, "MCPHOST_HOSTILE_SECRET="+secret, marker)
	ctx := ctxT(t)

	var progress atomic.Int64
	attackerSession := srv.session(t, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { progress.Add(1) },
	})
	healthySession := srv.session(t, nil)
	// Warm up, then take the memory baseline. Every plugin the attacks use
	// answers a call first: plugins are compiled and instantiated on first
	// use, and a baseline taken before hostile's and liar's would count
	// their compiled code and instances as what the attacks left behind.
	for range 3 {
		if _, isErr, err := hostileCall(ctx, healthySession, "hash", map[string]any{"text": "abc"}); err != nil || isErr {
			t.Fatalf("healthy plugin before the attacks: %v", err)
		}
		for _, tool := range []string{"ok", "hostile_ok", "liar_ok"} {
			if text, _, err := hostileCall(ctx, attackerSession, tool, nil); err != nil || text != "ok" {
				t.Fatalf("%s before the attacks: %v %q", tool, err, text)
			}
		}
	}
	baseline := rssKiB(t, srv.pid)
	h := keepCalling(t, healthySession)

	redirect := func(to string) string { return redirector.URL + "/?to=" + to }
	attacks := []attack{
		// CPU, memory, stack, output.
		{"infinite loop", "spin", nil, "plugin hostile: plugin call timed out: exceeded the 5s timeout; raise timeout in [plugins.hostile]"},
		// Growing the stack needs memory too: 64 MiB runs out before Go's
		// stack limit.
		{"deep recursion", "recurse", nil, "plugin hostile: plugin ran out of memory: all 64 MiB of its memory were in use; the plugin said: runtime: out of memory"},
		{"memory bomb", "hog", nil, "plugin hostile: plugin ran out of memory: all 64 MiB of its memory were in use; the plugin said: runtime: out of memory"},
		{"huge output", "flood", map[string]any{"bytes": 4 << 20}, "plugin output too large: output of"},
		// Floods through host functions.
		{"progress flood", "progress_flood", map[string]any{"n": 1000000},
			"host function notify_progress: more than 100 host function calls per second (host_calls_per_second); the call is stopped"},
		{"log notification flood", "log_flood", map[string]any{"n": 1000000},
			"host function notify_logging_message: more than 100 host function calls per second"},
		// Capabilities not granted.
		{"host function not granted", "roots", nil,
			"host function list_roots is not granted to plugin attacker (add it to host_functions in [plugins.attacker])"},
		{"host not granted", "fetch", map[string]any{"url": "http://example.com/"},
			`HTTP request to 'http://example.com/' is not allowed: host example.com is not in the allowed_hosts of plugin attacker (add "example.com" to allowed_hosts in [plugins.attacker])`},
		{"port not granted", "fetch", map[string]any{"url": target.URL + "/"},
			"port " + tport + ` of 127.0.0.1 is not in the allowed_hosts of plugin attacker (add "127.0.0.1:` + tport + `" to allowed_hosts in [plugins.attacker])`},
		{"name resolving to loopback", "fetch", map[string]any{"url": "http://localhost:" + tport + "/"},
			"is a loopback address: plugin attacker may not connect to it (set allow_private_network = true in [plugins.attacker], or add "},
		{"redirect to loopback through a granted name", "fetch", map[string]any{"url": redirect("http://localhost:" + tport + "/")},
			"is a loopback address: plugin attacker may not connect to it"},
		{"redirect to a loopback address", "fetch", map[string]any{"url": redirect(target.URL + "/")},
			"redirect to " + target.URL + "/: port " + tport + " of 127.0.0.1 is not in the allowed_hosts"},
		{"redirect to cloud metadata", "fetch", map[string]any{"url": redirect("http://169.254.169.254/latest/meta-data/")},
			"redirect to http://169.254.169.254/latest/meta-data/: host 169.254.169.254 is not in the allowed_hosts"},
		{"read through a link out of the mount", "read", map[string]any{"path": "/data/escape"}, "open /data/escape: Permission denied"},
		{"read with ..", "read", map[string]any{"path": "/data/../outside.txt"}, "open /data/../outside.txt: Bad file number"},
		{"read outside any mount", "read", map[string]any{"path": outside}, "open " + outside + ":"},
		{"write to a read-only mount", "write", map[string]any{"path": "/data/inside.txt"}, "open /data/inside.txt:"},
		{"a config value not granted", "leak", map[string]any{"key": "HOME"}, "no config value HOME"},
		{"leaking its secret", "leak", map[string]any{"key": "api_key"}, "error has [REDACTED]"},
		// Output that breaks the rules.
		{"output that lies about its schema", "lies", nil,
			"tool lies (plugin liar) returned an invalid result: structuredContent does not match outputSchema"},
		{"deeply nested JSON", "nested", nil, "plugin liar: plugin output malformed: output is not valid JSON: invalid character '[' exceeded max depth"},
		{"truncated JSON", "truncated", nil, "plugin liar: plugin output malformed: output is not valid JSON: unexpected end of JSON input"},
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			cs := attackerSession
			callCtx := ctx
			if a.tool == "progress_flood" {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Meta: mcp.Meta{"progressToken": "flood"}, Name: a.tool, Arguments: a.args})
				if err != nil || !res.IsError || !strings.Contains(text(t, res.Content), a.want) {
					t.Fatalf("got %v %+v, want an error result with %q", err, res, a.want)
				}
				return
			}
			got, isErr, err := hostileCall(callCtx, cs, a.tool, a.args)
			if err != nil || !isErr || !strings.Contains(got, a.want) {
				t.Errorf("got err=%v isError=%v %q\nwant an error result with %q", err, isErr, got, a.want)
			}
		})
	}
	if n := targetHits.Load(); n != 0 {
		t.Errorf("%d requests reached the internal target", n)
	}
	if n := progress.Load(); n > 5000 { // of 1000000 asked for; 1000 a second get through
		t.Errorf("%d progress notifications reached the client; the flood was not cut short", n)
	}

	t.Run("invalid UTF-8 becomes replacement characters", func(t *testing.T) {
		got, isErr, err := hostileCall(ctx, attackerSession, "badutf8", nil)
		if err != nil || isErr || got != "bad \ufffd\ufffd\ufffd bytes" {
			t.Errorf("got %v %v %q", err, isErr, got)
		}
	})
	t.Run("the host environment is invisible", func(t *testing.T) {
		got, isErr, err := hostileCall(ctx, attackerSession, "environ", nil)
		if err != nil || isErr || got != "env=[] args=[]" {
			t.Errorf("got %v %v %q", err, isErr, got)
		}
	})
	t.Run("names and URIs that break the rules are left out", func(t *testing.T) {
		var names []string
		for tool, err := range attackerSession.Tools(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, tool.Name)
		}
		for _, bad := range []string{"has space", strings.Repeat("x", 200), "bad\x00byte", "utf8_\xff\xfe", "no_schema", "bad_schema"} {
			if slices.Contains(names, bad) {
				t.Errorf("tool %q exposed", bad)
			}
		}
		for _, good := range []string{"lies", "nested", "badutf8", "truncated", "ok", "hash", "spin"} {
			if !slices.Contains(names, good) {
				t.Errorf("tool %q missing from %q", good, names)
			}
		}
		uris := resourceURIs(t, ctx, attackerSession)
		if !slices.Equal(uris, []string{"liar://fine"}) {
			t.Errorf("resources %q, want only liar://fine", uris)
		}
		log := srv.log.String()
		for _, want := range []string{
			`msg="tool left out: name must be 1-128 of A-Z a-z 0-9 _ - ." plugin=liar name="has space"`,
			`msg="tool left out: bad inputSchema" plugin=liar tool=bad_schema`,
			`msg="resource left out: uri must be an absolute URI" plugin=liar uri="no scheme here"`,
			`msg="resource template left out: bad uriTemplate" plugin=liar`,
			`msg="prompt left out: name must be 1-128 printable characters" plugin=liar`,
		} {
			if !strings.Contains(log, want) {
				t.Errorf("server log lacks %s", want)
			}
		}
	})
	t.Run("stderr flood is cut at the log budget", func(t *testing.T) {
		before := srv.log.Len()
		got, isErr, err := hostileCall(ctx, attackerSession, "stderr_flood", map[string]any{"n": 20000}) // 20 MB
		if err != nil || isErr || got != "flooded" {
			t.Fatalf("got %v %v %q", err, isErr, got)
		}
		poll.Until(t, 10*time.Second, "the log limit warning", func() bool {
			return strings.Contains(srv.log.String()[before:], "plugin log limit reached, dropping the rest of this call's output")
		})
		grown := srv.log.Len() - before
		if grown > 256<<10 {
			t.Errorf("20 MB of plugin stderr grew the server log by %d bytes", grown)
		}
	})
	t.Run("an instance held forever is taken back", func(t *testing.T) {
		held := make(chan string, 1)
		from := srv.log.Len()
		go func() {
			got, _, err := hostileCall(ctx, attackerSession, "hold", nil)
			held <- fmt.Sprint(got, err)
		}()
		waitStarted(t, srv.log, from, "attacker", "hold", 1)
		// The only instance is taken and no call may wait: busy at once.
		other := srv.session(t, nil)
		got, isErr, err := hostileCall(ctx, other, "ok", nil)
		if err != nil || !isErr || !strings.Contains(got, "plugin attacker: plugin busy: 1 calls running and 0 waiting") {
			t.Errorf("call while held: %v %v %q", err, isErr, got)
		}
		if got := <-held; !strings.Contains(got, "plugin attacker: plugin call timed out: exceeded the 2s timeout") {
			t.Errorf("hold: %q", got)
		}
		if got, _, err := hostileCall(ctx, other, "ok", nil); err != nil || got != "ok" {
			t.Errorf("after the hold: %v %q", err, got)
		}
	})

	// Every plugin still answers, in both sessions.
	h.finish(t)
	for _, tool := range []string{"ok", "hash"} {
		args := map[string]any{"text": "abc"}
		if tool == "ok" {
			args = nil
		}
		for _, cs := range []*mcp.ClientSession{attackerSession, healthySession} {
			if _, isErr, err := hostileCall(ctx, cs, tool, args); err != nil || isErr {
				t.Errorf("%s after the attacks: %v", tool, err)
			}
		}
	}
	t.Logf("healthy plugin answered %d calls during the attacks", h.calls.Load())

	// Secrets never reached the log; the host's environment did not leak.
	log := srv.log.String()
	if strings.Contains(log, secret) {
		t.Error("the server log contains the secret")
	}
	if !strings.Contains(log, "stderr has [REDACTED]") {
		t.Error("the plugin's stderr line with the secret was not logged redacted")
	}

	// Memory returns to its baseline: the sandbox hands the memory of
	// discarded instances back to the system (sandbox/reclaim.go).
	const slack = 16 << 10 // KiB
	var rss int64
	if poll.Within(30*time.Second, func() bool { rss = rssKiB(t, srv.pid); return rss <= baseline+slack }) {
		t.Logf("server RSS: %d KiB before the attacks, %d KiB after", baseline, rss)
	} else {
		t.Errorf("server RSS %d KiB after the attacks, baseline %d KiB", rss, baseline)
	}
}

func TestRepeatedFailuresOpenTheBreaker(t *testing.T) {
	f := newFixture(t, `
[plugins.hostile]
timeout = "2s"
breaker_failures = 3
breaker_window = "30s"
breaker_backoff = "1s"

[plugins.attacker]
calls_per_second = 2
`, "internal/testrig/testplugins/hostile", "internal/testrig/testplugins/attacker", "plugins/examples/tools")
	srv := f.start(t)
	cs := srv.session(t, nil)
	ctx := ctxT(t)

	for range 3 {
		if got, isErr, err := hostileCall(ctx, cs, "crash", nil); err != nil || !isErr || !strings.Contains(got, "plugin hostile: plugin trapped: exited with status 3") {
			t.Fatalf("crash: %v %v %q", err, isErr, got)
		}
	}
	// (Both hostile and attacker have a tool "ok": hostile's table comes
	// first, attacker's is exposed as "attacker_ok".)
	// Open: the plugin's tools answer at once, without running.
	start := time.Now()
	got, isErr, err := hostileCall(ctx, cs, "ok", nil)
	if err != nil || !isErr || !strings.Contains(got, "plugin hostile: plugin unavailable: circuit breaker open after repeated failures (last: plugin trapped:") ||
		!strings.Contains(got, "calls fail at once until a probe succeeds: next probe in") {
		t.Fatalf("while open: %v %v %q\n%s", err, isErr, got, srv.log)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("a refused call took %v", d)
	}
	// The other plugins are not affected.
	if _, isErr, err := hostileCall(ctx, cs, "hash", map[string]any{"text": "abc"}); err != nil || isErr {
		t.Fatalf("healthy plugin while the breaker is open: %v", err)
	}
	// After the back-off a probe runs; it succeeds and closes the breaker.
	time.Sleep(1100 * time.Millisecond) // kept: the 1 s back-off under test must pass before a probe may run
	for range 2 {
		if got, _, err := hostileCall(ctx, cs, "ok", nil); err != nil || got != "ok" {
			t.Fatalf("after the back-off: %v %q", err, got)
		}
	}
	log := srv.log.String()
	for _, want := range []string{
		`msg="circuit breaker opened: the plugin keeps failing" plugin=hostile failures=3 window=30s backoff=1s`,
		`msg="circuit breaker half-open: the next call probes the plugin" plugin=hostile`,
		`msg="circuit breaker closed: the probe call succeeded" plugin=hostile`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("server log lacks %s", want)
		}
	}

	// calls_per_second = 2: a burst of calls beyond it fails at once.
	var limited int
	for range 6 {
		got, isErr, err := hostileCall(ctx, cs, "attacker_ok", nil)
		if err != nil {
			t.Fatal(err)
		}
		if isErr {
			if !strings.Contains(got, "plugin attacker: plugin rate limit exceeded: more than 2 calls per second (calls_per_second of [plugins.attacker]); try again shortly") {
				t.Errorf("rate limited: %q", got)
			}
			limited++
		}
	}
	if limited < 3 {
		t.Errorf("%d of 6 immediate calls limited at 2 per second", limited)
	}
}

func TestPinnedPluginThatChangedIsRefused(t *testing.T) {
	f := newFixture(t, `
[plugins.hostile]
sha256 = "0000000000000000000000000000000000000000000000000000000000000000"
`, "internal/testrig/testplugins/hostile", "plugins/examples/tools")
	f.serveArgs = allowPartial
	srv := f.start(t)
	cs := srv.session(t, nil)
	got, _, err := hostileCall(ctxT(t), cs, "ok", nil)
	if err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("a tool of the refused plugin answered: %v %q", err, got)
	}
	if _, isErr, err := hostileCall(ctxT(t), cs, "hash", map[string]any{"text": "abc"}); err != nil || isErr {
		t.Errorf("the other plugin: %v", err)
	}
	if !strings.Contains(srv.log.String(), "hostile.wasm: plugin file does not match its sha256 pin: expected 0000000000000000000000000000000000000000000000000000000000000000, actual ") {
		t.Errorf("no pin error in the log:\n%s", srv.log)
	}
}

// TestLoadBesideAHostilePlugin runs concurrent calls to a healthy plugin
// while another session keeps attacking a hostile plugin, and reports the
// healthy plugin's numbers.
func TestLoadBesideAHostilePlugin(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	f := newFixture(t, `
[plugins.hostile]
timeout = "500ms"
memory_mib = 64
max_output_bytes = 1048576
breaker_failures = 0
`, "internal/testrig/testplugins/hostile", "plugins/examples/tools")
	srv := f.start(t)
	const clients, duration = 8, 8 * time.Second
	sessions := make([]*mcp.ClientSession, clients)
	for i := range sessions {
		sessions[i] = srv.session(t, nil)
	}
	attackerSession := srv.session(t, nil)

	stop := make(chan struct{})
	var attacks atomic.Int64
	attackDone := make(chan struct{})
	go func() {
		defer close(attackDone)
		tools := []string{"spin", "crash", "hog", "recurse", "flood"}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			args := map[string]any{}
			if tools[i%len(tools)] == "flood" {
				args["bytes"] = 4 << 20
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			_, _, _ = hostileCall(ctx, attackerSession, tools[i%len(tools)], args)
			cancel()
			attacks.Add(1)
		}
	}()

	var mu sync.Mutex
	var latencies []time.Duration
	var errs []string
	var wg sync.WaitGroup
	deadline := time.Now().Add(duration)
	for _, cs := range sessions {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				start := time.Now()
				got, isErr, err := hostileCall(ctx, cs, "hash", map[string]any{"text": "abc"})
				d := time.Since(start)
				cancel()
				mu.Lock()
				latencies = append(latencies, d)
				if err != nil || isErr || !strings.Contains(got, sha256abc) {
					errs = append(errs, fmt.Sprintf("%v %v %q", err, isErr, got))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(stop)
	<-attackDone

	slices.Sort(latencies)
	pct := func(p float64) time.Duration { return latencies[int(p*float64(len(latencies)-1))] }
	t.Logf("load: %d clients for %v beside %d attacks: %d calls, %d errors, p50 %v, p99 %v, max %v",
		clients, duration, attacks.Load(), len(latencies), len(errs), pct(0.50), pct(0.99), latencies[len(latencies)-1])
	if len(errs) > 0 {
		t.Errorf("%d errors, first: %s", len(errs), errs[0])
	}
	if attacks.Load() < 5 {
		t.Errorf("only %d attacks ran", attacks.Load())
	}
}

// goCrash finds what the Go runtime writes when a process dies, and the
// line mcphost logs when it recovers a panic, from their first line; a
// log without either has none.
func TestGoCrashFindsCrashesAndRecoveredPanics(t *testing.T) {
	const before = "time=2026-11-29T14:57:58.835Z level=INFO msg=\"plugin loaded\" plugin=greedy\n"
	for _, c := range []struct{ log, want string }{
		{before + "panic: runtime error: index out of range [16] with length 0\n\ngoroutine 67 [running]:\n", "panic: runtime error: index out of range [16] with length 0"},
		{before + "fatal error: concurrent map writes\n", "fatal error: concurrent map writes"},
		{before + "SIGSEGV: segmentation violation\nPC=0x0 m=3\n", "SIGSEGV: segmentation violation"},
		{before + `time=2026-11-29T15:00:00Z level=ERROR msg="serving tools/call panicked: a bug of mcphost; answered with an internal error, the server carries on" panic="x"` + "\n",
			`time=2026-11-29T15:00:00Z level=ERROR msg="serving tools/call panicked: a bug of mcphost`},
		{before + `{"time":"2026-11-29T15:00:00Z","level":"ERROR","msg":"the WebAssembly runtime panicked: a bug of the host, not of the plugin"}` + "\n",
			`{"time":"2026-11-29T15:00:00Z","level":"ERROR","msg":"the WebAssembly runtime panicked: a bug of the host`},
	} {
		if got := goCrash(c.log); !strings.HasPrefix(got, c.want) {
			t.Errorf("goCrash(%q) = %q, want it to start with %q", c.log, got, c.want)
		}
	}
	for _, log := range []string{"", before, before + "time=2026-11-29T15:00:00Z level=INFO msg=\"plugin said\" text=\"panic: in the plugin's own words\"\n",
		before + "time=2026-11-29T15:00:00Z level=INFO msg=\"plugin said\" text=\"it panicked: a bug of mine\"\n"} {
		if got := goCrash(log); got != "" {
			t.Errorf("goCrash(%q) = %q, want none", log, got)
		}
	}
}
