package sandbox

import (
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/internal/testrig/wasmtest"
	"github.com/mcphost/mcphost/sandbox/internal/wasmpass"
)

// growSteps is the code of a grow that grows table 0, of reference type
// ref, n times by step null references, whether each growth succeeds or
// not, and returns 0 if the table then has want elements, else 1.
func growSteps(ref byte, step, n, want int32) []byte {
	return slices.Concat(
		[]byte{0x03, 0x40, 0xd0, ref, 0x41}, wasmtest.SLEB(step), // loop, ref.null ref, i32.const step
		[]byte{0xfc, 0x0f, 0x00, 0x1a},                                           // table.grow 0, drop
		[]byte{0x20, 0x00, 0x41, 0x01, 0x6a, 0x22, 0x00, 0x41}, wasmtest.SLEB(n), // local 0 += 1, i32.const n
		[]byte{0x49, 0x0d, 0x00, 0x0b},                      // i32.lt_u, br_if 0, end
		[]byte{0xfc, 0x10, 0x00, 0x41}, wasmtest.SLEB(want), // table.size 0, i32.const want
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
		{"a table within its maximum grows", wasmtest.TableModule(wasmtest.TableType(wasmtest.Funcref, 1, 1000), wasmtest.GrowOnce(wasmtest.Funcref, 999, 1)...), 16 << 20},
		{"a table without a maximum grows up to the cap, no further",
			wasmtest.TableModule(wasmtest.TableType(wasmtest.Externref, 0), growSteps(wasmtest.Externref, 1<<16, 32, wasmpass.MaxTableElements)...), 64 << 20},
		{"a table with a 4 Gi maximum grows up to the cap, no further",
			wasmtest.TableModule(wasmtest.TableType(wasmtest.Funcref, 0, 1<<32-1), growSteps(wasmtest.Funcref, 1<<16, 32, wasmpass.MaxTableElements)...), 64 << 20},
		{"a table without a maximum does not grow by 4 Gi elements (32 GiB)",
			wasmtest.TableModule(wasmtest.TableType(wasmtest.Funcref, 0), wasmtest.GrowOnce(wasmtest.Funcref, -2, -1)...), 16 << 20},
		{"a table with a 4 Gi maximum does not grow by 4 Gi elements (32 GiB)",
			wasmtest.TableModule(wasmtest.TableType(wasmtest.Externref, 1, 1<<32-1), wasmtest.GrowOnce(wasmtest.Externref, -3, -1)...), 16 << 20},
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
	_, err := engine.Load(t.Context(), "tables", wasmtest.TableModule(wasmtest.TableType(wasmtest.Funcref, wasmpass.MaxTableElements+1), wasmtest.GrowOnce(wasmtest.Funcref, 0, wasmpass.MaxTableElements+1)...), Options{})
	if err == nil || !strings.Contains(err.Error(), strconv.Itoa(wasmpass.MaxTableElements)) {
		t.Fatalf("got %v, want an error naming the cap of %d elements", err, wasmpass.MaxTableElements)
	}
}
