package pluginhost

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/mcphost/mcphost/sandbox"
)

// Every kind of plugin gives back its compiled code once idle for the
// engine's period, and is served as before afterwards: one listed from the
// listing cache, one granted a host function (compiled and listed at
// load) and a JavaScript one.
func TestIdlePluginsAreUnloadedAndServedAgain(t *testing.T) {
	goWasm, err := os.ReadFile(plugintest.Build(t, "internal/testrig/testplugins/samego"))
	if err != nil {
		t.Fatal(err)
	}
	root, err := plugintest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	jsSource, err := os.ReadFile(filepath.Join(root, "internal/testrig/testplugins/samejs/wordcount.js"))
	if err != nil {
		t.Fatal(err)
	}
	granted := config.Default()
	granted.Plugins = map[string]config.PluginConfig{"wc": {HostFunctions: []string{"notify_progress"}}}
	for name, c := range map[string]struct {
		file string
		data []byte
		cfg  *config.Config
	}{
		"listing cache":       {file: "wc.wasm", data: goWasm, cfg: config.Default()},
		"granted a host call": {file: "wc.wasm", data: goWasm, cfg: granted},
		"javascript":          {file: "wc.js", data: jsSource, cfg: config.Default()},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, c.file)
			if err := os.WriteFile(path, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			opts := sandbox.EngineOptions{CacheDir: filepath.Join(dir, "compiled"), UnloadIdleAfter: 50 * time.Millisecond}
			start := startWith(t, dir, opts)
			cl := start.load(t, path, c.cfg)
			wantTools, wantCall := toolsAndCall(t, cl)
			if !strings.Contains(wantCall, `"words":3`) {
				t.Fatalf("call: %s", wantCall)
			}
			poll.Until(t, 20*time.Second, "the idle plugin unloaded", func() bool {
				return start.logs.count("plugin idle: its compiled code and instances are given back") > 0
			})
			if tools, call := toolsAndCall(t, cl); tools != wantTools || call != wantCall {
				t.Fatalf("after the unload: tools %s, call %s; want %s, %s", tools, call, wantTools, wantCall)
			}
		})
	}
}
