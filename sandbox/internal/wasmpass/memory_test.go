package wasmpass

import (
	"testing"

	"github.com/mcphost/mcphost/internal/testrig/wasmtest"
)

// TestReadMemory reads the memories' minimum and the tables' maxima,
// imported and defined.
func TestReadMemory(t *testing.T) {
	t.Parallel()
	// wasmtest.ImportsModule imports a memory of 1 to 256 pages and a table of at
	// least 1 element without a maximum.
	got, err := ReadMemory(wasmtest.ImportsModule())
	if want := (Memory{MinBytes: 64 << 10, TableElements: MaxTableElements}); err != nil || got != want {
		t.Errorf("imports: got %+v, %v; want %+v", got, err, want)
	}
	defined := wasmtest.Module(
		wasmtest.Section(4, wasmtest.Vec([]byte{0x70, 0x01, 0x00, 0x0a}, []byte{0x6f, 0x01, 0x01, 0x05})), // tables of at most 10 and 5
		wasmtest.Section(5, wasmtest.Vec([]byte{0x00, 0x03})),                                             // a memory of 3 pages
	)
	got, err = ReadMemory(defined)
	if want := (Memory{MinBytes: 3 << 16, TableElements: 15}); err != nil || got != want {
		t.Errorf("defined: got %+v, %v; want %+v", got, err, want)
	}
}
