package sandbox

import (
	"bytes"
	"slices"
	"testing"
)

// kernelImportsModule imports kernel functions from module kernel, among
// other imports, and has sections before and after the import section.
// The import section is 133 bytes with module "extism:host/env" and 125
// with kernelModule, so that its size takes one byte less (LEB128).
func kernelImportsModule(kernel string) []byte {
	fn := func(module, name string) []byte {
		return slices.Concat(wasmName(module), wasmName(name), []byte{0x00, 0x00})
	}
	return wasmModule(
		wasmSection(1, wasmVec([]byte{0x60, 0x01, 0x7e, 0x00})), // type 0: (i64) -> ()
		wasmSection(2, wasmVec(
			fn(extismKernelModule, "input_length"),
			fn(kernel, "http_request"),
			fn("env", "log_info"),
			slices.Concat(wasmName(extismKernelModule), wasmName("log_warn"), []byte{0x03, 0x7f, 0x00}), // a global
			fn(kernel, "log_info"),
		)),
		wasmSection(0, slices.Concat(wasmName("note"), []byte("payload"))),
	)
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
	for _, wasm := range [][]byte{runModule(), importsModule()} {
		if got, err := redirectKernelImports(wasm); err != nil || &got[0] != &wasm[0] {
			t.Errorf("module without kernel imports rewritten (%v)", err)
		}
	}
	if _, err := redirectKernelImports(in[:len(in)-3]); err == nil {
		t.Error("truncated module accepted")
	}
}
