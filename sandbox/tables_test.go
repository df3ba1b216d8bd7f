package sandbox

import (
	"bytes"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// sleb returns v as a signed LEB128 number (an i32.const immediate).
func sleb(v int32) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// Reference types and the limits of a table of them.
const (
	funcref   = 0x70
	externref = 0x6f
)

func tableType(ref byte, min uint32, max ...uint32) []byte {
	if len(max) == 0 {
		return slices.Concat([]byte{ref, 0x00}, uleb(min))
	}
	return slices.Concat([]byte{ref, 0x01}, uleb(min), uleb(max[0]))
}

// tableModule is a reactor with one table of type table (tableType) and an
// export grow () -> i32 whose body, without locals, is code.
func tableModule(table []byte, code ...byte) []byte {
	body := append([]byte{0x01, 0x01, 0x7f}, code...) // one i32 local
	return wasmModule(
		wasmSection(1, wasmVec([]byte{0x60, 0x00, 0x01, 0x7f})), // type 0: () -> i32
		wasmSection(3, wasmVec([]byte{0x00})),
		wasmSection(4, wasmVec(table)),
		wasmSection(7, wasmVec(slices.Concat(wasmName("grow"), []byte{0x00, 0x00}))),
		wasmSection(10, wasmVec(slices.Concat(uleb(uint32(len(body))), body))),
	)
}

// growOnce is the code of a grow that grows table 0, of reference type ref,
// by delta null references and returns 0 if table.grow returned want, else 1.
func growOnce(ref byte, delta, want int32) []byte {
	return slices.Concat(
		[]byte{0xd0, ref, 0x41}, sleb(delta), // ref.null ref, i32.const delta
		[]byte{0xfc, 0x0f, 0x00, 0x41}, sleb(want), // table.grow 0, i32.const want
		[]byte{0x47, 0x0b}, // i32.ne, end
	)
}

// growSteps is the code of a grow that grows table 0, of reference type
// ref, n times by step null references, whether each growth succeeds or
// not, and returns 0 if the table then has want elements, else 1.
func growSteps(ref byte, step, n, want int32) []byte {
	return slices.Concat(
		[]byte{0x03, 0x40, 0xd0, ref, 0x41}, sleb(step), // loop, ref.null ref, i32.const step
		[]byte{0xfc, 0x0f, 0x00, 0x1a},                                  // table.grow 0, drop
		[]byte{0x20, 0x00, 0x41, 0x01, 0x6a, 0x22, 0x00, 0x41}, sleb(n), // local 0 += 1, i32.const n
		[]byte{0x49, 0x0d, 0x00, 0x0b},             // i32.lt_u, br_if 0, end
		[]byte{0xfc, 0x10, 0x00, 0x41}, sleb(want), // table.size 0, i32.const want
		[]byte{0x47, 0x0b}, // i32.ne, end
	)
}

// TestTableGrowthIsCapped runs plugins that grow a table far beyond what
// the host could allocate: each growth beyond the cap fails inside the
// guest (table.grow returns -1) and the process allocates next to nothing.
// It is not parallel, so that the memory it measures is its own.
func TestTableGrowthIsCapped(t *testing.T) {
	for _, c := range []struct {
		name  string
		wasm  []byte
		alloc uint64 // at most, in bytes
	}{
		{"a table within its maximum grows", tableModule(tableType(funcref, 1, 1000), growOnce(funcref, 999, 1)...), 16 << 20},
		{"a table without a maximum grows up to the cap, no further",
			tableModule(tableType(externref, 0), growSteps(externref, 1<<16, 32, maxTableElements)...), 64 << 20},
		{"a table with a 4 Gi maximum grows up to the cap, no further",
			tableModule(tableType(funcref, 0, 1<<32-1), growSteps(funcref, 1<<16, 32, maxTableElements)...), 64 << 20},
		{"a table without a maximum does not grow by 4 Gi elements (32 GiB)",
			tableModule(tableType(funcref, 0), growOnce(funcref, -2, -1)...), 16 << 20},
		{"a table with a 4 Gi maximum does not grow by 4 Gi elements (32 GiB)",
			tableModule(tableType(externref, 1, 1<<32-1), growOnce(externref, -3, -1)...), 16 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := engine.Load(t.Context(), "tables", c.wasm, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(t.Context())
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err = p.Call(t.Context(), "grow", nil)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Errorf("the table did not end at the size it should: %v", err)
			}
			if grown := after.Sys - before.Sys; after.Sys > before.Sys && grown > c.alloc {
				t.Errorf("the call took %d MiB from the system, more than %d", grown>>20, c.alloc>>20)
			}
		})
	}
}

func TestTableAboveTheCapIsRefused(t *testing.T) {
	t.Parallel()
	_, err := engine.Load(t.Context(), "tables", tableModule(tableType(funcref, maxTableElements+1), growOnce(funcref, 0, maxTableElements+1)...), Options{})
	if err == nil || !strings.Contains(err.Error(), strconv.Itoa(maxTableElements)) {
		t.Fatalf("got %v, want an error naming the cap of %d elements", err, maxTableElements)
	}
}

// importedTableModule imports a function and, from a module whose name is
// pad bytes long, a table of type imported; it defines a table of type
// defined, and ends with a custom section.
func importedTableModule(pad int, imported, defined []byte) []byte {
	return wasmModule(
		wasmSection(1, wasmVec([]byte{0x60, 0x00, 0x00})),
		wasmSection(2, wasmVec(
			slices.Concat(wasmName("env"), wasmName("f"), []byte{0x00, 0x00}),
			slices.Concat(wasmName(strings.Repeat("m", pad)), wasmName("t"), []byte{kindTable}, imported),
		)),
		wasmSection(4, wasmVec(defined)),
		wasmSection(0, slices.Concat(wasmName("note"), []byte("payload"))),
	)
}

func TestCapTables(t *testing.T) {
	t.Parallel()
	// The import section is 126 bytes before and 129 after: its size
	// takes a byte more. The table section is 2 bytes shorter.
	in := importedTableModule(110, tableType(externref, 2), tableType(funcref, 0, 1<<32-1))
	want := importedTableModule(110, tableType(externref, 2, maxTableElements), tableType(funcref, 0, maxTableElements))
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
		runModule(),
		tableModule(tableType(funcref, 1, 1000), growOnce(funcref, 1, 1)...),
		tableModule(tableType(externref, maxTableElements, maxTableElements), growOnce(externref, 1, -1)...),
	} {
		if got, err := capTables(wasm); err != nil || &got[0] != &wasm[0] {
			t.Errorf("module with small tables rewritten (%v)", err)
		}
	}
}

func TestCapTablesRefuses(t *testing.T) {
	t.Parallel()
	five := wasmModule(wasmSection(2, wasmVec(
		slices.Concat(wasmName("env"), wasmName("t"), []byte{kindTable}, tableType(funcref, 1, 1)),
	)), wasmSection(4, wasmVec(
		tableType(funcref, 0, 1), tableType(funcref, 0, 1), tableType(funcref, 0, 1), tableType(funcref, 0, 1),
	)))
	for _, c := range []struct {
		name string
		wasm []byte
		want string
	}{
		{"a minimum above the cap",
			importedTableModule(1, tableType(funcref, maxTableElements+1), tableType(funcref, 0)),
			"table 0 has a minimum of 1048577 elements, more than the 1048576 a table may have"},
		{"too many tables", five, "the module has more than 4 tables (imported and defined)"},
		{"a table with an initializer",
			tableModule(slices.Concat([]byte{0x40, 0x00}, tableType(funcref, 1), []byte{0xd0, 0x70, 0x0b})),
			"table 0 has an initializer expression"},
		{"a 64-bit table", tableModule([]byte{funcref, 0x04, 0x01}), "malformed wasm binary: table 0: limits flags 0x4"},
		{"a truncated table", tableModule(tableType(funcref, 0, maxTableElements))[:27], "wasm section overrun"},
	} {
		if _, err := capTables(c.wasm); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", c.name, err, c.want)
		}
	}
}
