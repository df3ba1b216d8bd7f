//go:build !wasm && !race

package pdk

import (
	"encoding/json"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

// TestCallToolAllocationCeiling counts what a small tools/call allocates
// from its input to its output: in a TinyGo plugin every allocation is
// garbage its collector must sweep, and the collector's pauses are the
// tail of a plugin's latency (pdk/go/README.md, TinyGo). Counted here with the standard toolchain (TinyGo's escape
// analysis allocates more of the same); make test runs it without -race,
// which allocates on its own.
func TestCallToolAllocationCeiling(t *testing.T) {
	const ceiling = 27 // 32 before the call's _meta was decoded only when present and its output written in one buffer
	k := newFakeKernel(t)
	freshRegistry(t)
	type args struct {
		Text      string `json:"text"`
		Algorithm string `json:"algorithm,omitempty" jsonschema:"enum=sha256|sha512"`
	}
	type digest struct {
		Algorithm string `json:"algorithm"`
		Digest    string `json:"digest"`
		Bits      int    `json:"bits"`
	}
	Tool("hash", "Hash a text.", func(_ *Context, a args) (digest, error) {
		return digest{Algorithm: "sha256", Digest: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", Bits: 256}, nil
	})
	in := mustJSON(t, request(abi.CallToolParams{Name: "hash", Arguments: json.RawMessage(`{"text":"abc"}`)}, abi.Context{ID: json.RawMessage("1")}))
	allocs := testing.AllocsPerRun(200, func() {
		k.arena = k.arena[:64] // forget the previous call's blocks
		clear(k.blocks)
		if rc, _, errText := k.call(handleCallTool, in); rc != 0 {
			t.Fatal(errText)
		}
	})
	if allocs > ceiling {
		t.Errorf("a small tools/call allocates %.0f times, more than the ceiling of %d", allocs, ceiling)
	}
	t.Logf("a small tools/call allocates %.0f times", allocs)
}
