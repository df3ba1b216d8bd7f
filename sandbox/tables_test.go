package sandbox

import (
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

// The cap on table elements the tests expect.
const tableCap = 1 << 20

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
			tableModule(tableType(externref, 0), growSteps(externref, 1<<16, 32, tableCap)...), 64 << 20},
		{"a table with a 4 Gi maximum grows up to the cap, no further",
			tableModule(tableType(funcref, 0, 1<<32-1), growSteps(funcref, 1<<16, 32, tableCap)...), 64 << 20},
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
	_, err := engine.Load(t.Context(), "tables", tableModule(tableType(funcref, tableCap+1), growOnce(funcref, 0, tableCap+1)...), Options{})
	if err == nil || !strings.Contains(err.Error(), strconv.Itoa(tableCap)) {
		t.Fatalf("got %v, want an error naming the cap of %d elements", err, tableCap)
	}
}
