package wasmpass

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/mcphost/mcphost/internal/testrig/wasmtest"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// loopModule is a module assembled by hand with what makeInterruptible
// renumbers or instruments: an imported function (env.one, returning 1),
// loops calling a defined function directly and through a table (an
// element segment), a loop of memory.fill, exports and a name section.
//
//	run(n)  loops n times, adding inc(acc) to acc: returns n
//	fill(n) loops n times, filling 64 KiB with 7: returns the first byte
//	via(x)  calls inc through the table: returns x+1
func loopModule() []byte {
	leb := func(v uint32) []byte { return binary.AppendUvarint(nil, uint64(v)) }
	sec := func(id byte, parts ...[]byte) []byte {
		body := slices.Concat(parts...)
		return slices.Concat([]byte{id}, leb(uint32(len(body))), body)
	}
	fn := func(locals []byte, code ...byte) []byte {
		body := slices.Concat(locals, code, []byte{0x0b})
		return slices.Concat(leb(uint32(len(body))), body)
	}
	name := func(s string) []byte { return slices.Concat(leb(uint32(len(s))), []byte(s)) }
	run := fn([]byte{0x01, 0x01, 0x7f}, // one i32 local: acc
		0x03, 0x40, // loop
		0x20, 0x01, 0x10, 0x02, 0x21, 0x01, // acc = inc(acc)
		0x20, 0x00, 0x41, 0x01, 0x6b, 0x22, 0x00, 0x0d, 0x00, // n--; br_if n
		0x0b, 0x20, 0x01) // end; acc
	inc := fn([]byte{0x00}, 0x20, 0x00, 0x10, 0x00, 0x6a) // x + one()
	fill := fn([]byte{0x00},
		0x03, 0x40, // loop
		0x41, 0x00, 0x41, 0x07, 0x41, 0x80, 0x80, 0x04, 0xfc, 0x0b, 0x00, // memory.fill 0, 7, 65536
		0x20, 0x00, 0x41, 0x01, 0x6b, 0x22, 0x00, 0x0d, 0x00, // n--; br_if n
		0x0b, 0x41, 0x00, 0x2d, 0x00, 0x00) // end; i32.load8_u 0
	via := fn([]byte{0x00}, 0x20, 0x00, 0x41, 0x00, 0x11, 0x00, 0x00) // call_indirect type 0, table 0, element 0
	funcNames := slices.Concat([]byte{0x02}, leb(1), name("run"), leb(2), name("inc"))
	names := slices.Concat([]byte{0x01}, leb(uint32(len(funcNames))), funcNames) // subsection 1: function names
	return slices.Concat(
		[]byte("\x00asm\x01\x00\x00\x00"),
		sec(1, []byte{0x02, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x60, 0x00, 0x01, 0x7f}), // (i32) -> i32, () -> i32
		sec(2, []byte{0x01}, name("env"), name("one"), []byte{0x00, 0x01}),         // env.one: function 0
		sec(3, []byte{0x04, 0x00, 0x00, 0x00, 0x00}),                               // run, inc, fill, via
		sec(4, []byte{0x01, 0x70, 0x01, 0x01, 0x01}),                               // a table of one wasmtest.Funcref
		sec(5, []byte{0x01, 0x00, 0x01}),                                           // a memory of one page
		sec(7, []byte{0x03}, name("run"), []byte{0x00, 0x01}, name("fill"), []byte{0x00, 0x03}, name("via"), []byte{0x00, 0x04}),
		sec(9, []byte{0x01, 0x00, 0x41, 0x00, 0x0b, 0x01, 0x02}), // table[0] = inc
		sec(10, []byte{0x04}, run, inc, fill, via),
		sec(0, name("name"), names),
		sec(0, name(".debug_info"), []byte{1, 2, 3}),
	)
}

// instantiateCounting compiles wasm with wazero, without its own
// interruption checks, beside an interrupt that counts its calls.
func instantiateCounting(t *testing.T, wasm []byte) (api.Module, *int) {
	t.Helper()
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	t.Cleanup(func() { r.Close(ctx) })
	calls := new(int)
	if _, err := r.NewHostModuleBuilder(InterruptModule).NewFunctionBuilder().
		WithFunc(func() { *calls++ }).Export(InterruptName).Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.NewHostModuleBuilder("env").NewFunctionBuilder().
		WithFunc(func() int32 { return 1 }).Export("one").Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	mod, err := r.Instantiate(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	return mod, calls
}

func call1(t *testing.T, mod api.Module, name string, arg uint32) uint32 {
	t.Helper()
	res, err := mod.ExportedFunction(name).Call(context.Background(), uint64(arg))
	if err != nil {
		t.Fatalf("%s(%d): %v", name, arg, err)
	}
	return uint32(res[0])
}

// TestInterruptibleModulesAskTheHostEveryBudget checks the rewrite of
// makeInterruptible: the module computes what it did before, and calls
// interrupt once every interruptBudget units: function starts, loop
// iterations, calls of imports (importCallCost each) and 4 KiB units of
// bulk memory instructions (one more for the instruction).
func TestInterruptibleModulesAskTheHostEveryBudget(t *testing.T) {
	wasm, err := makeInterruptible(loopModule())
	if err != nil {
		t.Fatal(err)
	}
	mod, calls := instantiateCounting(t, wasm)
	if got := call1(t, mod, "run", 100_000); got != 100_000 {
		t.Errorf("run(100000) = %d after the rewrite, want 100000", got)
	}
	// 1 for run's start, then each iteration: 1 for the loop head, 1 for
	// inc's start, importCallCost for inc's call of env.one.
	units := 1 + 100_000*(2+importCallCost)
	if want := units / interruptBudget; *calls != want {
		t.Errorf("run(100000) called interrupt %d times, want %d", *calls, want)
	}
	*calls = 0
	if got := call1(t, mod, "fill", 1000); got != 7 {
		t.Errorf("fill(1000) = %d after the rewrite, want 7", got)
	}
	// 1 for fill's start, then each iteration: 1 for the loop head,
	// 1 + 65536/4096 for memory.fill. The countdown goes on from where run
	// left it.
	if want := (units%interruptBudget + 1 + 1000*18) / interruptBudget; *calls != want {
		t.Errorf("fill(1000) called interrupt %d times, want %d", *calls, want)
	}
	if got := call1(t, mod, "via", 41); got != 42 {
		t.Errorf("via(41) = %d after the rewrite: the table's function was not renumbered", got)
	}
	if got := mod.ExportedFunction("run").Definition().Name(); got != "run" {
		t.Errorf("the name section names the run export %q after the rewrite", got)
	}
	if bytes.Contains(wasm, []byte(".debug_info")) {
		t.Error("the rewrite kept a DWARF section, whose code offsets no longer hold")
	}
}

// TestAModuleWithoutCodeIsLeftAsItIs checks that a module in which
// nothing can run is not rewritten.
func TestAModuleWithoutCodeIsLeftAsItIs(t *testing.T) {
	wasm := []byte("\x00asm\x01\x00\x00\x00\x01\x04\x01\x60\x00\x00")
	got, err := makeInterruptible(wasm)
	if err != nil || !bytes.Equal(got, wasm) {
		t.Errorf("makeInterruptible(a module without code) = % x, %v; want it unchanged", got, err)
	}
}

// TestInterruptibleModulesWithoutImportsOrGlobals checks that the rewrite
// adds the sections the import and the countdown need when a module has
// none, in their place.
func TestInterruptibleModulesWithoutImportsOrGlobals(t *testing.T) {
	loop := []byte{0x03, 0x40, 0x20, 0x00, 0x41, 0x01, 0x6b, 0x22, 0x00, 0x0d, 0x00, 0x0b} // loop: n--; br_if n
	body := slices.Concat([]byte{0x00}, loop, []byte{0x41, 0x05, 0x0b})                    // then 5
	wasm := slices.Concat([]byte("\x00asm\x01\x00\x00\x00"),
		[]byte{0x01, 0x06, 0x01, 0x60, 0x01, 0x7f, 0x01, 0x7f}, // (i32) -> i32
		[]byte{0x03, 0x02, 0x01, 0x00},
		[]byte{0x07, 0x07, 0x01, 0x03, 'r', 'u', 'n', 0x00, 0x00},
		[]byte{0x0a, byte(len(body) + 2), 0x01, byte(len(body))}, body)
	got, err := makeInterruptible(wasm)
	if err != nil {
		t.Fatal(err)
	}
	mod, calls := instantiateCounting(t, got)
	if r := call1(t, mod, "run", 40_000); r != 5 || *calls != 40_000/interruptBudget {
		t.Errorf("run(40000) = %d with %d interrupts, want 5 with %d", r, *calls, 40_000/interruptBudget)
	}
}

// TestRealModulesAreInterruptible rewrites a standard-Go test plugin and
// the JavaScript engine (QuickJS, C) and checks that wazero compiles them;
// every other test runs its plugins rewritten.
func TestRealModulesAreInterruptible(t *testing.T) {
	for name, wasm := range wasmtest.RealModules(t) {
		got, err := makeInterruptible(wasm)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		ctx := context.Background()
		r := wazero.NewRuntime(ctx)
		if _, err := r.CompileModule(ctx, got); err != nil {
			t.Errorf("%s: wazero refuses the rewritten module: %v", name, err)
		}
		r.Close(ctx)
	}
}

// indirectModule imports env.one (function 0, () -> i32) and defines
// two() (function 1, () -> i32), puts target (0 or 1) in the table's
// element 0 with an active element segment of the given flags (0: a
// function index, 4: a ref.func expression), and exports run(n), which
// calls element 0 through call_indirect n times and returns the sum.
func indirectModule(target byte, flags byte) []byte {
	run := []byte{0x01, 0x01, 0x7f, // one i32 local: acc
		0x03, 0x40, // loop
		0x20, 0x01, 0x41, 0x00, 0x11, 0x00, 0x00, 0x6a, 0x21, 0x01, // acc += call_indirect type 0 table 0 (elem 0)
		0x20, 0x00, 0x41, 0x01, 0x6b, 0x22, 0x00, 0x0d, 0x00, // n--; br_if n
		0x0b, 0x20, 0x01, 0x0b} // end; acc
	two := []byte{0x00, 0x41, 0x02, 0x0b}
	entry := []byte{target}
	if flags == 4 {
		entry = []byte{0xd2, target, 0x0b} // ref.func target
	}
	return wasmtest.Module(
		wasmtest.Section(1, wasmtest.Vec([]byte{0x60, 0x00, 0x01, 0x7f}, []byte{0x60, 0x01, 0x7f, 0x01, 0x7f})),
		wasmtest.Section(2, wasmtest.Vec(slices.Concat(wasmtest.Name("env"), wasmtest.Name("one"), []byte{0x00, 0x00}))),
		wasmtest.Section(3, wasmtest.Vec([]byte{0x00}, []byte{0x01})),
		wasmtest.Section(4, wasmtest.Vec([]byte{0x70, 0x00, 0x01})),
		wasmtest.Section(7, wasmtest.Vec(slices.Concat(wasmtest.Name("run"), []byte{0x00, 0x02}))),
		wasmtest.Section(9, wasmtest.Vec(slices.Concat([]byte{flags, 0x41, 0x00, 0x0b}, wasmtest.Vec(entry)))),
		wasmtest.Section(10, wasmtest.Vec(slices.Concat(wasmtest.ULEB(uint32(len(two))), two), slices.Concat(wasmtest.ULEB(uint32(len(run))), run))),
	)
}

// TestACallIndirectThatCanReachAnImportIsChargedAsOne checks that a
// call_indirect through a table that an element segment fills with an
// import counts importCallCost, as a direct call of the import does, and
// that one through a table of the module's own functions stays at no
// charge (R2 of issue 23: a loop of call_indirects of poll_oneoff looked
// at its context once in hours).
func TestACallIndirectThatCanReachAnImportIsChargedAsOne(t *testing.T) {
	const n = 100_000
	for _, c := range []struct {
		name          string
		target, flags byte
		sum           uint32
		perIteration  int
	}{
		{"an import by index", 0, 0, n, 1 + importCallCost},
		{"an import by ref.func", 0, 4, n, 1 + importCallCost},
		{"a defined function", 1, 0, 2 * n, 2}, // the loop head and two's start
	} {
		t.Run(c.name, func(t *testing.T) {
			wasm, err := makeInterruptible(indirectModule(c.target, c.flags))
			if err != nil {
				t.Fatal(err)
			}
			mod, calls := instantiateCounting(t, wasm)
			if got := call1(t, mod, "run", n); got != c.sum {
				t.Errorf("run(%d) = %d after the rewrite, want %d", n, got, c.sum)
			}
			if want := (1 + n*c.perIteration) / interruptBudget; *calls != want {
				t.Errorf("run(%d) called interrupt %d times, want %d", n, *calls, want)
			}
		})
	}
}

// refusedAsMalformed reports whether err refuses a module for what it is,
// malformed to the reader.
func refusedAsMalformed(err error) bool {
	return errors.Is(err, ErrMalformed) || errors.Is(err, ErrSectionOverrun) || errors.Is(err, ErrTruncated)
}

// TestTheRewriteRefusesIndicesOutOfRange checks makeInterruptible on its
// own: every index it renumbers or appends after is range-checked, so that
// it refuses an invalid module rather than make it valid.
func TestTheRewriteRefusesIndicesOutOfRange(t *testing.T) {
	for name, wasm := range wasmtest.InvalidModules {
		t.Run(name, func(t *testing.T) {
			if _, err := makeInterruptible(wasm); !refusedAsMalformed(err) {
				t.Errorf("makeInterruptible: %v; want it refused as malformed", err)
			}
		})
	}
}
