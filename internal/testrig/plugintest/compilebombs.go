package plugintest

import (
	"bytes"
	"slices"
)

// Compile bombs: wasm modules, assembled by hand, whose one function costs
// wazero far more time and memory to compile than its size suggests (see
// sandbox/internal/wasmpass/compilecaps.go). The code generators return instructions for
// CostlyModule, which reads local 0 (its parameter) as a branch condition.

// NestedBlocksBomb is the first compile bomb of issue 12: 300 KB of
// nested blocks, which took the server 53 s to compile.
func NestedBlocksBomb() []byte { return CostlyModule(1, 0, NestedBlocks(100_000)) }

// BrTablesBomb is the second compile bomb of issue 12: a megabyte of
// br_tables, here after 20,000 branches that deepen the dominator tree
// their targets' edges are checked against, which took minutes and
// gigabytes to compile.
func BrTablesBomb() []byte { return CostlyModule(1, 0, Branches(20_000), BrTables(16, 9, 100_000)) }

// CostlyModule is a module of n functions of type (i32) -> (), the first
// exported as "f", each with locals i32 locals besides its parameter and
// the concatenation of code as its body (without the final end).
func CostlyModule(n int, locals uint32, code ...[]byte) []byte {
	decl := []byte{0x00}
	if locals > 0 {
		decl = slices.Concat([]byte{0x01}, uleb(locals), []byte{0x7f})
	}
	body := slices.Concat(decl, slices.Concat(code...), []byte{0x0b})
	entry := slices.Concat(uleb(uint32(len(body))), body)
	return slices.Concat(
		[]byte("\x00asm\x01\x00\x00\x00"),
		section(1, []byte{0x01, 0x60, 0x01, 0x7f, 0x00}),                          // type 0: (i32) -> ()
		section(3, slices.Concat(uleb(uint32(n)), bytes.Repeat([]byte{0x00}, n))), // n functions of type 0
		section(7, []byte{0x01, 0x01, 'f', 0x00, 0x00}),                           // export "f": function 0
		section(10, slices.Concat(uleb(uint32(n)), bytes.Repeat(entry, n))),
	)
}

// NestedBlocks is n blocks nested in one another.
func NestedBlocks(n int) []byte {
	return slices.Concat(repeat(n, 0x02, 0x40), repeat(n, 0x0b)) // block ... end
}

// BrTables is n blocks nested in one another, the innermost holding count
// br_tables of targets targets each, spread over the enclosing blocks.
func BrTables(n, count, targets int) []byte {
	table := slices.Concat([]byte{0x02, 0x40, 0x20, 0x00, 0x0e}, uleb(uint32(targets))) // block, local.get 0, br_table
	for i := range targets {
		table = append(table, uleb(uint32(1+i%n))...)
	}
	table = append(table, 0x00, 0x0b) // the default target, end
	return slices.Concat(repeat(n, 0x02, 0x40), bytes.Repeat(table, count), repeat(n, 0x0b))
}

// Branches is n blocks one after the other, each left by a br_if.
func Branches(n int) []byte {
	return repeat(n, 0x02, 0x40, 0x20, 0x00, 0x0d, 0x00, 0x0b) // block, local.get 0, br_if 0, end
}

// LocalGets is n empty blocks one after the other, then k reads of local 0.
func LocalGets(n, k int) []byte {
	return slices.Concat(repeat(n, 0x02, 0x40, 0x0b), repeat(k, 0x20, 0x00, 0x1a)) // local.get 0, drop
}

// ReadLocals reads locals 1 to n.
func ReadLocals(n int) []byte {
	var code []byte
	for i := range n {
		code = slices.Concat(code, []byte{0x20}, uleb(uint32(i+1)), []byte{0x1a}) // local.get i+1, drop
	}
	return code
}

// LoopNest is n loops nested in one another, the innermost adding local 0
// to locals 1 to locals, each loop ending with a br_if back to its start.
func LoopNest(n, locals int) []byte {
	var inner []byte
	for i := range locals {
		l := uleb(uint32(i + 1))
		inner = slices.Concat(inner, []byte{0x20}, l, []byte{0x20, 0x00, 0x6a, 0x21}, l) // local i+1 += local 0
	}
	return slices.Concat(repeat(n, 0x03, 0x40), inner, repeat(n, 0x20, 0x00, 0x0d, 0x00, 0x0b))
}

func repeat(n int, code ...byte) []byte { return bytes.Repeat(code, n) }

// uleb encodes v as an unsigned LEB128 number.
func uleb(v uint32) []byte {
	var b []byte
	for ; v >= 0x80; v >>= 7 {
		b = append(b, byte(v)|0x80)
	}
	return append(b, byte(v))
}

func section(id byte, body []byte) []byte {
	return slices.Concat([]byte{id}, uleb(uint32(len(body))), body)
}
