package jsengine_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcphost/mcphost/abi"
	js "github.com/mcphost/mcphost/internal/jsengine"
	"github.com/mcphost/mcphost/sandbox"
)

// benchPlugin loads testdata/full.js on e.
func benchPlugin(b *testing.B, e *sandbox.Engine) *sandbox.Plugin {
	src, err := os.ReadFile(filepath.Join("testdata", "full.js"))
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := js.Config("full.js", src, nil)
	if err != nil {
		b.Fatal(err)
	}
	p, err := e.Load(context.Background(), "full", js.Engine(), sandbox.Options{
		Grants:        sandbox.Grants{Config: cfg},
		HostFunctions: (&fakeHost{}).functions(),
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := js.Check(context.Background(), p); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkCompileEngine: compiling the engine module, no cache (what the
// first start of mcphost with a JavaScript plugin pays once; later starts
// use the persistent compilation cache).
func BenchmarkCompileEngine(b *testing.B) {
	for b.Loop() {
		e, err := sandbox.NewEngine(sandbox.EngineOptions{})
		if err != nil {
			b.Fatal(err)
		}
		p := benchPlugin(b, e)
		_ = p.Close(context.Background())
		_ = e.Close()
	}
}

// BenchmarkLoadPlugin: loading a plugin on a compiled engine: instantiation
// plus running the prelude and the plugin's source (what each new instance
// pays on its first call).
func BenchmarkLoadPlugin(b *testing.B) {
	e := sharedEngine(b)
	for b.Loop() {
		p := benchPlugin(b, e)
		_ = p.Close(context.Background())
	}
}

func benchCall(b *testing.B, export string, input string) {
	p := benchPlugin(b, sharedEngine(b))
	defer p.Close(context.Background())
	in := []byte(input)
	for b.Loop() {
		if _, err := p.Call(context.Background(), export, in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkListTools(b *testing.B) {
	benchCall(b, abi.ExportListTools, `{"context":{}}`)
}

func BenchmarkCallToolText(b *testing.B) {
	benchCall(b, abi.ExportCallTool, `{"request":{"name":"greet","arguments":{"name":"Ada"}},"context":{}}`)
}

func BenchmarkCallToolStructured(b *testing.B) {
	benchCall(b, abi.ExportCallTool, `{"request":{"name":"add","arguments":{"a":1.5,"b":2}},"context":{}}`)
}

func BenchmarkReadResourceTemplate(b *testing.B) {
	benchCall(b, abi.ExportReadResource, `{"request":{"uri":"test://items/7?fields=a&fields=b"},"context":{}}`)
}
