package sandbox_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/mcphost/mcphost/pluginhost"
	"github.com/mcphost/mcphost/sandbox"
)

// sha256ABC is the hex SHA-256 of "abc", what the tools example's hash
// answers to hashABCInput.
const sha256ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

// hashABCInput returns the call_tool input of the tools example's hash of
// "abc".
func hashABCInput(tb testing.TB) []byte {
	in, err := json.Marshal(plugintest.Input(abi.CallToolParams{Name: "hash", Arguments: json.RawMessage(`{"text":"abc"}`)}, nil))
	if err != nil {
		tb.Fatal(err)
	}
	return in
}

// loadInOwnEngine builds the Go plugin in pkgDir (plugintest.Build) and
// loads it as name, with one instance and every host function denied, in
// an engine of its own; both are closed when the test ends.
func loadInOwnEngine(tb testing.TB, pkgDir, name string) *sandbox.Plugin {
	wasm, err := os.ReadFile(plugintest.Build(tb, pkgDir))
	if err != nil {
		tb.Fatal(err)
	}
	engine, err := sandbox.NewEngine(sandbox.EngineOptions{CacheDir: tb.TempDir()})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { engine.Close() })
	p, err := engine.Load(tb.Context(), name, wasm, sandbox.Options{
		Limits:        sandbox.Limits{MaxInstances: 1},
		HostFunctions: pluginhost.DeniedHostFunctions(name),
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.Close(tb.Context()) })
	return p
}
