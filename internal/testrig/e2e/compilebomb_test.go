package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/mcphost/mcphost/internal/testrig/poll"
)

// TestCompileBombsAreRefused serves the two compile bombs of issue 12 (300
// KB of nested blocks, which held the server 53 s, and a megabyte of
// br_tables, which held it minutes and took gigabytes) beside a healthy
// plugin: both are refused at load, naming the cap they exceed; the
// healthy plugin answers; and within 5 s of the refusals the server uses
// no more CPU or memory, as no compile goes on in the background.
func TestCompileBombsAreRefused(t *testing.T) {
	f := newFixture(t, "", "plugins/examples/tools")
	for name, wasm := range map[string][]byte{
		"nested.wasm":   plugintest.NestedBlocksBomb(),
		"brtables.wasm": plugintest.BrTablesBomb(),
	} {
		if err := os.WriteFile(filepath.Join(f.plugins, name), wasm, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	started := time.Now()
	srv := f.start(t)
	for _, name := range []string{"nested.wasm", "brtables.wasm"} {
		want := name + ": sandbox: load " + strings.TrimSuffix(name, ".wasm") + ": function 0 is too costly to compile"
		if !poll.Within(10*time.Second, func() bool { return strings.Contains(srv.log.String(), want) }) {
			t.Fatalf("no refusal %q within 10s; server log:\n%s", want, srv.log)
		}
	}
	refused := time.Now()
	ctx := ctxT(t)
	if got, isErr, err := hostileCall(ctx, srv.session(t, nil), "hash", map[string]any{"text": "abc"}); err != nil || isErr || !strings.Contains(got, sha256abc) {
		t.Errorf("healthy plugin beside the compile bombs: %v %v %q", err, isErr, got)
	}
	// The example's compile is cached by the fixture's cache_dir, so the
	// server listens in a few seconds, not in the minutes of the bombs.
	if took := time.Since(started); took > 30*time.Second {
		t.Errorf("the healthy plugin answered %v after the server started", took.Round(time.Second))
	}

	time.Sleep(time.Until(refused.Add(5 * time.Second))) // kept: the server is measured idle from 5 s after the refusals
	cpu, rss := cpuTicks(t, srv.pid), rssKiB(t, srv.pid)
	time.Sleep(time.Second) // kept: the one-second window of the measurement
	cpu2, rss2 := cpuTicks(t, srv.pid), rssKiB(t, srv.pid)
	used := (cpu2 - cpu) * 10 // ms: a clock tick is 10 ms
	t.Logf("5 s after the refusals: %d ms of CPU in a second, RSS %d → %d MiB", used, rss>>10, rss2>>10)
	if used > 100 {
		t.Errorf("5 s after the refusals the idle server still used %d ms of CPU in a second", used)
	}
	if grew := (rss2 - rss) >> 10; grew > 8 {
		t.Errorf("5 s after the refusals the idle server's RSS still grew by %d MiB in a second", grew)
	}
	if rss2>>10 > 512 {
		t.Errorf("the server holds %d MiB", rss2>>10)
	}
}

// cpuTicks returns the CPU time process pid has used, user and system, in
// clock ticks (1/100 s on Linux).
func cpuTicks(t testing.TB, pid int) int64 {
	t.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Skipf("SKIPPED: no /proc to measure CPU time: %v", err)
	}
	// The fields after the command name, which is in parentheses and may
	// hold spaces: state is the first, utime and stime the 12th and 13th.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	var ticks int64
	for _, f := range fields[11:13] {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			t.Fatalf("/proc/%d/stat: %v", pid, err)
		}
		ticks += n
	}
	return ticks
}
