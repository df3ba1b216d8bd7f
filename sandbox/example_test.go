package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mcphost/mcphost/internal/plugintest"
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

// Load a plugin with limits and grants, and call one of its exports. The
// guest's "config" export answers the config value its input names, which
// the plugin can read only because Grants.Config grants it.
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
		Limits: sandbox.Limits{MemoryMiB: 64, Timeout: 10 * time.Second, MaxInstances: 2},
		Grants: sandbox.Grants{Config: map[string]string{"greeting": "hello from the host"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer plugin.Close(ctx)

	out, err := plugin.Call(ctx, "config", []byte("greeting"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(out))
	// Output: hello from the host
}

// A call that runs past Limits.Timeout is stopped, and its error matches
// sandbox.ErrTimeout. The guest's "loop" export never returns. The plugin
// serves the next call on a fresh instance.
func ExamplePlugin_Call_timeout() {
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
		Limits: sandbox.Limits{Timeout: time.Second, MaxInstances: 1},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer plugin.Close(ctx)

	_, err = plugin.Call(ctx, "loop", nil)
	fmt.Println(errors.Is(err, sandbox.ErrTimeout), sandbox.KindOf(err))

	out, err := plugin.Call(ctx, "echo", []byte("still serving"))
	fmt.Println(string(out), err)
	// Output:
	// true plugin call timed out
	// still serving <nil>
}
