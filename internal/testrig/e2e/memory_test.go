package e2e

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/abi"
)

// The memory bound of RATIONALE.md ("What bounds the server's memory?"),
// asserted: memory attacks by the greedy test plugin and a table bomb, run
// against a server with tight limits, must keep its peak resident memory
// within the baseline plus the formula, and the healthy plugin must answer
// after each.

const mib = 1 << 20

// instanceMiB is what one instance may hold, by the formula: its two
// linear memories (the plugin's and the Extism kernel's), and with the
// collector's headroom (×2) its tables at their maximum counted twice (8
// bytes an element), the module's size, its variables (1 MiB), 24 times
// max_output_bytes and, if granted HTTP, twice the largest response body
// (16 MiB).
func instanceMiB(memoryMiB, maxOutputBytes, moduleBytes, tableElements int, http bool) int {
	heap := 2*8*tableElements + moduleBytes + mib + 24*maxOutputBytes
	if http {
		heap += 2 * 16 * mib
	}
	return 2*memoryMiB + (2*heap+mib-1)/mib
}

// codeMiB is what the budget reserves for the compiled code of a module of
// moduleBytes bytes, by sandbox's codeFactor (8), rounded up.
func codeMiB(moduleBytes int) int { return (8*moduleBytes + mib - 1) / mib }

// goTableElements is the table of a plugin built by Go: without a maximum,
// so capped at 2^20 elements.
const goTableElements = 1 << 20

// requestMiB is what one client request in flight may hold outside the
// budget, by the formula: its body and its result being encoded, with the
// collector's headroom.
func requestMiB(maxBodyBytes, maxOutputBytes int) int {
	return (2*(maxBodyBytes+24*maxOutputBytes) + mib - 1) / mib
}

// memoryBoundMiB is the formula: the budget (or what the plugins'
// instances may hold, if less), the requests in flight, and the
// collector's headroom over the server's own heap, which is at most its
// baseline.
func memoryBoundMiB(baselineMiB, budgetMiB, instancesMiB, requests, perRequestMiB int) int {
	return baselineMiB + min(budgetMiB, instancesMiB) + requests*perRequestMiB
}

// withMemoryBudget sets [server] memory_budget_mib in f's config.
func withMemoryBudget(t *testing.T, f fixture, budgetMiB int) {
	t.Helper()
	cfg, err := os.ReadFile(f.config)
	if err != nil {
		t.Fatal(err)
	}
	cfg = []byte(strings.Replace(string(cfg), "[server]\n", fmt.Sprintf("[server]\nmemory_budget_mib = %d\n", budgetMiB), 1))
	if err := os.WriteFile(f.config, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
}

// fileSize returns the size of a plugin file of f.
func fileSize(t *testing.T, f fixture, name string) int {
	t.Helper()
	st, err := os.Stat(filepath.Join(f.plugins, name+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return int(st.Size())
}

// procStatusKiB reads a field of /proc/PID/status, in KiB.
func procStatusKiB(t testing.TB, pid int, field string) int {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("SKIPPED: no /proc to measure memory: %v", err)
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc status", field)
	return 0
}

// resetPeak makes the server's peak resident memory (VmHWM) its current
// one, so that the next reading is the peak of what comes between. It
// reports whether the kernel allowed it; if not, the peak is that of the
// server's whole life.
func resetPeak(pid int) bool {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) == nil
}

// tableBombPlugin is a plugin, assembled by hand, with four tables without
// a maximum (so each capped at 2^20 elements). Its list_tools lists
// table_bomb; its call_tool grows every table by 2^20 elements, each a
// reference to list_tools (8 MiB written a table, where the cap allows),
// and returns 1.
func tableBombPlugin() []byte {
	const tools = `{"tools":[{"name":"table_bomb","inputSchema":{"type":"object"}}]}`
	leb := func(v uint64) []byte {
		var b []byte
		for {
			c := byte(v & 0x7f)
			if v >>= 7; v == 0 {
				return append(b, c)
			}
			b = append(b, c|0x80)
		}
	}
	sleb := func(v int64) []byte {
		var b []byte
		for {
			c := byte(v & 0x7f)
			v >>= 7
			if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
				return append(b, c)
			}
			b = append(b, c|0x80)
		}
	}
	name := func(s string) []byte { return append(leb(uint64(len(s))), s...) }
	vec := func(items ...[]byte) []byte {
		return slices.Concat(append([][]byte{leb(uint64(len(items)))}, items...)...)
	}
	section := func(id byte, body []byte) []byte { return slices.Concat([]byte{id}, leb(uint64(len(body))), body) }
	body := func(code ...[]byte) []byte { c := slices.Concat(code...); return append(leb(uint64(len(c))), c...) }
	n := int64(len(tools))

	listTools := body(
		[]byte{0x02, 0x01, 0x7e, 0x01, 0x7f},                  // locals: offset i64, i i32
		[]byte{0x42}, sleb(n), []byte{0x10, 0x00, 0x21, 0x00}, // offset = alloc(n)
		[]byte{0x02, 0x40, 0x03, 0x40},                              // block loop
		[]byte{0x20, 0x01, 0x41}, sleb(n), []byte{0x4f, 0x0d, 0x01}, // br_if i >= n
		[]byte{0x20, 0x00, 0x20, 0x01, 0xad, 0x7c},                   // offset + i
		[]byte{0x20, 0x01, 0x2d, 0x00, 0x00, 0x10, 0x01},             // store_u8(offset+i, memory[i])
		[]byte{0x20, 0x01, 0x41, 0x01, 0x6a, 0x21, 0x01, 0x0c, 0x00}, // i++; br loop
		[]byte{0x0b, 0x0b},                                    // end loop block
		[]byte{0x20, 0x00, 0x42}, sleb(n), []byte{0x10, 0x02}, // output_set(offset, n)
		[]byte{0x41, 0x00, 0x0b}, // return 0
	)
	var grow []byte
	for table := range byte(4) {
		grow = slices.Concat(grow, []byte{0xd2, 0x03, 0x41}, sleb(1<<20), []byte{0xfc, 0x0f, table, 0x1a})
	}
	callTool := body([]byte{0x00}, grow, []byte{0x41, 0x01, 0x0b})

	funcref := []byte{0x70, 0x00, 0x00} // at least 0 elements, no maximum
	return slices.Concat(
		[]byte("\x00asm\x01\x00\x00\x00"),
		section(1, vec(
			[]byte{0x60, 0x00, 0x01, 0x7f},       // 0: () -> i32
			[]byte{0x60, 0x01, 0x7e, 0x01, 0x7e}, // 1: alloc (i64) -> i64
			[]byte{0x60, 0x02, 0x7e, 0x7f, 0x00}, // 2: store_u8 (i64, i32)
			[]byte{0x60, 0x02, 0x7e, 0x7e, 0x00}, // 3: output_set (i64, i64)
		)),
		section(2, vec(
			slices.Concat(name("extism:host/env"), name("alloc"), []byte{0x00, 0x01}),
			slices.Concat(name("extism:host/env"), name("store_u8"), []byte{0x00, 0x02}),
			slices.Concat(name("extism:host/env"), name("output_set"), []byte{0x00, 0x03}),
		)),
		section(3, vec([]byte{0x00}, []byte{0x00})),
		section(4, vec(funcref, funcref, funcref, funcref)),
		section(5, vec([]byte{0x01, 0x01, 0x01})), // one page
		section(7, vec(
			slices.Concat(name("list_tools"), []byte{0x00, 0x03}),
			slices.Concat(name("call_tool"), []byte{0x00, 0x04}),
		)),
		section(10, vec(listTools, callTool)),
		section(11, vec(slices.Concat([]byte{0x00, 0x41, 0x00, 0x0b}, name(tools)))),
	)
}

// memoryAttack is a tool call that tries to make the server hold memory,
// and what its result must contain.
type memoryAttack struct {
	name  string
	tool  string
	args  map[string]any
	want  string
	isErr bool
}

// TestMemoryAttacksStayWithinTheBound runs each memory attack alone and
// four at once against a server with memory_mib = 16, max_instances = 2,
// max_output_bytes = 1 MiB and a budget of 384 MiB, and checks each call's
// result, the healthy plugin's answer right after, and the server's peak
// resident memory against the formula.
func TestMemoryAttacksStayWithinTheBound(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") }))
	defer target.Close()
	_, port, _ := net.SplitHostPort(target.Listener.Addr().String())

	const (
		memoryMiB    = 16
		instances    = 2
		maxOutput    = 1 << 20
		maxBody      = 64 << 10
		budgetMiB    = 384
		bigBlock     = 12 << 20 // fits in the kernel's 16 MiB
		nearMaxBlock = maxOutput - 256
	)
	f := newFixture(t, fmt.Sprintf(`
[defaults]
memory_mib = %d
max_instances = %d
max_output_bytes = %d
breaker_failures = 0

[http]
max_body_bytes = %d

[plugins.greedy]
timeout = "20s"
host_functions = ["notify_logging_message"]
allowed_hosts = ["127.0.0.1:%s"]
`, memoryMiB, instances, maxOutput, maxBody, port), "internal/testrig/testplugins/greedy", "plugins/examples/tools")
	if err := os.WriteFile(filepath.Join(f.plugins, "tables.wasm"), tableBombPlugin(), 0o644); err != nil {
		t.Fatal(err)
	}
	withMemoryBudget(t, f, budgetMiB)
	instancesMiB := instances * (instanceMiB(memoryMiB, maxOutput, fileSize(t, f, "greedy"), goTableElements, true) +
		instanceMiB(memoryMiB, maxOutput, fileSize(t, f, "tools"), goTableElements, false) +
		instanceMiB(memoryMiB, maxOutput, fileSize(t, f, "tables"), 4<<20, false))

	srv := f.start(t)
	ctx := ctxT(t)
	sessions := make([]*mcp.ClientSession, 4)
	for i := range sessions {
		sessions[i] = srv.session(t, nil)
		if got, _, err := hostileCall(ctx, sessions[i], "ok", nil); err != nil || got != "ok" {
			t.Fatalf("greedy before the attacks: %v %q", err, got)
		}
	}
	healthy := srv.session(t, nil)
	if _, isErr, err := hostileCall(ctx, healthy, "hash", map[string]any{"text": "abc"}); err != nil || isErr {
		t.Fatalf("healthy plugin before the attacks: %v", err)
	}
	baseline := procStatusKiB(t, srv.pid, "VmRSS") >> 10

	attacks := []memoryAttack{
		{"memory grow bomb", "grow", nil, "plugin greedy: plugin ran out of memory: all 16 MiB of its memory were in use", true},
		{"kernel alloc flood", "alloc_flood", nil, "kernel memory exhausted after 15 MiB", true},
		{"table bomb", "table_bomb", nil, "call_tool returned 1 without an error message", true},
		{"12 MiB error_set", "error_set", map[string]any{"bytes": bigBlock},
			fmt.Sprintf("… [error truncated: %d bytes over the limit of %d (max_output_bytes)]", bigBlock-maxOutput, maxOutput), true},
		{"10 × 12 MiB log", "log", map[string]any{"bytes": bigBlock, "n": 10}, "ok", false},
		{"12 MiB config_get key", "config_get", map[string]any{"bytes": bigBlock}, "config_get: key of 12582912 bytes exceeds the limit of 4096", true},
		{"12 MiB var_set value", "var_set", map[string]any{"bytes": bigBlock}, "var_set: variable store is full", true},
		{"5 × 1 MiB notify_logging_message of '<'", "notify", map[string]any{"bytes": nearMaxBlock, "n": 5, "fill": "<"}, "ok", false},
		{"1 MiB output of '<'", "output", map[string]any{"bytes": nearMaxBlock, "fill": "<"}, strings.Repeat("<", nearMaxBlock), false},
		{"5 × 1 MiB http_request headers", "http_headers", map[string]any{"bytes": nearMaxBlock, "n": 5, "url": target.URL}, "ok", false},
	}
	for _, a := range attacks {
		for _, concurrency := range []int{1, 4} {
			t.Run(fmt.Sprintf("%s ×%d", a.name, concurrency), func(t *testing.T) {
				if concurrency > 1 && testing.Short() {
					t.Skip("four at once: not with -short")
				}
				ctx := ctxT(t) // a minute for each attack: the whole suite may take longer
				isolated := resetPeak(srv.pid)
				var wg sync.WaitGroup
				for _, cs := range sessions[:concurrency] {
					wg.Go(func() {
						got, isErr, err := hostileCall(ctx, cs, a.tool, a.args)
						if err != nil || isErr != a.isErr || !strings.Contains(got, a.want) {
							t.Errorf("got err=%v isError=%v %.300q\nwant isError=%v and %.300q", err, isErr, got, a.isErr, a.want)
						}
					})
				}
				wg.Wait()
				if got, isErr, err := hostileCall(ctx, healthy, "hash", map[string]any{"text": "abc"}); err != nil || isErr || !strings.Contains(got, sha256abc) {
					t.Errorf("healthy plugin right after: %v %v %q", err, isErr, got)
				}
				peak := procStatusKiB(t, srv.pid, "VmHWM") >> 10
				bound := memoryBoundMiB(baseline, budgetMiB, instancesMiB, concurrency+1, requestMiB(maxBody, maxOutput))
				t.Logf("peak %d MiB = baseline %d MiB + %d MiB; bound baseline + %d MiB (peak since the previous attack: %v)",
					peak, baseline, peak-baseline, bound, isolated)
				if peak > baseline+bound {
					t.Errorf("peak resident memory %d MiB exceeds baseline %d MiB + bound %d MiB", peak, baseline, bound)
				}
			})
		}
	}
}

// TestMemoryBudgetIsSharedByAllPlugins floods the kernel memory of two
// plugins with three calls each (64 MiB a call) under a budget that holds
// two instances and their code: the calls wait for each other's instances, the peak stays
// within the formula, and while two calls hold the budget a plugin without
// a queue is refused with an error naming memory_budget_mib while the
// healthy plugin waits and answers.
func TestMemoryBudgetIsSharedByAllPlugins(t *testing.T) {
	const (
		memoryMiB = 64
		maxOutput = 64 << 10
		maxBody   = 64 << 10
		budgetMiB = 448
	)
	f := newFixture(t, fmt.Sprintf(`
[defaults]
memory_mib = %d
max_instances = 2
max_output_bytes = %d
breaker_failures = 0

[http]
max_body_bytes = %d

[plugins.greedy3]
max_queue = 0
`, memoryMiB, maxOutput, maxBody), "internal/testrig/testplugins/greedy", "plugins/examples/tools")
	greedy, err := os.ReadFile(filepath.Join(f.plugins, "greedy.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"greedy2", "greedy3"} {
		if err := os.WriteFile(filepath.Join(f.plugins, name+".wasm"), greedy, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	withMemoryBudget(t, f, budgetMiB)
	greedyMiB := instanceMiB(memoryMiB, maxOutput, len(greedy), goTableElements, false)
	greedyCodeMiB := codeMiB(len(greedy)) // the three copies share their code
	if 2*greedyMiB+greedyCodeMiB > budgetMiB || 3*greedyMiB+greedyCodeMiB <= budgetMiB {
		t.Fatalf("an instance reserves %d MiB, the code %d MiB: the budget of %d MiB must hold two instances and the code, not three", greedyMiB, greedyCodeMiB, budgetMiB)
	}

	srv := f.start(t)
	ctx := ctxT(t)
	healthy := srv.session(t, nil)
	if _, isErr, err := hostileCall(ctx, healthy, "hash", map[string]any{"text": "abc"}); err != nil || isErr {
		t.Fatalf("healthy plugin: %v", err)
	}
	var sessions []*mcp.ClientSession
	for range 6 {
		sessions = append(sessions, srv.session(t, nil))
	}
	baseline := procStatusKiB(t, srv.pid, "VmRSS") >> 10
	resetPeak(srv.pid)

	var wg sync.WaitGroup
	for i, cs := range sessions {
		// greedy3's table comes first: it keeps the plain names.
		tool := []string{"greedy_alloc_flood", "greedy2_alloc_flood"}[i%2]
		wg.Go(func() {
			got, isErr, err := hostileCall(ctx, cs, tool, nil)
			if want := "kernel memory exhausted after 63 MiB"; err != nil || !isErr || got != want {
				t.Errorf("%s: got %v %v %q, want the error %q", tool, err, isErr, got, want)
			}
		})
	}
	wg.Wait()
	peak := procStatusKiB(t, srv.pid, "VmHWM") >> 10
	instancesMiB := 3*2*greedyMiB + 2*instanceMiB(memoryMiB, maxOutput, fileSize(t, f, "tools"), goTableElements, false) + greedyCodeMiB + codeMiB(fileSize(t, f, "tools"))
	bound := memoryBoundMiB(baseline, budgetMiB, instancesMiB, len(sessions)+1, requestMiB(maxBody, maxOutput))
	t.Logf("six 64 MiB floods: peak %d MiB = baseline %d MiB + %d MiB; bound baseline + %d MiB", peak, baseline, peak-baseline, bound)
	if peak > baseline+bound {
		t.Errorf("peak resident memory %d MiB exceeds baseline %d MiB + bound %d MiB", peak, baseline, bound)
	}

	// Two calls hold the budget for two seconds.
	from := srv.log.Len()
	for _, cs := range sessions[:2] {
		wg.Go(func() {
			if got, isErr, err := hostileCall(ctx, cs, "greedy_sleep", map[string]any{"n": 2000}); err != nil || isErr {
				t.Errorf("sleep: %v %v %q", err, isErr, got)
			}
		})
	}
	waitStarted(t, srv.log, from, "greedy", "sleep", 2)
	got, isErr, err := hostileCall(ctx, sessions[2], "ok", nil)
	for _, want := range []string{
		fmt.Sprintf("plugin greedy3: plugin busy: memory_budget_mib = %d is spent: a new instance of greedy3 needs", budgetMiB),
		"the rest is held by busy instances and by compiled code in use (plugin, instances, memory): greedy 2 (",
	} {
		if err != nil || !isErr || !strings.Contains(got, want) {
			t.Errorf("a plugin without a queue while the budget is held: got %v %v %q, want an error with %q", err, isErr, got, want)
		}
	}
	if got, isErr, err := hostileCall(ctx, healthy, "hash", map[string]any{"text": "abc"}); err != nil || isErr || !strings.Contains(got, sha256abc) {
		t.Errorf("healthy plugin while the budget is held: %v %v %q", err, isErr, got)
	}
	wg.Wait()
	if got, isErr, err := hostileCall(ctx, sessions[2], "ok", nil); err != nil || isErr || got != "ok" {
		t.Errorf("greedy3 once the budget is free: %v %v %q", err, isErr, got)
	}
}

// TestRoundRobinCallsOverMorePluginsThanTheBudgetHolds serves five
// distinct copies of a Go plugin under a budget with room for the compiled
// code of two and one instance: round-robin calls over all five all
// succeed, each plugin unloaded to make room and built again from the
// compilation cache when called again.
func TestRoundRobinCallsOverMorePluginsThanTheBudgetHolds(t *testing.T) {
	const (
		copies    = 5
		memoryMiB = 16
		maxOutput = 64 << 10
	)
	extra := fmt.Sprintf("[defaults]\nmemory_mib = %d\nmax_output_bytes = %d\n", memoryMiB, maxOutput)
	for i := 2; i <= copies; i++ {
		extra += fmt.Sprintf("[plugins.tools%d]\nhost_functions = [\"notify_progress\"]\n", i) // as the fixture grants tools
	}
	f := newFixture(t, extra, "plugins/examples/tools")
	tools, err := os.ReadFile(filepath.Join(f.plugins, "tools.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 2; i <= copies; i++ {
		distinct := abi.AppendCustomSection(tools, "mcphost-e2e-copy", []byte{byte(i)})
		if err := os.WriteFile(filepath.Join(f.plugins, fmt.Sprintf("tools%d.wasm", i)), distinct, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code := codeMiB(len(tools))
	instance := instanceMiB(memoryMiB, maxOutput, len(tools), goTableElements, false)
	budgetMiB := 2*code + instance + code/2
	withMemoryBudget(t, f, budgetMiB)

	srv := f.start(t)
	ctx := ctxT(t)
	cs := srv.session(t, nil)
	var hashes []string
	for _, name := range toolNames(t, cs) {
		if strings.HasSuffix(name, "hash") {
			hashes = append(hashes, name)
		}
	}
	if len(hashes) != copies {
		t.Fatalf("hash tools %q, want one for each of %d copies; the log:\n%s", hashes, copies, srv.log.String())
	}
	for round := range 2 {
		for _, tool := range hashes {
			got, isErr, err := hostileCall(ctx, cs, tool, map[string]any{"text": "abc"})
			if err != nil || isErr || !strings.Contains(got, sha256abc) {
				t.Fatalf("round %d, %s: %v %v %q", round, tool, err, isErr, got)
			}
		}
	}
	if n := strings.Count(srv.log.String(), "plugin unloaded to make room in memory_budget_mib"); n < copies {
		t.Errorf("%d plugins unloaded to make room in %d calls over %d plugins with room for 2; the log:\n%s", n, 2*copies, copies, srv.log.String())
	}
}
