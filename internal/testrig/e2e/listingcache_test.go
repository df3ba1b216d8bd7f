package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/mcphost/mcphost/internal/testrig/syncbuf"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAWarmStartListsFromTheCacheAndCompilesOnTheFirstCall runs serve
// twice on one cache directory: the first start lists the plugin on the
// interpreter; the second lists it from the listing cache, says so, and
// lists exactly what the first did; each compiles it only for the first
// call, which answers the same.
func TestAWarmStartListsFromTheCacheAndCompilesOnTheFirstCall(t *testing.T) {
	f := newFixture(t, "", sameGo)
	cfg, err := os.ReadFile(f.config)
	if err != nil {
		t.Fatal(err)
	}
	// A cache of its own, so that no other test's start warms it.
	own := strings.Replace(string(cfg), filepath.Join(os.TempDir(), "mcphost-e2e-cache"), filepath.Join(t.TempDir(), "cache"), 1)
	if own == string(cfg) {
		t.Fatal("the fixture's config names no cache_dir to replace")
	}
	if err := os.WriteFile(f.config, []byte(own), 0o644); err != nil {
		t.Fatal(err)
	}
	start := func() (log *syncbuf.Buffer, tools, call string) {
		t.Helper()
		log = &syncbuf.Buffer{}
		f.stderr = log
		cs := f.connect(t, "2025-11-25", nil)
		defer cs.Close()
		list, err := cs.ListTools(context.Background(), &mcp.ListToolsParams{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "wordcount", Arguments: map[string]any{"text": "one two"}})
		if err != nil {
			t.Fatal(err)
		}
		rawList, _ := json.Marshal(list.Tools)
		rawRes, _ := json.Marshal(res)
		return log, string(rawList), string(rawRes)
	}
	coldLog, coldTools, coldCall := start()
	if !strings.Contains(coldLog.String(), "listed=\"the interpreter (compiled on its first call)\"") {
		t.Fatalf("the first start did not list the plugin on the interpreter:\n%s", coldLog.String())
	}
	warmLog, warmTools, warmCall := start()
	poll.Until(t, 5*time.Second, "the warm start's log", func() bool { return strings.Contains(warmLog.String(), "plugin loaded") })
	if !strings.Contains(warmLog.String(), "listed=\"cache (compiled on its first call)\"") {
		t.Fatalf("the second start did not list the plugin from the cache:\n%s", warmLog.String())
	}
	if warmTools != coldTools || warmCall != coldCall {
		t.Fatalf("the warm start differs:\ntools %s\nwant  %s\ncall %s\nwant %s", warmTools, coldTools, warmCall, coldCall)
	}
	if !strings.Contains(warmCall, `\"words\":2`) && !strings.Contains(warmCall, `"words":2`) {
		t.Fatalf("the first call after a warm start answered %s", warmCall)
	}
}
