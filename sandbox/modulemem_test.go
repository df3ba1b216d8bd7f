package sandbox

import "testing"

// TestReadModuleMemory reads the memories' minimum and the tables' maxima,
// imported and defined.
func TestReadModuleMemory(t *testing.T) {
	t.Parallel()
	// importsModule imports a memory of 1 to 256 pages and a table of at
	// least 1 element without a maximum.
	got, err := readModuleMemory(importsModule())
	if want := (moduleMemory{minBytes: 64 << 10, tableElements: maxTableElements}); err != nil || got != want {
		t.Errorf("imports: got %+v, %v; want %+v", got, err, want)
	}
	defined := wasmModule(
		wasmSection(4, wasmVec([]byte{0x70, 0x01, 0x00, 0x0a}, []byte{0x6f, 0x01, 0x01, 0x05})), // tables of at most 10 and 5
		wasmSection(5, wasmVec([]byte{0x00, 0x03})),                                             // a memory of 3 pages
	)
	got, err = readModuleMemory(defined)
	if want := (moduleMemory{minBytes: 3 << 16, tableElements: 15}); err != nil || got != want {
		t.Errorf("defined: got %+v, %v; want %+v", got, err, want)
	}
}
