// Package wasmtest assembles the WebAssembly modules that the tests of the
// sandbox and of its WebAssembly passes share.
package wasmtest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/plugintest"
)

// ULEB returns v as an unsigned LEB128 number.
func ULEB(v uint32) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		if v >>= 7; v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

// SLEB returns v as a signed LEB128 number (an i32.const immediate).
func SLEB(v int32) []byte {
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

// Name returns s as a wasm name: its length, then its bytes.
func Name(s string) []byte { return append(ULEB(uint32(len(s))), s...) }

// Vec returns a vector of items: their count, then the items.
func Vec(items ...[]byte) []byte {
	return slices.Concat(append([][]byte{ULEB(uint32(len(items)))}, items...)...)
}

// Section returns a section of id with body.
func Section(id byte, body []byte) []byte {
	return slices.Concat([]byte{id}, ULEB(uint32(len(body))), body)
}

// Module returns a module of sections, after the header.
func Module(sections ...[]byte) []byte {
	return slices.Concat(append([][]byte{[]byte("\x00asm\x01\x00\x00\x00")}, sections...)...)
}

// RunModule exports "run", which returns 0.
func RunModule() []byte {
	return Module(
		Section(1, Vec([]byte{0x60, 0x00, 0x01, 0x7f})), // type 0: () -> i32
		Section(3, Vec([]byte{0x00})),                   // function 0 of type 0
		Section(7, Vec(slices.Concat(Name("run"), []byte{0x00, 0x00}))),
		Section(10, Vec([]byte{0x04, 0x00, 0x41, 0x00, 0x0b})), // i32.const 0
	)
}

// SpinModule has a start function that never returns.
func SpinModule() []byte {
	return Module(
		Section(1, Vec([]byte{0x60, 0x00, 0x00})), // type 0: () -> ()
		Section(3, Vec([]byte{0x00})),
		Section(8, []byte{0x00}),                                                 // start: function 0
		Section(10, Vec([]byte{0x07, 0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b})), // loop br 0 end
	)
}

// ImportsModule imports and exports one item of every kind.
func ImportsModule() []byte {
	imp := func(module, name string, desc ...byte) []byte {
		return slices.Concat(Name(module), Name(name), desc)
	}
	exp := func(name string, kind byte) []byte { return slices.Concat(Name(name), []byte{kind, 0x00}) }
	return Module(
		Section(1, Vec([]byte{0x60, 0x00, 0x00})),
		Section(2, Vec(
			imp(abi.HostModule, "notify", 0x00, 0x00),
			imp("env", "table", 0x01, 0x70, 0x00, 0x01),
			imp("env", "memory", 0x02, 0x01, 0x01, 0x80, 0x02),
			imp("env", "global", 0x03, 0x7f, 0x00),
			imp("env", "ref", 0x03, 0x63, 0x70, 0x01),
			imp("env", "tag", 0x04, 0x00, 0x00),
			imp("wasi_snapshot_preview1", "fd_write", 0x00, 0x00),
		)),
		Section(0, slices.Concat(Name("note"), []byte("payload"))),
		Section(7, Vec(exp("run", 0x00), exp("memory", 0x02), exp("g", 0x03))),
	)
}

// RecursionModule is a module without loops whose export spin never
// returns in practice: it calls f(60), and f(n) calls f(n-1) twice.
func RecursionModule() []byte {
	f := []byte{0x00, 0x20, 0x00, 0x04, 0x40, // if n
		0x20, 0x00, 0x41, 0x01, 0x6b, 0x10, 0x00, // f(n-1)
		0x20, 0x00, 0x41, 0x01, 0x6b, 0x10, 0x00, // f(n-1)
		0x0b, 0x0b}
	spin := []byte{0x00, 0x41, 60, 0x10, 0x00, 0x0b}
	return Module(
		Section(1, Vec([]byte{0x60, 0x01, 0x7f, 0x00}, []byte{0x60, 0x00, 0x00})), // (i32) -> (), () -> ()
		Section(3, Vec([]byte{0x00}, []byte{0x01})),
		Section(7, Vec(slices.Concat(Name("spin"), []byte{0x00, 0x01}))),
		Section(10, Vec(slices.Concat([]byte{byte(len(f))}, f), slices.Concat([]byte{byte(len(spin))}, spin))),
	)
}

// Reference types and the limits of a table of them.
const (
	Funcref   = 0x70
	Externref = 0x6f
)

// TableType returns the type of a table of ref with limits min and, if
// given, max.
func TableType(ref byte, min uint32, max ...uint32) []byte {
	if len(max) == 0 {
		return slices.Concat([]byte{ref, 0x00}, ULEB(min))
	}
	return slices.Concat([]byte{ref, 0x01}, ULEB(min), ULEB(max[0]))
}

// TableModule is a reactor with one table of type table (TableType) and an
// export grow () -> i32 whose body, without locals, is code.
func TableModule(table []byte, code ...byte) []byte {
	body := append([]byte{0x01, 0x01, 0x7f}, code...) // one i32 local
	return Module(
		Section(1, Vec([]byte{0x60, 0x00, 0x01, 0x7f})), // type 0: () -> i32
		Section(3, Vec([]byte{0x00})),
		Section(4, Vec(table)),
		Section(7, Vec(slices.Concat(Name("grow"), []byte{0x00, 0x00}))),
		Section(10, Vec(slices.Concat(ULEB(uint32(len(body))), body))),
	)
}

// GrowOnce is the code of a grow that grows table 0, of reference type ref,
// by delta null references and returns 0 if table.grow returned want, else 1.
func GrowOnce(ref byte, delta, want int32) []byte {
	return slices.Concat(
		[]byte{0xd0, ref, 0x41}, SLEB(delta), // ref.null ref, i32.const delta
		[]byte{0xfc, 0x0f, 0x00, 0x41}, SLEB(want), // table.grow 0, i32.const want
		[]byte{0x47, 0x0b}, // i32.ne, end
	)
}

// invalidModule assembles a module with one memory and the types
// () -> i32 (type 0) and () -> () (type 1), whose function 0, of type 0,
// is exported as call_tool with code as its body (before its end), and
// sections more besides, put in their place: the shape of a plugin whose
// one flaw is in code.
func invalidModule(code []byte, more ...[]byte) []byte {
	body := slices.Concat([]byte{0x00}, code, []byte{0x0b})
	all := append([][]byte{
		Section(1, Vec([]byte{0x60, 0x00, 0x01, 0x7f}, []byte{0x60, 0x00, 0x00})),
		Section(3, Vec([]byte{0x00})),
		Section(5, Vec([]byte{0x00, 0x01})),
		Section(7, Vec(slices.Concat(Name("call_tool"), []byte{0x00, 0x00}))),
		Section(10, Vec(slices.Concat(ULEB(uint32(len(body))), body))),
	}, more...)
	slices.SortStableFunc(all, func(a, b []byte) int { return rank(a[0]) - rank(b[0]) })
	return Module(all...)
}

// rank is the position of section id in a module.
func rank(id byte) int {
	return slices.Index([]byte{1, 2, 3, 4, 5, 13, 6, 7, 8, 9, 12, 10, 11}, id)
}

// InvalidModules are modules that any validator refuses, each of which the
// rewrite of makeInterruptible would make valid if it renumbered or
// appended after indices without checking them: an index one past the
// last names what the rewrite adds.
var InvalidModules = map[string][]byte{
	// R1 of issue 23: global 0 does not exist, but the countdown would be
	// global 0, refilled at every iteration: the loop would never stop.
	"global.set of a global past the last": invalidModule([]byte{
		0x03, 0x40, // loop
		0x41, 0xff, 0xff, 0xff, 0xff, 0x07, 0x24, 0x00, // i32.const 0x7fffffff; global.set 0
		0x0c, 0x00, 0x0b, // br 0; end
		0x41, 0x00}), // i32.const 0
	"global.get of a global past the last": invalidModule([]byte{0x23, 0x00}),
	// Function 1 does not exist; after the rewrite it would be the
	// function that refills the countdown.
	"call of a function past the last":     invalidModule([]byte{0x10, 0x01, 0x41, 0x00}),
	"ref.func of a function past the last": invalidModule([]byte{0xd2, 0x01, 0x1a, 0x41, 0x00}),
	// Type 2 does not exist; the rewrite appends [i32] -> [i32] there.
	"call_indirect of a type past the last": invalidModule([]byte{0x41, 0x07, 0x41, 0x00, 0x11, 0x02, 0x00},
		Section(4, Vec([]byte{0x70, 0x00, 0x01}))),
	"export of a function past the last": Module(
		Section(1, Vec([]byte{0x60, 0x00, 0x00})),
		Section(3, Vec([]byte{0x00})),
		Section(7, Vec(slices.Concat(Name("run"), []byte{0x00, 0x01}))),
		Section(10, Vec([]byte{0x02, 0x00, 0x0b})),
	),
	"start function past the last": Module(
		Section(1, Vec([]byte{0x60, 0x00, 0x00})),
		Section(3, Vec([]byte{0x00})),
		Section(8, []byte{0x01}),
		Section(10, Vec([]byte{0x02, 0x00, 0x0b})),
	),
	"element naming a function past the last": invalidModule([]byte{0x41, 0x00},
		Section(4, Vec([]byte{0x70, 0x00, 0x01})),
		Section(9, Vec([]byte{0x00, 0x41, 0x00, 0x0b, 0x01, 0x01}))),
	"function of a type past the last": Module(
		Section(1, Vec([]byte{0x60, 0x00, 0x00})),
		Section(3, Vec([]byte{0x01})),
		Section(10, Vec([]byte{0x02, 0x00, 0x0b})),
	),
	// The type section declares two types and holds one: the rewrite
	// rewrote the count and appended its own types after the one.
	"type section whose count exceeds its entries": Module(
		Section(1, []byte{0x02, 0x60, 0x00, 0x00}),
		Section(3, Vec([]byte{0x00})),
		Section(10, Vec([]byte{0x02, 0x00, 0x0b})),
	),
}

// RealModules are a standard-Go test plugin ("go") and the JavaScript
// engine (QuickJS, C: "js"), by name.
func RealModules(t testing.TB) map[string][]byte {
	t.Helper()
	root, err := plugintest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(filepath.Join(root, "internal", "jsengine", "engine.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	guest, err := os.ReadFile(plugintest.Build(t, "sandbox/testdata/guest"))
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{"go": guest, "js": js}
}
