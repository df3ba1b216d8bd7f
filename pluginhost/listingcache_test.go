package pluginhost

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/mcphost/mcphost/sandbox"
)

// cacheStart is one start of a server on a compilation cache and a listing
// cache: its loader, its server and its log.
type cacheStart struct {
	loader *Loader
	srv    *host.Server
	logs   *records
}

// startOn starts a server whose loader keeps its caches in dir.
func startOn(t *testing.T, dir string) cacheStart {
	t.Helper()
	return startWith(t, dir, sandbox.EngineOptions{CacheDir: filepath.Join(dir, "compiled")})
}

// startWith starts a server whose engine has opts, and whose loader keeps
// its listing cache in dir, unless dir is "".
func startWith(t *testing.T, dir string, opts sandbox.EngineOptions) cacheStart {
	t.Helper()
	engine, err := sandbox.NewEngine(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = engine.Close() })
	logs := &records{}
	srv := host.NewServer(host.Options{Logger: slog.New(logs)}, nil)
	listings := ""
	if dir != "" {
		listings = filepath.Join(dir, "listings")
	}
	return cacheStart{&Loader{Engine: engine, Server: srv, Logger: srv.Logger(), ListingCacheDir: listings}, srv, logs}
}

// load loads the plugin at path with cfg and serves it alone; it returns
// a client of the server.
func (s cacheStart) load(t *testing.T, path string, cfg *config.Config) *host.InProcessClient {
	t.Helper()
	p, err := s.loader.LoadFile(t.Context(), path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	s.srv.SetCatalog(host.BuildCatalog(t.Context(), []*host.Plugin{p}, nil))
	c := host.NewInProcessClient(s.srv, host.InProcessHandlers{})
	t.Cleanup(c.Close)
	if _, err := c.Request(t.Context(), "initialize", map[string]any{"protocolVersion": host.Version20250618, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}); err != nil {
		t.Fatal(err)
	}
	c.Notify(t.Context(), "notifications/initialized", nil)
	return c
}

// toolsAndCall lists the tools through c and calls wordcount.
func toolsAndCall(t *testing.T, c *host.InProcessClient) (tools, call string) {
	t.Helper()
	list, err := c.Request(t.Context(), "tools/list", nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Request(t.Context(), "tools/call", map[string]any{"name": "wordcount", "arguments": map[string]any{"text": "a b c"}})
	if err != nil {
		t.Fatal(err)
	}
	return string(list), string(res)
}

// A plugin loaded for the first time is listed on wazero's interpreter, and
// at the next start from the cache, exactly as before, without being
// compiled or instantiated; either way it is compiled on its first call,
// which answers as a compiled load's does. A change of its configuration
// misses the cache, and so does a grant of a host function, which is
// listed by running it compiled, and whose entry then serves the next start (which lists the plugin again once it is
// served: TestAGrantedPluginIsListedAgainOnceServedFromTheCache).
func TestAListedPluginStartsFromTheListingCache(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "wc.wasm")
	wasm, err := os.ReadFile(plugintest.Build(t, "internal/testrig/testplugins/samego"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()

	first := startOn(t, dir)
	wantTools, wantCall := toolsAndCall(t, first.load(t, path, cfg))
	if first.logs.count("plugin loaded", "plugin=wc", "listed=the interpreter") != 1 {
		t.Fatalf("first start:\n%s", first.logs.dump())
	}
	if !strings.Contains(wantTools, `"wordcount"`) || !strings.Contains(wantCall, `"words":3`) {
		t.Fatalf("first start: tools %s, call %s", wantTools, wantCall)
	}
	entries, _ := filepath.Glob(filepath.Join(dir, "listings", "*.json"))
	if len(entries) != 1 {
		t.Fatalf("listing cache entries %v, want one", entries)
	}

	second := startOn(t, dir)
	c := second.load(t, path, cfg)
	if second.logs.count("plugin loaded", "plugin=wc", "listed=cache") != 1 || second.logs.count("INFO compiled") != 0 {
		t.Fatalf("second start: want the plugin listed from the cache, nothing compiled:\n%s", second.logs.dump())
	}
	// The folder's file changes before the first call: the version that
	// loaded is the one that runs, as with a plugin compiled at load.
	if err := os.WriteFile(path, []byte("\x00asm\x01\x00\x00\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	list, err := c.Request(t.Context(), "tools/list", nil)
	if err != nil || string(list) != wantTools {
		t.Fatalf("tools from the cache:\n%s\nwant\n%s (%v)", list, wantTools, err)
	}
	if tools, call := toolsAndCall(t, c); tools != wantTools || call != wantCall {
		t.Fatalf("after the first call: tools %s, call %s; want %s, %s", tools, call, wantTools, wantCall)
	}

	if err := os.WriteFile(path, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	changed := config.Default()
	changed.Plugins = map[string]config.PluginConfig{"wc": {Config: map[string]string{"x": "1"}}}
	third := startOn(t, dir)
	third.load(t, path, changed)
	if third.logs.count("plugin loaded", "plugin=wc", "listed=the interpreter") != 1 {
		t.Fatalf("a changed config must miss the cache:\n%s", third.logs.dump())
	}

	granted := config.Default()
	granted.Plugins = map[string]config.PluginConfig{"wc": {HostFunctions: []string{"notify_progress"}}}
	before, _ := filepath.Glob(filepath.Join(dir, "listings", "*.json"))
	for i, listed := range []string{"listed=running it", "listed=cache (listed again once served"} {
		start := startOn(t, dir)
		start.load(t, path, granted)
		if start.logs.count("plugin loaded", "plugin=wc", listed) != 1 {
			t.Fatalf("start %d of a plugin granted a host function: want %s:\n%s", i+1, listed, start.logs.dump())
		}
	}
	if after, _ := filepath.Glob(filepath.Join(dir, "listings", "*.json")); len(after) != len(before)+1 {
		t.Fatalf("a grant is part of the key: entries %v, want one more than %v", after, before)
	}
}

// A corrupt or foreign entry is a miss, never an error.
func TestAnUnreadableListingEntryIsAMiss(t *testing.T) {
	dir := t.TempDir()
	c := listingCache(dir)
	for name, body := range map[string]string{"junk": "not json", "old": `{"version":0,"calls":[]}`} {
		if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if e := c.read(name); e != nil {
			t.Errorf("%s: read %+v, want a miss", name, e)
		}
	}
	e := &listingEntry{Version: listingCacheVersion, Calls: []listingCall{{Export: "list_tools", Input: []byte(`{}`), Output: []byte(`{"tools":[]}`)}}}
	if err := c.write("good", sha256.Sum256([]byte("module")), []byte("module"), e); err != nil {
		t.Fatal(err)
	}
	got := c.read("good")
	if raw, _ := json.Marshal(got); got == nil || !strings.Contains(string(raw), "list_tools") {
		t.Fatalf("round trip: %s", raw)
	}
}

// A plugin granted a mount lists what a file in it holds. Started from the
// listing cache after the file changed, it first serves the cached list,
// then, once served, is listed again: the server swaps the new list in,
// the client gets tools/list_changed, and the entry is rewritten, so that
// the next start serves the new list from the cache.
func TestAGrantedPluginIsListedAgainOnceServedFromTheCache(t *testing.T) {
	dir := t.TempDir()
	plugins, data := filepath.Join(dir, "plugins"), filepath.Join(dir, "data")
	for _, d := range []string{plugins, data} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	wasm, err := os.ReadFile(plugintest.Build(t, "internal/testrig/testplugins/lister"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(plugins, "files.wasm"), wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	names := filepath.Join(data, "names")
	setNames := func(s string) {
		if err := os.WriteFile(names, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := config.Default()
	cfg.Plugins = map[string]config.PluginConfig{"files": {
		Config: map[string]string{"names_file": "/data/names"},
		Mounts: []config.Mount{{Host: data, Guest: "/data", ReadOnly: true}},
	}}
	// start serves the folder with a client connected first; it returns
	// the client, the server's log and the client's tools/list_changed
	// count.
	start := func() (*host.InProcessClient, *records, *atomic.Int32) {
		s := startOn(t, dir)
		changed := &atomic.Int32{}
		c := host.NewInProcessClient(s.srv, host.InProcessHandlers{Notification: func(method string, _ json.RawMessage) {
			if method == "notifications/tools/list_changed" {
				changed.Add(1)
			}
		}})
		t.Cleanup(c.Close)
		if _, err := c.Request(t.Context(), "initialize", map[string]any{"protocolVersion": host.Version20250618, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}); err != nil {
			t.Fatal(err)
		}
		c.Notify(t.Context(), "notifications/initialized", nil)
		r := NewReloader(s.loader, plugins, cfg)
		if res := r.Load(t.Context()); len(res.Errors) > 0 {
			t.Fatal(res.Errors)
		}
		t.Cleanup(func() {
			for _, p := range s.srv.Catalog().Plugins() {
				_ = p.Close(context.Background())
			}
		})
		return c, s.logs, changed
	}
	tools := func(c *host.InProcessClient) string {
		raw, err := c.Request(t.Context(), "tools/list", nil)
		if err != nil {
			t.Fatal(err)
		}
		var list struct{ Tools []struct{ Name string } }
		if err := json.Unmarshal(raw, &list); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tool := range list.Tools {
			out = append(out, tool.Name)
		}
		return strings.Join(out, ",")
	}

	setNames("alpha")
	c, logs, _ := start()
	if got := tools(c); got != "alpha" || logs.count("plugin loaded", "plugin=files", "listed=running it") != 1 {
		t.Fatalf("first start: tools %q, want alpha, listed by running it compiled:\n%s", got, logs.dump())
	}

	setNames("beta gamma")
	c, logs, changed := start()
	if logs.count("plugin loaded", "plugin=files", "listed=cache (listed again once served") != 1 {
		t.Fatalf("second start: want the plugin listed from the cache, then again:\n%s", logs.dump())
	}
	poll.Until(t, 60*time.Second, "the plugin listed again", func() bool {
		if logs.count("listing the plugin again") > 0 {
			t.Fatalf("the refresh failed:\n%s", logs.dump())
		}
		return logs.count("plugin listed again after its start from the listing cache", "plugin=files", "tools_changed=true") == 1
	})
	if got := tools(c); got != "beta,gamma" {
		t.Errorf("tools after the refresh %q, want beta,gamma", got)
	}
	poll.Until(t, 10*time.Second, "tools/list_changed for the load and for the refresh", func() bool { return changed.Load() == 2 })

	c, logs, _ = start()
	if got := tools(c); got != "beta,gamma" || logs.count("plugin loaded", "plugin=files", "listed=cache") != 1 {
		t.Fatalf("third start: tools %q, want beta,gamma from the rewritten entry:\n%s", got, logs.dump())
	}
}
