package sandbox

import (
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/mcphost/mcphost/internal/testrig/wasmtest"
)

// TestCountsBeyondTheModuleAreRefusedBeforeCompiling loads modules of a
// few bytes that each declare a count of 2³²−1 (elements of a vector, or
// bytes of a name or a data segment) somewhere wazero's decoder reads one:
// it allocates what a count declares before reading any of it, so each of
// them took gigabytes (or, for an export section, hung building a map of
// two billion entries) before it found the module truncated. Each is
// refused at once, allocating little: as malformed or overrun, or for locals (a count
// of them takes no bytes) as too costly to compile.
func TestCountsBeyondTheModuleAreRefusedBeforeCompiling(t *testing.T) {
	huge := ULEB(1<<32 - 1)
	b := func(parts ...[]byte) []byte { return slices.Concat(parts...) }
	withName := func(sub byte, content []byte) []byte {
		return Section(0, b(Name("name"), []byte{sub}, ULEB(uint32(len(content))), content))
	}
	voidType := Section(1, Vec([]byte{0x60, 0, 0}))
	for _, c := range []struct {
		name string
		wasm []byte
	}{
		{"2³²−1 types", Module(Section(1, huge))},
		{"a type of 2³²−1 parameters", Module(Section(1, b([]byte{1, 0x60}, huge)))},
		{"2³²−1 imports", Module(Section(2, huge))},
		{"2³²−1 functions", Module(Section(3, huge))},
		{"2³²−1 tables", Module(Section(4, huge))},
		{"2³²−1 memories", Module(Section(5, huge))},
		{"2³²−1 globals", Module(Section(6, huge))},
		{"2³²−1 exports", Module(Section(7, huge))},
		{"an export named by 4 GiB", Module(Section(7, b([]byte{1}, huge)))},
		{"2³²−1 element segments", Module(Section(9, huge))},
		{"an element segment of 2³²−1 functions", Module(Section(9, b([]byte{1, 0, 0x41, 0, 0x0b}, huge)))},
		{"an element segment of 2³²−1 expressions", Module(Section(9, b([]byte{1, 5, 0x70}, huge)))},
		{"2³²−1 function bodies", Module(Section(10, huge))},
		{"a function of 2³²−2 locals", Module(voidType, Section(3, Vec([]byte{0})),
			Section(10, Vec(b(ULEB(14), ULEB(2), ULEB(1<<31-1), []byte{0x7f}, ULEB(1<<31-1), []byte{0x7f, 0x0b}))))},
		{"2³²−1 data segments", Module(Section(11, huge))},
		{"a data segment of 4 GiB", Module(Section(11, b([]byte{1, 1}, huge)))},
		{"a name section naming 2³²−1 functions", Module(withName(1, huge))},
		{"a name section naming locals of 2³²−1 functions", Module(withName(2, huge))},
		{"a name section naming 2³²−1 locals of a function", Module(withName(2, b([]byte{1, 0}, huge)))},
		{"a module named by 4 GiB", Module(withName(0, huge))},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		p, err := engine.Load(t.Context(), "counts", c.wasm, Options{})
		took := time.Since(start)
		runtime.ReadMemStats(&after)
		allocated := after.TotalAlloc - before.TotalAlloc
		switch {
		case err == nil:
			_ = p.Close(t.Context())
			t.Errorf("%s: loaded; want it refused", c.name)
		case !strings.Contains(err.Error(), "malformed") && !strings.Contains(err.Error(), "overrun") && !strings.Contains(err.Error(), "too costly to compile"):
			t.Errorf("%s: got %v, want it refused as malformed or overrun (or, for locals, which take no bytes, too costly to compile)", c.name, err)
		case allocated > 16<<20:
			t.Errorf("%s: refused after allocating %d MiB, want under 16", c.name, allocated>>20)
		case took > time.Second:
			t.Errorf("%s: refused after %v, want within 1s", c.name, took)
		}
	}
}

// TestAFunctionOfATypeThatDoesNotExistIsRefusedBeforeCompiling loads a
// module whose first function calls the second, of type 5 when there is
// one type: wazero's validator, checking the call before the second
// function, indexes the types with 5 and panics, which would end the host
// (FuzzModulePasses found it). The compile caps refuse it first.
func TestAFunctionOfATypeThatDoesNotExistIsRefusedBeforeCompiling(t *testing.T) {
	wasm := Module(
		Section(1, Vec([]byte{0x60, 0, 0})),
		Section(3, Vec([]byte{0}, []byte{5})),
		Section(10, Vec([]byte{4, 0, 0x10, 1, 0x0b}, []byte{2, 0, 0x0b})), // call 1; end
	)
	_, err := engine.Load(t.Context(), "bad-type", wasm, Options{})
	if want := "function 1 has type 5, which does not exist"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want an error with %q", err, want)
	}
}
