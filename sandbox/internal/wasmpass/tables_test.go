package wasmpass

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/internal/testrig/wasmtest"
)

// importedTableModule imports a function and, from a module whose name is
// pad bytes long, a table of type imported; it defines a table of type
// defined, and ends with a custom section.
func importedTableModule(pad int, imported, defined []byte) []byte {
	return wasmtest.Module(
		wasmtest.Section(1, wasmtest.Vec([]byte{0x60, 0x00, 0x00})),
		wasmtest.Section(2, wasmtest.Vec(
			slices.Concat(wasmtest.Name("env"), wasmtest.Name("f"), []byte{0x00, 0x00}),
			slices.Concat(wasmtest.Name(strings.Repeat("m", pad)), wasmtest.Name("t"), []byte{kindTable}, imported),
		)),
		wasmtest.Section(4, wasmtest.Vec(defined)),
		wasmtest.Section(0, slices.Concat(wasmtest.Name("note"), []byte("payload"))),
	)
}

func TestCapTables(t *testing.T) {
	t.Parallel()
	// The import section is 126 bytes before and 129 after: its size
	// takes a byte more. The table section is 2 bytes shorter.
	in := importedTableModule(110, wasmtest.TableType(wasmtest.Externref, 2), wasmtest.TableType(wasmtest.Funcref, 0, 1<<32-1))
	want := importedTableModule(110, wasmtest.TableType(wasmtest.Externref, 2, MaxTableElements), wasmtest.TableType(wasmtest.Funcref, 0, MaxTableElements))
	if len(want)-len(in) != 3+1-2 {
		t.Fatalf("the import section's size takes as many bytes in both modules (%d and %d bytes)", len(in), len(want))
	}
	got, err := capTables(in)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("got\n% x\nwant\n% x", got, want)
	}

	// Tables within the cap, or none: the same bytes, so the same
	// compilation cache entry.
	for _, wasm := range [][]byte{
		want,
		wasmtest.RunModule(),
		wasmtest.TableModule(wasmtest.TableType(wasmtest.Funcref, 1, 1000), wasmtest.GrowOnce(wasmtest.Funcref, 1, 1)...),
		wasmtest.TableModule(wasmtest.TableType(wasmtest.Externref, MaxTableElements, MaxTableElements), wasmtest.GrowOnce(wasmtest.Externref, 1, -1)...),
	} {
		if got, err := capTables(wasm); err != nil || &got[0] != &wasm[0] {
			t.Errorf("module with small tables rewritten (%v)", err)
		}
	}
}

func TestCapTablesRefuses(t *testing.T) {
	t.Parallel()
	five := wasmtest.Module(wasmtest.Section(2, wasmtest.Vec(
		slices.Concat(wasmtest.Name("env"), wasmtest.Name("t"), []byte{kindTable}, wasmtest.TableType(wasmtest.Funcref, 1, 1)),
	)), wasmtest.Section(4, wasmtest.Vec(
		wasmtest.TableType(wasmtest.Funcref, 0, 1), wasmtest.TableType(wasmtest.Funcref, 0, 1), wasmtest.TableType(wasmtest.Funcref, 0, 1), wasmtest.TableType(wasmtest.Funcref, 0, 1),
	)))
	for _, c := range []struct {
		name string
		wasm []byte
		want string
	}{
		{"a minimum above the cap",
			importedTableModule(1, wasmtest.TableType(wasmtest.Funcref, MaxTableElements+1), wasmtest.TableType(wasmtest.Funcref, 0)),
			"table 0 has a minimum of 1048577 elements, more than the 1048576 a table may have"},
		{"too many tables", five, "the module has more than 4 tables (imported and defined)"},
		{"a table with an initializer",
			wasmtest.TableModule(slices.Concat([]byte{0x40, 0x00}, wasmtest.TableType(wasmtest.Funcref, 1), []byte{0xd0, 0x70, 0x0b})),
			"table 0 has an initializer expression"},
		{"a 64-bit table", wasmtest.TableModule([]byte{wasmtest.Funcref, 0x04, 0x01}), "malformed wasm binary: table 0: limits flags 0x4"},
		{"a truncated table", wasmtest.TableModule(wasmtest.TableType(wasmtest.Funcref, 0, MaxTableElements))[:27], "wasm section overrun"},
	} {
		if _, err := capTables(c.wasm); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", c.name, err, c.want)
		}
	}
}
