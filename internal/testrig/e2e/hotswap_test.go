package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/mcphost/mcphost/internal/testrig/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// These tests swap plugins under a running `mcphost serve --transport http`
// (watching its plugins folder and config, the default) while clients of
// the official Go SDK use it. The plugin swapped is internal/testrig/testplugins/swap:
// variants a and b have echo and slow, and each a tool (only_a, only_b) and
// a resource (swap://a, swap://b) of its own.

const (
	swapA = "internal/testrig/testplugins/swap/a"
	swapB = "internal/testrig/testplugins/swap/b"
)

// wasmOf builds a Go plugin (once per test binary) and returns its bytes.
func wasmOf(t testing.TB, pkg string) []byte {
	t.Helper()
	b, err := os.ReadFile(plugintest.Build(t, pkg))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// swapIn replaces (or adds) dir/name as a build tool or an editor does:
// written under a temporary dotfile name, then renamed over it.
func swapIn(t testing.TB, dir, name string, data []byte) {
	t.Helper()
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// watchedServer is a running `mcphost serve --transport http` whose log the
// test reads.
type watchedServer struct {
	cmd *exec.Cmd
	url string

	mu    sync.Mutex
	lines []string
	more  chan struct{} // closed when a line arrives, then replaced
}

// serveWatched starts the server of f on a free loopback port, with extra
// serve flags, and stops it with the test.
func (f fixture) serveWatched(t testing.TB, args ...string) *watchedServer {
	t.Helper()
	args = append([]string{"serve", "--plugins", f.plugins, "--config", f.config, "--transport", "http", "--listen", "127.0.0.1:0"}, args...)
	s := &watchedServer{cmd: exec.Command(mcphostBin, args...), more: make(chan struct{})}
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.cmd.Process.Signal(os.Interrupt)
		_ = s.cmd.Wait()
		if t.Failed() {
			s.mu.Lock()
			t.Logf("server log:\n%s", strings.Join(s.lines, "\n"))
			s.mu.Unlock()
		}
	})
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			s.mu.Lock()
			s.lines = append(s.lines, sc.Text())
			close(s.more)
			s.more = make(chan struct{})
			s.mu.Unlock()
		}
	}()
	line, _ := s.waitLog(t, 0, listeningURL, 60*time.Second)
	s.url = listeningURL.FindStringSubmatch(line)[1]
	return s
}

// mark returns the number of log lines so far, to wait for lines after it.
func (s *watchedServer) mark() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.lines)
}

// waitLog waits for a log line from index from on that matches re, and
// returns it and the index after it.
func (s *watchedServer) waitLog(t testing.TB, from int, re *regexp.Regexp, timeout time.Duration) (string, int) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		s.mu.Lock()
		for i := from; i < len(s.lines); i++ {
			if line := s.lines[i]; re.MatchString(line) {
				s.mu.Unlock()
				return line, i + 1
			}
		}
		from = max(from, len(s.lines))
		more := s.more
		s.mu.Unlock()
		select {
		case <-more:
		case <-deadline:
			t.Fatalf("no log line matching %s within %v", re, timeout)
		}
	}
}

// logSince returns the log lines from index from on that match re.
func (s *watchedServer) logSince(from int, re *regexp.Regexp) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, l := range s.lines[min(from, len(s.lines)):] {
		if re.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

// rssKiB reads the resident set size of process pid from /proc.
func rssKiB(t testing.TB, pid int) int64 {
	t.Helper()
	return int64(procStatusKiB(t, pid, "VmRSS"))
}

// watchClient is a client session that records the notifications of hot
// swaps: the arrival time of each tools/list_changed, and the URIs of
// resources/updated.
type watchClient struct {
	cs           *mcp.ClientSession
	toolsChanged chan time.Time
	updated      chan string
}

func connectWatching(t testing.TB, url string) *watchClient {
	t.Helper()
	c := &watchClient{toolsChanged: make(chan time.Time, 1000), updated: make(chan string, 100)}
	client := mcp.NewClient(&mcp.Implementation{Name: "hotswap", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { c.toolsChanged <- time.Now() },
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { c.updated <- r.Params.URI },
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	c.cs = cs
	return c
}

// drain forgets the notifications received so far.
func (c *watchClient) drain() {
	for {
		select {
		case <-c.toolsChanged:
		default:
			return
		}
	}
}

// waitToolsChanged waits for a tools/list_changed and returns when it came.
func (c *watchClient) waitToolsChanged(t testing.TB, timeout time.Duration) time.Time {
	t.Helper()
	select {
	case at := <-c.toolsChanged:
		return at
	case <-time.After(timeout):
		t.Fatalf("no notifications/tools/list_changed within %v", timeout)
		return time.Time{}
	}
}

// noToolsChanged checks that no tools/list_changed arrived.
func (c *watchClient) noToolsChanged(t testing.TB) {
	t.Helper()
	select {
	case <-c.toolsChanged:
		t.Fatal("unexpected notifications/tools/list_changed")
	default:
	}
}

// echo calls the echo tool and returns its text: "<variant>:<text>".
func (c *watchClient) echo(t testing.TB) string {
	t.Helper()
	res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil {
		t.Fatalf("echo: %v", err)
	}
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("echo: %+v", res)
	}
	tc, _ := res.Content[0].(*mcp.TextContent)
	if tc == nil {
		t.Fatalf("echo: %+v", res.Content[0])
	}
	return tc.Text
}

// toolNames lists the tools the client sees.
func (c *watchClient) toolNames(t testing.TB) []string {
	t.Helper()
	var names []string
	for tool, err := range c.cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

var swapLogged = regexp.MustCompile(`msg="plugin swapped" plugin=swap `)

func TestHotSwapUnderConcurrentCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED in -short: 100 hot swaps")
	}
	variants := [2][]byte{wasmOf(t, swapA), wasmOf(t, swapB)}
	names := [2]string{"a", "b"}
	f := newFixture(t, "")
	swapIn(t, f.plugins, "swap.wasm", variants[0])
	srv := f.serveWatched(t)

	const clients, swaps = 4, 100
	cls := make([]*watchClient, clients)
	for i := range cls {
		cls[i] = connectWatching(t, srv.url)
	}
	if got := cls[0].echo(t); got != "a:hi" {
		t.Fatalf("echo before any swap: %q", got)
	}

	// Every client calls the plugin's tools without pause: echo, and now
	// and then slow, whose calls are often running when a swap happens;
	// the first client's last longer than the old version's grace (1s), so
	// only the count of calls in flight keeps that version open.
	stop := make(chan struct{})
	var calls, failures atomic.Int64
	var failMu sync.Mutex
	var failed []string
	var wg sync.WaitGroup
	stopCallers := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer stopCallers()
	for i, c := range cls {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": strconv.Itoa(i)}}
				if n%4 == 3 {
					millis := 120
					if i == 0 {
						millis = 1500
					}
					params = &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"millis": millis}}
				}
				res, err := c.cs.CallTool(context.Background(), params)
				calls.Add(1)
				if err != nil || res.IsError {
					failures.Add(1)
					failMu.Lock()
					if len(failed) < 10 {
						failed = append(failed, fmt.Sprintf("%s: err=%v result=%+v", params.Name, err, res))
					}
					failMu.Unlock()
				}
			}
		})
	}

	var latencies []time.Duration
	// The server's RSS, least over swaps 10 to 19 and over the last ten:
	// the least is the resident memory between transient peaks (instances
	// of a replaced version that are still draining).
	early, late := int64(1<<62), int64(1<<62)
	started := time.Now()
	for i := 1; i <= swaps; i++ {
		next := i % 2
		for _, c := range cls {
			c.drain()
		}
		renamed := time.Now()
		swapIn(t, f.plugins, "swap.wasm", variants[next])
		first := time.Time{}
		for _, c := range cls { // every session hears of it
			at := c.waitToolsChanged(t, 30*time.Second)
			if first.IsZero() || at.Before(first) {
				first = at
			}
		}
		latencies = append(latencies, first.Sub(renamed))
		// New calls go to the new version.
		if got, want := cls[i%clients].echo(t), names[next]+":hi"; got != want {
			t.Fatalf("swap %d: echo answered %q, want %q", i, got, want)
		}
		switch {
		case i >= 10 && i < 20:
			early = min(early, rssKiB(t, srv.cmd.Process.Pid))
		case i > swaps-10:
			late = min(late, rssKiB(t, srv.cmd.Process.Pid))
		}
	}
	stopCallers()

	if n := failures.Load(); n > 0 {
		t.Errorf("%d of %d calls failed during %d swaps; first ones:\n%s", n, calls.Load(), swaps, strings.Join(failed, "\n"))
	}
	if got, want := cls[0].toolNames(t), []string{"echo", "only_" + names[swaps%2], "slow"}; !slices.Equal(got, want) {
		t.Errorf("tools after %d swaps: %v, want %v", swaps, got, want)
	}
	if n := len(srv.logSince(0, swapLogged)); n != swaps {
		t.Errorf("%d swap log lines for %d swaps", n, swaps)
	}
	growth := late - early
	t.Logf("%d swaps in %v under %d clients, %d calls, %d failed; server RSS %d MiB at swaps 10-19, %d MiB at swaps %d-%d (%+d MiB)",
		swaps, time.Since(started).Round(time.Millisecond), clients, calls.Load(), failures.Load(), early>>10, late>>10, swaps-9, swaps, growth>>10)
	t.Logf("rename to first tools/list_changed: median %v, min %v, max %v over %d swaps",
		median(latencies).Round(time.Millisecond), slices.Min(latencies).Round(time.Millisecond), slices.Max(latencies).Round(time.Millisecond), swaps)
	// Each version is a few MiB of module and tens of MiB of instances: a
	// leak of old versions would add hundreds of MiB over 80 swaps.
	if growth > 64<<10 {
		t.Errorf("server RSS grew by %d MiB between swaps 10-19 and %d-%d", growth>>10, swaps-9, swaps)
	}
}

func TestHotSwapWaitsForCompleteFilesAndKeepsServingOnBadOnes(t *testing.T) {
	a, b := wasmOf(t, swapA), wasmOf(t, swapB)
	f := newFixture(t, "")
	swapIn(t, f.plugins, "swap.wasm", a)
	srv := f.serveWatched(t)
	c := connectWatching(t, srv.url)
	path := filepath.Join(f.plugins, "swap.wasm")
	notLoaded := regexp.MustCompile(`msg="plugin not (re)?loaded`)

	t.Run("a file written slowly in place is loaded once, complete", func(t *testing.T) {
		from := srv.mark()
		w, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			t.Fatal(err)
		}
		const chunks = 10
		for i := range chunks { // pauses shorter than the debounce
			if _, err := w.Write(b[i*len(b)/chunks : (i+1)*len(b)/chunks]); err != nil {
				t.Fatal(err)
			}
			time.Sleep(40 * time.Millisecond) // kept: the slow writer under test
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		c.waitToolsChanged(t, 30*time.Second)
		if got := c.echo(t); got != "b:hi" {
			t.Fatalf("echo after the write: %q", got)
		}
		if bad := srv.logSince(from, notLoaded); len(bad) > 0 {
			t.Fatalf("a half-written file was tried:\n%s", strings.Join(bad, "\n"))
		}
		// The lists' change is announced before the swap is logged.
		srv.waitLog(t, from, swapLogged, 30*time.Second)
		if n := len(srv.logSince(from, swapLogged)); n != 1 {
			t.Fatalf("%d swaps for one write", n)
		}
	})

	t.Run("a half-written file is not loaded; the rest of it is", func(t *testing.T) {
		from := srv.mark()
		half := len(a) / 2
		if err := os.WriteFile(path, a[:half], 0o644); err != nil {
			t.Fatal(err)
		}
		// The writer pauses longer than the debounce: the server tries the
		// half file, refuses it, and the running version keeps serving.
		line, _ := srv.waitLog(t, from, notLoaded, 30*time.Second)
		if !strings.Contains(line, "file=swap.wasm") {
			t.Errorf("the refusal does not name the file: %s", line)
		}
		if got := c.echo(t); got != "b:hi" {
			t.Fatalf("echo with a half-written file: %q", got)
		}
		c.noToolsChanged(t)
		w, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(a[half:]); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		c.waitToolsChanged(t, 30*time.Second)
		if got := c.echo(t); got != "a:hi" {
			t.Fatalf("echo once the file is complete: %q", got)
		}
	})

	t.Run("a broken replacement keeps the old version serving", func(t *testing.T) {
		for _, bad := range []struct {
			name string
			data []byte
			err  string
		}{
			{"not wasm", []byte("this is not a wasm module"), "not a valid wasm module"},
			{"truncated wasm", a[:len(a)/3], "not a valid wasm module"},
			{"asks for ungranted host functions", wasmOf(t, "plugins/examples/tools"), "needs grants"},
		} {
			from := srv.mark()
			swapIn(t, f.plugins, "swap.wasm", bad.data)
			line, _ := srv.waitLog(t, from, notLoaded, 30*time.Second)
			if !strings.Contains(line, "file=swap.wasm") || !strings.Contains(line, bad.err) || !strings.Contains(line, "keeps serving") {
				t.Errorf("%s: refusal logged as: %s", bad.name, line)
			}
			if got := c.echo(t); got != "a:hi" {
				t.Fatalf("%s: echo after a bad replacement: %q", bad.name, got)
			}
		}
		c.noToolsChanged(t)
	})

	t.Run("subscribers of a resource that goes away are told", func(t *testing.T) {
		if err := c.cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: "swap://a"}); err != nil {
			t.Fatal(err)
		}
		swapIn(t, f.plugins, "swap.wasm", b)
		c.waitToolsChanged(t, 30*time.Second)
		select {
		case uri := <-c.updated:
			if uri != "swap://a" {
				t.Fatalf("resources/updated for %q", uri)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no notifications/resources/updated for swap://a, which is gone")
		}
		// The subscription was dropped: a version that has swap://a again
		// and then loses it once more does not notify.
		swapIn(t, f.plugins, "swap.wasm", a)
		c.waitToolsChanged(t, 30*time.Second)
		swapIn(t, f.plugins, "swap.wasm", b)
		c.waitToolsChanged(t, 30*time.Second)
		select {
		case uri := <-c.updated:
			t.Fatalf("resources/updated for %q after the subscription was dropped", uri)
		case <-time.After(200 * time.Millisecond):
		}
	})

	t.Run("removal drops the tools", func(t *testing.T) {
		from := srv.mark()
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		c.waitToolsChanged(t, 30*time.Second)
		if names := c.toolNames(t); len(names) != 0 {
			t.Fatalf("tools after removal: %v", names)
		}
		if _, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo"}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
			t.Fatalf("echo after removal: %v", err)
		}
		srv.waitLog(t, from, regexp.MustCompile(`msg="plugin swapped" plugin=swap change=removed file=swap.wasm old_sha256=[0-9a-f]{64} new_sha256=""`), 10*time.Second)
		// Editors' files in the folder are not plugins.
		for _, junk := range []string{"swap.wasm~", ".swap.wasm.swp", "swap.wasm.tmp", ".hidden.wasm"} {
			if err := os.WriteFile(filepath.Join(f.plugins, junk), a, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(600 * time.Millisecond) // kept: a window in which the watcher must not load them
		c.noToolsChanged(t)
		if names := c.toolNames(t); len(names) != 0 {
			t.Fatalf("tools from editors' files: %v", names)
		}
	})
}

// setConfig rewrites the config file as an editor does, through a
// temporary file renamed over it.
func setConfig(t *testing.T, f fixture, swapSettings string) {
	t.Helper()
	base, err := os.ReadFile(f.config)
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(string(base), "\n[plugins.swap]\n")
	swapIn(t, filepath.Dir(f.config), filepath.Base(f.config), []byte(head+"\n[plugins.swap]\n"+swapSettings))
}

func TestConfigReloadReappliesLimitsAndRejectsInvalidConfig(t *testing.T) {
	f := newFixture(t, "\n[plugins.swap]\ntimeout = \"30s\"\n", "plugins/examples/prompts")
	swapIn(t, f.plugins, "swap.wasm", wasmOf(t, swapA))
	srv := f.serveWatched(t)
	c := connectWatching(t, srv.url)
	slow := func() *mcp.CallToolResult {
		t.Helper()
		res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"millis": 1500}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := slow(); res.IsError {
		t.Fatalf("slow(1.5s) under a 30s timeout: %+v", res)
	}
	reconfigured := regexp.MustCompile(`msg="plugin swapped" plugin=swap change=reconfigured file=swap.wasm old_sha256=([0-9a-f]{64}) new_sha256=([0-9a-f]{64}) took=`)

	from := srv.mark()
	setConfig(t, f, "timeout = \"1s\"\n")
	line, _ := srv.waitLog(t, from, reconfigured, 30*time.Second)
	if m := reconfigured.FindStringSubmatch(line); m[1] != m[2] {
		t.Errorf("a config change changed the module: %s", line)
	}
	if res := slow(); !res.IsError || !strings.Contains(text(t, res.Content), "timeout") {
		t.Fatalf("slow(1.5s) under the new 1s timeout: %+v", res)
	}
	if other := srv.logSince(from, regexp.MustCompile(`msg="plugin (swapped|loaded)" plugin=prompts`)); len(other) > 0 {
		t.Errorf("a plugin whose settings did not change was reloaded:\n%s", strings.Join(other, "\n"))
	}
	c.noToolsChanged(t) // same tools

	from = srv.mark()
	setConfig(t, f, "timeout = \"soon\"\nmax_instances = 0\n")
	line, _ = srv.waitLog(t, from, regexp.MustCompile(`msg="config rejected; the running config stays"`), 30*time.Second)
	if !regexp.MustCompile(`mcphost\.toml:\d+: `).MatchString(line) {
		t.Errorf("the rejection does not give file:line: %s", line)
	}
	time.Sleep(500 * time.Millisecond) // kept: a window in which no plugin may be swapped
	if got := srv.logSince(from, swapLogged); len(got) > 0 {
		t.Fatalf("an invalid config changed plugins:\n%s", strings.Join(got, "\n"))
	}
	if res := slow(); !res.IsError {
		t.Fatalf("the running 1s timeout was lost after an invalid config: %+v", res)
	}

	from = srv.mark()
	setConfig(t, f, "timeout = \"30s\"\n")
	srv.waitLog(t, from, reconfigured, 30*time.Second)
	if res := slow(); res.IsError {
		t.Fatalf("slow(1.5s) once the timeout is 30s again: %+v", res)
	}

	from = srv.mark()
	setConfig(t, f, "disabled = true\n")
	srv.waitLog(t, from, regexp.MustCompile(`msg="plugin swapped" plugin=swap change=removed .*reason="disabled by config"`), 30*time.Second)
	c.waitToolsChanged(t, 10*time.Second)
	if names := c.toolNames(t); slices.Contains(names, "echo") {
		t.Fatalf("tools of a disabled plugin: %v", names)
	}
}

func TestSIGHUPReloadsTheConfigWithoutWatching(t *testing.T) {
	f := newFixture(t, "\n[plugins.swap]\ntimeout = \"30s\"\n")
	swapIn(t, f.plugins, "swap.wasm", wasmOf(t, swapA))
	srv := f.serveWatched(t, "--watch=false")
	c := connectWatching(t, srv.url)
	if srv.logSince(0, regexp.MustCompile(`watching for plugin`)) != nil {
		t.Fatal("--watch=false still watches")
	}
	from := srv.mark()
	setConfig(t, f, "timeout = \"1s\"\n")
	swapIn(t, f.plugins, "swap.wasm", wasmOf(t, swapB))
	time.Sleep(time.Second) // kept: a window in which nothing may be swapped without watching
	if got := srv.logSince(from, swapLogged); len(got) > 0 {
		t.Fatalf("--watch=false swapped:\n%s", strings.Join(got, "\n"))
	}
	if got := c.echo(t); got != "a:hi" {
		t.Fatalf("echo: %q", got)
	}
	if err := srv.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	srv.waitLog(t, from, regexp.MustCompile(`msg="plugin swapped" plugin=swap change=replaced`), 30*time.Second)
	c.waitToolsChanged(t, 10*time.Second)
	if got := c.echo(t); got != "b:hi" {
		t.Fatalf("echo after SIGHUP: %q", got)
	}
	res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"millis": 1500}})
	if err != nil || !res.IsError {
		t.Fatalf("slow(1.5s) after SIGHUP applied a 1s timeout: %v %+v", err, res)
	}
}

// TestHotSwapLatency measures the time from the rename of a new build over
// a plugin file to the arrival of notifications/tools/list_changed at a
// client, for a Go-built plugin and a Rust-built one.
func TestHotSwapLatency(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED in -short")
	}
	const swaps = 20
	measure := func(t *testing.T, kind, extra string, measured, other []byte) {
		f := newFixture(t, extra)
		swapIn(t, f.plugins, "swap.wasm", other)
		srv := f.serveWatched(t)
		c := connectWatching(t, srv.url)
		var latencies []time.Duration
		for i := range 2 * swaps {
			in := other
			if i%2 == 0 {
				in = measured
			}
			c.drain()
			renamed := time.Now()
			swapIn(t, f.plugins, "swap.wasm", in)
			at := c.waitToolsChanged(t, 30*time.Second)
			if i%2 == 0 {
				latencies = append(latencies, at.Sub(renamed))
			}
		}
		t.Logf("%s plugin: rename to tools/list_changed: median %v (min %v, max %v) over %d swaps", kind,
			median(latencies).Round(time.Millisecond), slices.Min(latencies).Round(time.Millisecond),
			slices.Max(latencies).Round(time.Millisecond), swaps)
	}
	t.Run("go", func(t *testing.T) {
		measure(t, "Go-built", "", wasmOf(t, swapB), wasmOf(t, swapA))
	})
	t.Run("rust", func(t *testing.T) {
		root, err := plugintest.ModuleRoot()
		if err != nil {
			t.Fatal(err)
		}
		crate := filepath.Join(root, "plugins", "examples", "textkit")
		script := filepath.Join(root, "pdk", "rust", "build-plugin.sh")
		if _, err := os.Stat(filepath.Join(crate, "Cargo.toml")); err != nil {
			t.Fatalf("no Rust example plugin: %v", err)
		}
		if _, err := os.Stat(script); err != nil {
			t.Fatalf("no pdk/rust/build-plugin.sh: %v", err)
		}
		check := exec.Command(script, "--check")
		check.Dir = root
		if err := check.Run(); err != nil {
			testenv.Missing(t, "no Rust toolchain for WebAssembly (scripts/setup-rust.sh installs it): %v", err)
		}
		out := filepath.Join(t.TempDir(), "textkit.wasm")
		cmd := exec.Command(script, crate, out)
		cmd.Dir = root
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building the Rust plugin: %v\n%s", err, msg)
		}
		rust, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		grants := "\n[plugins.swap]\nhost_functions = [\"notify_logging_message\", \"notify_progress\", \"create_message\"]\n"
		measure(t, "Rust-built", grants, rust, wasmOf(t, swapA))
	})
}
