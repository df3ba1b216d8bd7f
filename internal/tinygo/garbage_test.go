package tinygo_test

import (
	"encoding/json"
	"testing"

	extism "github.com/extism/go-sdk"
	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/plugintest"
)

// TestACallsGarbageStaysUnderItsCeiling counts what a small tools/call of
// a TinyGo plugin (internal/testrig/testplugins/garbage, without a scheduler)
// allocates: every byte is garbage its collector must sweep, and with the
// tools example's heap a collection comes once every (free heap / garbage
// per call) calls, each a pause of about ten median calls. Below about 1.7
// KB a call, collections fall under 1 % of the calls. Before the PDK's
// decoder stopped allocating a closure for every object and array it
// reads, and its structured result stopped copying its text, a call left
// 2.4 KB in 122 objects.
func TestACallsGarbageStaysUnderItsCeiling(t *testing.T) {
	const maxBytes, maxObjects = 1800, 70
	plugintest.RequireTinyGo(t)
	p := plugintest.Load(t, plugintest.BuildWith(t, "internal/testrig/testplugins/garbage", plugintest.TinyGoNone), extism.Manifest{}, nil)
	call := func(tool, args string) []byte {
		in, err := json.Marshal(plugintest.Input(abi.CallToolParams{Name: tool, Arguments: json.RawMessage(args)}, nil))
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	digest, memstats := call("digest", `{"text":"abc"}`), call("memstats", `{}`)
	counters := func() (bytes, objects float64) {
		var r struct {
			StructuredContent struct{ Bytes, Objects float64 }
		}
		p.OK(abi.ExportCallTool, memstats, &r)
		return r.StructuredContent.Bytes, r.StructuredContent.Objects
	}
	var out struct{ StructuredContent struct{ Digest string } }
	p.OK(abi.ExportCallTool, digest, &out)
	if out.StructuredContent.Digest != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatalf("digest(abc) = %q", out.StructuredContent.Digest)
	}
	counters() // its own allocations are the same each time
	b0, o0 := counters()
	b1, o1 := counters()
	const calls = 200
	for range calls {
		if rc, _, errText := p.Call(abi.ExportCallTool, digest); rc != 0 {
			t.Fatal(errText)
		}
	}
	b2, o2 := counters()
	bytes := (b2 - b1 - (b1 - b0)) / calls
	objects := (o2 - o1 - (o1 - o0)) / calls
	t.Logf("a tools/call leaves %.0f bytes in %.1f objects", bytes, objects)
	if bytes > maxBytes || objects > maxObjects {
		t.Errorf("a tools/call leaves %.0f bytes in %.1f objects, over the ceiling of %d bytes in %d objects", bytes, objects, maxBytes, maxObjects)
	}
}
