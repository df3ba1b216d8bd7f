package pluginhost

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sandbox"
)

func TestMissingGrantsListsTheConfigLinesToAdd(t *testing.T) {
	m := &abi.Manifest{ABI: abi.Version, Needs: abi.Needs{
		HostFunctions: []string{"notify_progress", "notify_logging_message"},
		Hosts:         []string{"api.example.com"},
		Paths:         []string{"/data"},
		Config:        []string{"token"},
	}}
	granted := config.PluginConfig{HostFunctions: []string{"notify_progress"}}
	got := missingGrants("tools", m, granted)
	for _, want := range []string{
		"[plugins.tools]",
		`host_functions = ["notify_progress", "notify_logging_message"]`,
		`allowed_hosts = ["api.example.com"]`,
		`config = { token = "..." }`,
		"[[plugins.tools.mounts]]",
		`guest = "/data"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	all := config.PluginConfig{
		HostFunctions: m.Needs.HostFunctions, AllowedHosts: m.Needs.Hosts,
		Config: map[string]string{"token": "x"}, Mounts: []config.Mount{{Host: "/srv", Guest: "/data"}},
	}
	if got := missingGrants("tools", m, all); got != "" {
		t.Errorf("everything granted, still missing:\n%s", got)
	}
	if got := missingGrants("legacy", nil, config.PluginConfig{}); got != "" {
		t.Errorf("a plugin without a manifest asks for nothing, got:\n%s", got)
	}
}

// TestAnOversizedPluginFileIsRefusedUnread: a plugin file larger than its
// max_module_mib, here a sparse file of 1.5 GiB, is refused with an error
// naming the setting before it is read, by LoadFile and by a Reloader's
// first load alike: the heap does not grow by the file's size.
func TestAnOversizedPluginFileIsRefusedUnread(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "huge.wasm")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(3 << 29); err != nil {
		t.Skipf("SKIPPED: no sparse files here: %v", err)
	}
	f.Close()
	engine, err := sandbox.NewEngine(sandbox.EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = engine.Close() })
	srv := host.NewServer(host.Options{}, nil)
	loader := &Loader{Engine: engine, Server: srv}
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	_, loadErr := loader.LoadFile(t.Context(), path, config.Default())
	res := NewReloader(loader, dir, config.Default()).Load(t.Context())
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	const want = "max_module_mib"
	if loadErr == nil || !strings.Contains(loadErr.Error(), want) {
		t.Errorf("LoadFile: %v, want an error naming %s", loadErr, want)
	}
	if len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Error(), want) {
		t.Errorf("Reloader.Load: %v, want an error naming %s", res.Errors, want)
	}
	// Three reads of max_module_mib (20 MiB): LoadFile's, the Reloader's
	// and its snapshot's.
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 128<<20 {
		t.Errorf("refusing the file allocated %d MiB", grown>>20)
	}
}

func TestNamedNotLoadedGivesWhyForEachPluginTheConfigNames(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcphost.toml")
	if err := os.WriteFile(path, []byte("[plugins.ok]\n[plugins.broken]\n[plugins.ghost]\n[plugins.off]\ndisabled = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	res := LoadResult{
		Plugins: []*host.Plugin{host.NewPlugin("ok", "", fakeRuntime{}), host.NewPlugin("stray", "", fakeRuntime{})},
		Failed:  map[string]error{"broken": errors.New("not a valid wasm module"), "junk": errors.New("not named")},
	}
	got := NamedNotLoaded(cfg, "/plugins", res)
	if len(got) != 2 || got[0].Name != "broken" || got[0].Err.Error() != "not a valid wasm module" ||
		got[1].Name != "ghost" || got[1].Err.Error() != "no plugin file ghost.wasm or ghost.js in /plugins" {
		t.Errorf("NamedNotLoaded = %v, want broken (its error) and ghost (no file)", got)
	}
}
