//go:build !wasm

package pdk

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

// The call_tool benchmarks run the whole dispatch (input transfer, decoding,
// validation, the tool, encoding, output transfer) on the fake kernel, with
// a large text argument or a large text result. The benchmarks of
// internal/testrig/testplugins/pdkbench (in the mcphost module) measure the same in
// a WebAssembly plugin through the sandbox.

type benchArgs struct {
	Text  string `json:"text,omitempty"`
	Bytes int    `json:"bytes,omitempty" jsonschema:"minimum=0"`
}

func benchCallTool(b *testing.B, args benchArgs) {
	k := newFakeKernel(b)
	freshRegistry(b)
	Tool("bench", "Returns a text of the given size.", func(_ *Context, a benchArgs) (string, error) {
		return strings.Repeat("x", a.Bytes), nil
	})
	raw, err := json.Marshal(args)
	if err != nil {
		b.Fatal(err)
	}
	in := mustJSON(b, request(abi.CallToolParams{Name: "bench", Arguments: raw}, abi.Context{ID: json.RawMessage("1")}))
	b.SetBytes(int64(len(in) + args.Bytes))
	b.ReportAllocs()
	for b.Loop() {
		k.arena = k.arena[:64] // forget the previous call's blocks
		clear(k.blocks)
		if rc, _, errText := k.call(handleCallTool, in); rc != 0 {
			b.Fatal(errText)
		}
	}
}

// benchText is n bytes of text with a line break every 64 bytes.
func benchText(n int) string {
	return strings.Repeat(strings.Repeat("x", 63)+"\n", n/64)
}

func BenchmarkCallToolInput64K(b *testing.B)  { benchCallTool(b, benchArgs{Text: benchText(64 << 10)}) }
func BenchmarkCallToolInput2M(b *testing.B)   { benchCallTool(b, benchArgs{Text: benchText(2 << 20)}) }
func BenchmarkCallToolOutput64K(b *testing.B) { benchCallTool(b, benchArgs{Bytes: 64 << 10}) }
func BenchmarkCallToolOutput2M(b *testing.B)  { benchCallTool(b, benchArgs{Bytes: 2 << 20}) }
