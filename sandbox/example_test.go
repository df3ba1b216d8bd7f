package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/mcphost/mcphost/sandbox"
)

// guestWasm builds the sandbox's test plugin (sandbox/testdata/guest) once.
// A real host reads a plugin's .wasm file instead.
var guestWasm = sync.OnceValues(func() ([]byte, error) {
	root, err := plugintest.ModuleRoot()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "sandbox-example-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "guest.wasm")
	if err := plugintest.BuildTo(root, "sandbox/testdata/guest", out); err != nil {
		return nil, err
	}
	return os.ReadFile(out)
})

// Load a plugin with limits and grants, and call its exports. The guest's
// "config" export answers the config value its input names, which the
// plugin can read only because Grants.Config grants it. Its "loop" export
// never returns: the call is stopped at Limits.Timeout, its error matches
// sandbox.ErrTimeout, and the plugin serves the next call on a fresh
// instance.
func ExampleEngine_Load() {
	wasm, err := guestWasm()
	if err != nil {
		fmt.Println(err)
		return
	}
	engine, err := sandbox.NewEngine(sandbox.EngineOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer engine.Close()

	ctx := context.Background()
	plugin, err := engine.Load(ctx, "guest", wasm, sandbox.Options{
		Limits: sandbox.Limits{MemoryMiB: 64, Timeout: time.Second, MaxInstances: 1},
		Grants: sandbox.Grants{Config: map[string]string{"greeting": "hello from the host"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer plugin.Close(ctx)

	out, err := plugin.Call(ctx, "config", []byte("greeting"))
	fmt.Println(string(out), err)

	_, err = plugin.Call(ctx, "loop", nil)
	fmt.Println(errors.Is(err, sandbox.ErrTimeout), sandbox.KindOf(err))

	out, err = plugin.Call(ctx, "echo", []byte("still serving"))
	fmt.Println(string(out), err)
	// Output:
	// hello from the host <nil>
	// true plugin call timed out
	// still serving <nil>
}
