package wasmpass

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/internal/testrig/wasmtest"
)

// kernelImportsModule imports kernel functions from module kernel, among
// other imports, and has sections before and after the import section.
// The import section is 133 bytes with module "extism:host/env" and 125
// with kernelModule, so that its size takes one byte less (LEB128).
func kernelImportsModule(kernel string) []byte {
	fn := func(module, name string) []byte {
		return slices.Concat(wasmtest.Name(module), wasmtest.Name(name), []byte{0x00, 0x00})
	}
	return wasmtest.Module(
		wasmtest.Section(1, wasmtest.Vec([]byte{0x60, 0x01, 0x7e, 0x00})), // type 0: (i64) -> ()
		wasmtest.Section(2, wasmtest.Vec(
			fn(extismKernelModule, "http_headers"), // Extism serves it
			fn(kernel, "http_request"),
			fn("env", "log_info"),
			slices.Concat(wasmtest.Name(extismKernelModule), wasmtest.Name("log_warn"), []byte{0x03, 0x7f, 0x00}), // a global
			fn(kernel, "log_info"),
		)),
		wasmtest.Section(0, slices.Concat(wasmtest.Name("note"), []byte("payload"))),
	)
}

// The module names of the kernel imports the sandbox redirects.
const (
	extismKernelModule = "extism:host/env"
	kernelModule       = "mcphost:env"
)

// redirectKernelImports moves imports of http_request and the log
// functions from extismKernelModule to kernelModule, as the sandbox moves
// those of the kernel functions it serves.
func redirectKernelImports(wasm []byte) ([]byte, error) {
	return redirectImports(wasm, Redirect{From: extismKernelModule, To: kernelModule, Names: func(name string) bool {
		return name == "http_request" || strings.HasPrefix(name, "log_")
	}})
}

func TestRedirectKernelImports(t *testing.T) {
	t.Parallel()
	in, want := kernelImportsModule(extismKernelModule), kernelImportsModule(kernelModule)
	if len(in)-len(want) != 2*(len(extismKernelModule)-len(kernelModule))+1 {
		t.Fatalf("the import section's size takes as many bytes in both modules (%d and %d bytes)", len(in), len(want))
	}
	got, err := redirectKernelImports(in)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("got\n% x\nwant\n% x", got, want)
	}

	// Nothing to move: the same bytes, so the same compilation cache entry.
	for _, wasm := range [][]byte{wasmtest.RunModule(), wasmtest.ImportsModule()} {
		if got, err := redirectKernelImports(wasm); err != nil || &got[0] != &wasm[0] {
			t.Errorf("module without kernel imports rewritten (%v)", err)
		}
	}
	if _, err := redirectKernelImports(in[:len(in)-3]); err == nil {
		t.Error("truncated module accepted")
	}
}
