package e2e

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/mcphost/mcphost/internal/testrig/poll"
)

// Start-up is never hostage to one plugin: plugins load concurrently, the
// server answers while some still load, and each plugin's load (its first
// instance and its lists) has a budget, load_budget.

// startLoop is a plugin, assembled by hand, whose wasm start function,
// run when an instance is made, never returns.
var startLoop = []byte{
	0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00,
	0x01, 0x08, 0x02, 0x60, 0x00, 0x01, 0x7f, 0x60, 0x00, 0x00, // types: () -> i32, () -> ()
	0x03, 0x03, 0x02, 0x00, 0x01, // functions 0 and 1
	0x07, 0x0e, 0x01, 0x0a, 'l', 'i', 's', 't', '_', 't', 'o', 'o', 'l', 's', 0x00, 0x00, // export list_tools
	0x08, 0x01, 0x01, // start: function 1
	0x0a, 0x0e, 0x02,
	0x04, 0x00, 0x41, 0x00, 0x0b, // function 0: i32.const 0
	0x07, 0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b, // function 1: loop br 0 end
}

// initLoop is a plugin, assembled by hand, whose _initialize export, which
// Extism runs before the first call of an instance, never returns.
var initLoop = []byte{
	0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00,
	0x01, 0x08, 0x02, 0x60, 0x00, 0x01, 0x7f, 0x60, 0x00, 0x00, // types: () -> i32, () -> ()
	0x03, 0x03, 0x02, 0x00, 0x01, // functions 0 and 1
	0x07, 0x1c, 0x02, // exports:
	0x0a, 'l', 'i', 's', 't', '_', 't', 'o', 'o', 'l', 's', 0x00, 0x00, // list_tools: function 0
	0x0b, '_', 'i', 'n', 'i', 't', 'i', 'a', 'l', 'i', 'z', 'e', 0x00, 0x01, // _initialize: function 1
	0x0a, 0x0e, 0x02,
	0x04, 0x00, 0x41, 0x00, 0x0b, // function 0: i32.const 0
	0x07, 0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b, // function 1: loop br 0 end
}

// listLoop is a plugin, assembled by hand, whose list_tools never returns.
var listLoop = []byte{
	0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00,
	0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f, // types: () -> i32
	0x03, 0x02, 0x01, 0x00, // function 0
	0x07, 0x0e, 0x01, 0x0a, 'l', 'i', 's', 't', '_', 't', 'o', 'o', 'l', 's', 0x00, 0x00, // export list_tools
	0x0a, 0x0a, 0x01, 0x08, 0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x00, 0x0b, // loop br 0 end; unreachable
}

// invalidLoop is R1 of issue 23: a list_tools whose loop sets a global the
// module does not have, which the countdown's rewrite would have made its
// own (global 0) and refilled at every iteration. It is invalid, and
// refused as such before any rewrite.
var invalidLoop = []byte{
	0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00,
	0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f, // types: () -> i32
	0x03, 0x02, 0x01, 0x00, // function 0
	0x05, 0x03, 0x01, 0x00, 0x01, // a memory of one page
	0x07, 0x0e, 0x01, 0x0a, 'l', 'i', 's', 't', '_', 't', 'o', 'o', 'l', 's', 0x00, 0x00, // export list_tools
	0x0a, 0x12, 0x01, 0x10, 0x00, 0x03, 0x40, // loop
	0x41, 0xff, 0xff, 0xff, 0xff, 0x07, 0x24, 0x00, // i32.const 0x7fffffff; global.set 0
	0x0c, 0x00, 0x0b, 0x00, 0x0b, // br 0; end; unreachable
}

// startupConfig is the [plugins] part of the start-up tests' config: the
// list bomb lists 100 pages of 1,000 tools, the slow list 100 pages of one
// tool, each after 900 ms.
const startupConfig = `
[plugins.listbomb]
config = { pages = "100", per_page = "1000" }
[plugins.slowlist]
config = { pages = "100", delay_ms = "900" }
`

// startupFixture is a plugins folder with the healthy tools example and a
// list bomb, a slow list, an _initialize, a start function and a
// list_tools that never return (one of them sleeping in WASI's poll_oneoff
// through a table), an invalid module that would have looped with its
// countdown refilled, and the two compile bombs of issue 12;
// startup_wait is left at its default.
func startupFixture(t testing.TB) fixture {
	t.Helper()
	f := newFixture(t, startupConfig, "plugins/examples/tools")
	lister, err := os.ReadFile(plugintest.Build(t, "internal/testrig/testplugins/lister"))
	if err != nil {
		t.Fatal(err)
	}
	for name, wasm := range map[string][]byte{
		"listbomb": lister, "slowlist": lister, "initloop": initLoop, "startloop": startLoop,
		"listloop": listLoop, "invalidloop": invalidLoop, "listsleeper": plugintest.PollSleeper("list_tools", true),
		"nestedblocks": plugintest.NestedBlocksBomb(), "brtables": plugintest.BrTablesBomb(),
	} {
		if err := os.WriteFile(filepath.Join(f.plugins, name+".wasm"), wasm, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	useDefaultStartupWait(t, f)
	// Three of the plugins the config names fail to load: serve the rest.
	addServerKey(t, f, `on_load_error = "skip"`)
	return f
}

// TestStartupIsNotHostageToOnePlugin serves the healthy tools example
// beside a list bomb, a slow list, an init loop, a start-function loop and
// two compile bombs (refused before compiling: TestCompileBombsAreRefused).
// The healthy plugin answers while the others still load (its compiled
// code cached, as on any start but the first; BenchmarkStartup/hostile
// measures how soon); each hostile plugin is cut at its load budget, and
// fails to load with an error that names load_budget, or, the list bomb,
// loads capped at 10,000 tools; and /readyz counts the plugins still
// loading, then says that all are done, counting those ready and failed.
func TestStartupIsNotHostageToOnePlugin(t *testing.T) {
	f := startupFixture(t)
	// Compile everything once, so that the timed start finds it cached.
	warm := f.start(t)
	poll.Until(t, 60*time.Second, "the first start to load every plugin", func() bool {
		return readyz(t, warm).code == http.StatusOK
	})
	warm.stop(t)

	started := time.Now()
	srv := f.start(t)
	if ready := readyz(t, srv); ready.code != http.StatusServiceUnavailable || ready.counts(t).Plugins["loading"] == 0 {
		t.Errorf("/readyz while plugins load: %d %s, want 503 counting plugins loading", ready.code, ready.body)
	}
	for _, path := range []string{"/livez", "/healthz"} {
		if code, body := getPath(t, srv, path); code != http.StatusOK || body != "ok\n" {
			t.Errorf("%s while plugins load: %d %q, want 200 ok: a liveness probe must not fail for a slow load", path, code, body)
		}
	}
	// mcphost healthcheck, a container's HEALTHCHECK, says the same;
	// with --ready it asks /readyz, which still answers 503.
	base := strings.TrimSuffix(srv.url, "/mcp")
	if out, err := exec.Command(mcphostBin, "healthcheck", "--url", base).CombinedOutput(); err != nil {
		t.Errorf("mcphost healthcheck while plugins load: %v\n%s", err, out)
	}
	if out, err := exec.Command(mcphostBin, "healthcheck", "--ready", "--url", base).CombinedOutput(); err == nil || !strings.Contains(string(out), "503") {
		t.Errorf("mcphost healthcheck --ready while plugins load: %v\n%s; want it to fail naming the 503", err, out)
	}
	cs := srv.session(t, nil)
	got, isErr, err := hostileCall(ctxT(t), cs, "hash", map[string]any{"text": "abc"})
	took := time.Since(started)
	if err != nil || isErr || !strings.Contains(got, sha256abc) {
		t.Fatalf("healthy plugin while the others load: %v %v %q", err, isErr, got)
	}
	t.Logf("the healthy plugin answered %v after the server started", took.Round(time.Millisecond))
	if r := readyz(t, srv); r.code != http.StatusServiceUnavailable || r.counts(t).Plugins["loading"] == 0 {
		t.Errorf("the healthy plugin answered only once the others were done: /readyz %d %s", r.code, r.body)
	}

	// The default load budget is 5s: every hostile plugin is done within it
	// (and some slack for a loaded machine).
	poll.Until(t, 15*time.Second, "every plugin loaded or failed", func() bool {
		return readyz(t, srv).code == http.StatusOK
	})
	// The server's log reaches the test through a pipe, a moment after
	// /readyz may have said that all are done: wait for its last lines.
	var log string
	budgeted := []string{"slowlist", "initloop", "startloop", "listloop", "listsleeper"}
	poll.Within(5*time.Second, func() bool {
		log = srv.log.String()
		return !slices.ContainsFunc(budgeted, func(name string) bool { return !logHas(log, "plugin not loaded", "plugin="+name) })
	})
	for _, name := range budgeted {
		if !logHas(log, "plugin not loaded", "plugin="+name, "load_budget") {
			t.Errorf("no load failure naming load_budget for %s in:\n%s", name, log)
		}
	}
	if !logHas(log, "plugin not loaded", "plugin=invalidloop", "invalid module", "invalid global index") {
		t.Errorf("no load failure saying that invalidloop is an invalid module, and why, in:\n%s", log)
	}
	if !logHas(log, "plugin loaded", "plugin=listbomb") {
		t.Errorf("the list bomb, capped, did not load:\n%s", log)
	}
	if got, isErr, err := hostileCall(ctxT(t), cs, "hash", map[string]any{"text": "abc"}); err != nil || isErr || !strings.Contains(got, sha256abc) {
		t.Errorf("healthy plugin after the others loaded: %v %v %q", err, isErr, got)
	}
	t.Logf("the server's peak RSS: %d MiB", procStatusKiB(t, srv.pid, "VmHWM")>>10)
	want := map[string]int{"ready": 2, "failed": 8}
	if r := readyz(t, srv).counts(t); !r.Ready || !maps.Equal(r.Plugins, want) {
		t.Errorf("/readyz once loaded: %+v, want ready with %v", r, want)
	}
}

// TestReadyzCountsPluginsWithoutNamingThem: /readyz, which answers
// without authentication, gives the overall state and the number of
// plugins in each state, and names no plugin; the log, the operator's,
// names the plugin that failed.
func TestReadyzCountsPluginsWithoutNamingThem(t *testing.T) {
	f := newFixture(t, "[plugins.broken]\n", "plugins/examples/tools")
	addServerKey(t, f, `on_load_error = "skip"`)
	writePlugin(t, f, "broken.wasm", notWasm)
	srv := f.start(t)
	poll.Until(t, 15*time.Second, "the load to end", func() bool { return readyz(t, srv).code == http.StatusOK })
	if r := readyz(t, srv); r.body != `{"ready":true,"plugins":{"failed":1,"ready":1}}`+"\n" {
		t.Errorf("/readyz once loaded: %s, want the overall state and a count per state, naming no plugin", r.body)
	}
	if !logHas(srv.log.String(), "plugin not loaded", "plugin=broken") {
		t.Errorf("the log does not name the plugin that failed:\n%s", srv.log.String())
	}
}

// useDefaultStartupWait drops the fixture's startup_wait, which makes the
// other tests' servers wait for every plugin before answering initialize.
func useDefaultStartupWait(t testing.TB, f fixture) {
	t.Helper()
	cfg, err := os.ReadFile(f.config)
	if err != nil {
		t.Fatal(err)
	}
	without := strings.Replace(string(cfg), fixtureStartupWait, "", 1)
	if err := os.WriteFile(f.config, []byte(without), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readyzResponse is an answer of /readyz.
type readyzResponse struct {
	code int
	body string
}

// readyzCounts is the body of /readyz: the overall state and the number of
// plugins in each state.
type readyzCounts struct {
	Ready   bool           `json:"ready"`
	Plugins map[string]int `json:"plugins"`
}

// counts decodes the body.
func (r readyzResponse) counts(t *testing.T) readyzCounts {
	t.Helper()
	var c readyzCounts
	if err := json.Unmarshal([]byte(r.body), &c); err != nil {
		t.Fatalf("/readyz %d %s: %v", r.code, r.body, err)
	}
	return c
}

// getPath GETs path of s's HTTP server, with no token, and returns the
// status and body.
func getPath(t *testing.T, s *server, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(strings.TrimSuffix(s.url, "/mcp") + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

func readyz(t *testing.T, s *server) readyzResponse {
	t.Helper()
	code, body := getPath(t, s, "/readyz")
	return readyzResponse{code, body}
}

// logHas reports whether one line of log has every one of parts.
func logHas(log string, parts ...string) bool {
	for line := range strings.Lines(log) {
		if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(line, p) }) {
			return true
		}
	}
	return false
}

// fixtureStartupWait makes the fixtures' servers answer initialize only
// once every plugin has loaded or failed, so that the tests see whole
// lists from their first request.
const fixtureStartupWait = "startup_wait = \"60s\"\n"
