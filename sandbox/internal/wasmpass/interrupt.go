package wasmpass

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// How a call is stopped when its context ends.
//
// wazero's own way, RuntimeConfig.WithCloseOnContextDone, compiles at the
// head of every loop a call through a trampoline into Go that checks
// whether the module was closed: some 30 ns for every iteration of every
// loop, which halved the speed of plugins and made a TinyGo plugin's
// collector six to nine times slower (RATIONALE.md, "How is a call
// stopped when its context ends?").
//
// So the sandbox compiles the check into the module instead
// (makeInterruptible): a countdown in a global of the module's own, which
// every function's start and every loop head decrements by one in place,
// and every bulk memory or table instruction by one more per 4 KiB it
// moves and every call of an imported function by importCallCost, through
// a small function added to the module (a call_indirect through a table
// that may hold an import counts as a call of one); when it runs out, a budget is
// added and the module calls InterruptModule's interrupt, which ends the
// call if its context has ended. A loop iteration then costs a few
// instructions, and the host is asked once every interruptBudget: within
// microseconds to a few milliseconds of the end of the context.
//
// Closing a module no longer stops its code, which no longer checks; a
// call ends at its next look at its context instead.
const (
	// InterruptModule and InterruptName name the function an
	// interruptible module imports and calls when its count runs out: the
	// host serves it, and ends the call there if its context has ended.
	InterruptModule = "mcphost:sandbox"
	InterruptName   = "interrupt"
	// interruptBudget is the countdown: loop iterations, 4 KiB units of
	// bulk memory and table instructions, and calls of imported functions
	// at importCallCost, between two looks at the call's context. Each
	// look is a call into Go (some 100 ns), one every 1,024 loop
	// iterations at most.
	interruptBudget = 1024
	// importCallCost is what a call of an imported function counts
	// (1 + 64 KiB / 4 KiB, pushed through weigh): host functions take
	// microseconds, and a loop of them should look at its context every
	// few dozen.
	importCallCost = 17
)

// Section ids the rewrite reads besides those of reader.go and
// compilecaps.go, in the order a module holds them.
const (
	sectionGlobal    = 6
	sectionStart     = 8
	sectionElement   = 9
	sectionDataCount = 12
)

// sectionRank is the position of each non-custom section id in a module.
var sectionRank = map[byte]int{1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 13: 6, 6: 7, 7: 8, 8: 9, 9: 10, 12: 11, 10: 12, 11: 13}

// Bulk instructions (0xfc prefix) whose last operand is a count of bytes
// or table elements: memory.init, memory.copy, memory.fill, table.init,
// table.copy, table.fill.
func isBulk(in instr) bool {
	return in.op == 0xfc && (in.sub == 8 || in.sub == 10 || in.sub == 11 || in.sub == 12 || in.sub == 14 || in.sub == 17)
}

// moduleLayout is what makeInterruptible reads of a module before
// rewriting it: the sizes of the index spaces it renumbers or appends to,
// against which it range-checks every index it meets, so that an index
// out of range never comes to name what the rewrite adds.
type moduleLayout struct {
	types          int // function types
	voidType       int // the index of the type [] -> [], -1 if none
	weighType      int // the index of the type [i32] -> [i32], -1 if none
	importedFuncs  int
	importedGlobal int
	globals        int // defined
	funcs          int // defined, as the function section declares them
	bodies         int // in the code section
	tables         int // imported and defined
	importedTables int
	rank           int // of the last section read, which orders them
}

// makeInterruptible returns wasm with an interruption check compiled in:
// a countdown of a global added to the module at the start of every
// function and at every loop head, a call to an added function that
// counts down before every bulk memory or table instruction and every
// call of an import, and an import of InterruptModule's interrupt, which
// they call when the count runs out. (wazero's own checks are at loop heads only, so that code
// without loops, a recursion that calls itself twice, ran on past its
// timeout.) Adding the import shifts the index of every function the
// module defines by one; calls, references, exports, the start function,
// element segments and the name section are renumbered. DWARF sections,
// whose code offsets no longer hold, are dropped. A module without code is
// returned as it is.
func makeInterruptible(wasm []byte) ([]byte, error) {
	l := moduleLayout{voidType: -1, weighType: -1}
	if err := sections(wasm, l.read); err != nil {
		return nil, err
	}
	if l.bodies != l.funcs {
		return nil, fmt.Errorf("%w: %d function bodies for %d functions", ErrMalformed, l.bodies, l.funcs)
	}
	if l.funcs == 0 {
		return wasm, nil
	}
	w := rewrite{moduleLayout: l, reachImports: map[uint32]bool{}}
	if l.voidType < 0 {
		w.voidType = w.addType([]byte{0x60, 0, 0})
	}
	if l.weighType < 0 {
		w.weighType = w.addType([]byte{0x60, 1, 0x7f, 1, 0x7f})
	}
	w.interrupt = uint32(l.importedFuncs)
	w.refill = int(l.importedFuncs) + 1 + l.funcs
	w.weigh = w.refill + 1
	w.counter = uint32(l.importedGlobal + l.globals)
	out := append([]byte(nil), wasm[:8]...)
	inserted := map[byte]bool{}
	insertBefore := func(rank int) {
		for _, id := range []byte{sectionImport, sectionGlobal} {
			if !inserted[id] && sectionRank[id] < rank {
				inserted[id] = true
				out = appendSection(out, id, w.section(id, 0, nil))
			}
		}
	}
	err := sections(wasm, func(id byte, _ int, body *reader) error {
		if id == sectionCustom {
			payload := body.off
			name, err := body.name()
			if err != nil {
				return err
			}
			switch {
			case strings.HasPrefix(name, ".debug"):
				return nil
			case name == "name":
				// A name section that does not read is refused, not
				// dropped: dropping it made a module the validator refuses
				// (a name not UTF-8) valid.
				b, ok := w.names(body)
				if !ok {
					return fmt.Errorf("%w: the name section does not read", ErrMalformed)
				}
				out = appendSection(out, id, append(appendName(nil, name), b...))
				return nil
			}
			out = appendSection(out, id, body.buf[payload:])
			return nil
		}
		insertBefore(sectionRank[id])
		inserted[id] = true
		b, err := w.sectionFrom(id, body)
		if err != nil {
			return err
		}
		out = appendSection(out, id, b)
		return nil
	})
	if err != nil {
		return nil, err
	}
	insertBefore(len(sectionRank) + 1)
	return out, nil
}

// read records what makeInterruptible needs of one section, and checks
// that the sections come in their order, once each, and that the indices
// of types the functions name are in range.
func (l *moduleLayout) read(id byte, _ int, body *reader) error {
	if id != sectionCustom {
		rank, ok := sectionRank[id]
		if !ok || rank <= l.rank {
			return fmt.Errorf("%w: section %d is unknown, out of order or repeated", ErrMalformed, id)
		}
		l.rank = rank
	}
	switch id {
	case sectionType:
		return body.vec(func() error {
			at := body.off
			p, r, err := body.funcType()
			switch sig := string(body.buf[at:body.off]); {
			case err != nil:
			case p == 0 && r == 0 && l.voidType < 0:
				l.voidType = l.types
			case sig == "\x60\x01\x7f\x01\x7f" && l.weighType < 0:
				l.weighType = l.types
			}
			l.types++
			return err
		})
	case sectionImport:
		return body.vec(func() error {
			_, kind, _, err := body.importHead()
			if err != nil {
				return err
			}
			switch kind {
			case kindFunc:
				l.importedFuncs++
				return l.typeIndex(body)
			case kindTable:
				l.tables++
				l.importedTables++
			case kindGlobal:
				l.importedGlobal++
			}
			return body.importDesc(kind)
		})
	case sectionFunction:
		return body.vec(func() error {
			l.funcs++
			return l.typeIndex(body)
		})
	case sectionTable:
		n, err := body.u32() // capTables reads the tables
		l.tables += int(n)
		return err
	case sectionGlobal:
		return body.vec(func() error {
			if err := body.valType(); err != nil {
				return err
			}
			if _, err := body.byte(); err != nil {
				return err
			}
			// A global's initializer may read only the globals before it.
			err := body.instructions(l.checkIndices)
			l.globals++
			return err
		})
	case sectionCode:
		n, err := body.u32() // the bodies are read when they are rewritten
		l.bodies = int(n)
		return err
	}
	return nil
}

// typeIndex reads the index of a function's type and checks that it is
// in range.
func (l *moduleLayout) typeIndex(r *reader) error {
	i, err := r.u32()
	if err == nil && int64(i) >= int64(l.types) {
		err = fmt.Errorf("%w: type index %d out of range (%d types)", ErrMalformed, i, l.types)
	}
	return err
}

// checkIndices returns an error when in names a function, global or type
// out of the module's range, or a call_indirect's table.
func (l *moduleLayout) checkIndices(in instr) error {
	var what string
	var index uint32
	var size int
	switch {
	case in.op == 0x10 || in.op == 0xd2: // call, ref.func
		what, index, size = "function", in.imm, l.importedFuncs+l.funcs
	case in.op == 0x23 || in.op == 0x24: // global.get, global.set
		what, index, size = "global", in.imm, l.importedGlobal+l.globals
	case in.op == 0x11 && int64(in.imm2) >= int64(l.tables): // call_indirect
		what, index, size = "table", in.imm2, l.tables
	case in.op == 0x11:
		what, index, size = "type", in.imm, l.types
	case (in.op == 0x02 || in.op == 0x03 || in.op == 0x04) && in.blockType >= 0:
		what, index, size = "type", uint32(in.blockType), l.types
	default:
		return nil
	}
	if int64(index) >= int64(size) {
		return fmt.Errorf("%w: %s index %d out of range (%d) at offset %d", ErrMalformed, what, index, size, in.at)
	}
	return nil
}

// rewrite is the rewriting of one module by makeInterruptible.
type rewrite struct {
	moduleLayout
	newTypes  []byte // appended to the type section
	added     int    // types appended
	interrupt uint32 // the function index of the interrupt import
	refill    int    // the index of the function called when the count runs out
	weigh     int    // the index of the function before bulk instructions
	counter   uint32 // the index of the countdown global
	// reachImports are the tables a call_indirect may find an import in:
	// imported and exported tables, and those an active element segment
	// puts an import in. anyReachImport: every table may, since the
	// module can take a reference to an import (a ref.func of it in a
	// global or a passive or declarative element segment, or its export)
	// and store it in any table. The rewrite reads them before the code.
	reachImports   map[uint32]bool
	anyReachImport bool
	// refsImport: the last element or constant expression read named an
	// import.
	refsImport bool
}

// callsMayReachImport reports whether a call_indirect through table may
// call an import, a host function: it is then charged as a call of one.
func (w *rewrite) callsMayReachImport(table uint32) bool {
	return w.anyReachImport || int(table) < w.importedTables || w.reachImports[table]
}

// addType appends the function type sig and returns its index.
func (w *rewrite) addType(sig []byte) int {
	w.newTypes = append(w.newTypes, sig...)
	w.added++
	return w.types + w.added - 1
}

// fn returns the new index of the function at index i.
func (w *rewrite) fn(i uint32) uint32 {
	if i >= w.interrupt {
		return i + 1
	}
	return i
}

// fnChecked returns the new index of the function at index i, or an error
// when there is no such function.
func (w *rewrite) fnChecked(i uint32) (uint32, error) {
	if int64(i) >= int64(w.importedFuncs+w.funcs) {
		return 0, fmt.Errorf("%w: function index %d out of range (%d)", ErrMalformed, i, w.importedFuncs+w.funcs)
	}
	return w.fn(i), nil
}

// section returns the new body of a section the rewrite adds to, from its
// old count of entries and their bytes (0 and nil for a section the module
// lacks).
func (w *rewrite) section(id byte, n int, old []byte) []byte {
	switch id {
	case sectionType:
		return append(append(binary.AppendUvarint(nil, uint64(n+w.added)), old...), w.newTypes...)
	case sectionImport:
		b := append(binary.AppendUvarint(nil, uint64(n+1)), old...)
		b = append(appendName(appendName(b, InterruptModule), InterruptName), kindFunc)
		return binary.AppendUvarint(b, uint64(w.voidType))
	case sectionFunction:
		b := append(binary.AppendUvarint(nil, uint64(n+2)), old...)
		return binary.AppendUvarint(binary.AppendUvarint(b, uint64(w.voidType)), uint64(w.weighType))
	}
	// sectionGlobal: an i32, mutable, starting at interruptBudget.
	b := append(binary.AppendUvarint(nil, uint64(n+1)), old...)
	b = append(b, 0x7f, 0x01, 0x41)
	return append(appendSLEB(b, interruptBudget), 0x0b)
}

// sectionFrom returns the new body of section id, whose old body is body,
// which it must read to its end.
func (w *rewrite) sectionFrom(id byte, body *reader) ([]byte, error) {
	b, err := w.renumberSection(id, body)
	renumbered := id == sectionGlobal || id == sectionExport || id == sectionStart || id == sectionElement || id == sectionCode
	if err == nil && renumbered && body.off != len(body.buf) {
		err = fmt.Errorf("%w: %d unread bytes at the end of the section", ErrMalformed, len(body.buf)-body.off)
	}
	return b, err
}

// renumberSection returns the new body of section id, whose old body is
// body.
func (w *rewrite) renumberSection(id byte, body *reader) ([]byte, error) {
	switch id {
	case sectionType, sectionImport, sectionFunction:
		count, _ := body.u32() // read before: the section is valid
		return w.section(id, int(count), body.buf[body.off:]), nil
	case sectionGlobal:
		b, err := w.renumberVec(body, func(out []byte) ([]byte, error) {
			at := body.off
			if err := body.valType(); err != nil {
				return nil, err
			}
			if _, err := body.byte(); err != nil {
				return nil, err
			}
			w.refsImport = false
			out, err := w.expr(append(out, body.buf[at:body.off]...), body)
			w.anyReachImport = w.anyReachImport || w.refsImport
			return out, err
		})
		if err != nil {
			return nil, err
		}
		count, n := binary.Uvarint(b)
		return w.section(id, int(count), b[n:]), nil
	case sectionExport:
		return w.renumberVec(body, func(out []byte) ([]byte, error) {
			at := body.off
			if _, err := body.name(); err != nil {
				return nil, err
			}
			kind, err := body.byte()
			if err != nil {
				return nil, err
			}
			indexAt := body.off
			i, err := body.u32()
			if err != nil {
				return nil, err
			}
			switch {
			case kind == kindFunc:
				w.anyReachImport = w.anyReachImport || int64(i) < int64(w.importedFuncs)
				i, err = w.fnChecked(i)
			case kind == kindTable:
				w.reachImports[i] = true
			case kind == kindGlobal && int64(i) >= int64(w.importedGlobal+w.globals):
				err = fmt.Errorf("%w: global index %d out of range (%d)", ErrMalformed, i, w.importedGlobal+w.globals)
			}
			return binary.AppendUvarint(append(out, body.buf[at:indexAt]...), uint64(i)), err
		})
	case sectionStart:
		i, err := body.u32()
		if err == nil {
			i, err = w.fnChecked(i)
		}
		return binary.AppendUvarint(nil, uint64(i)), err
	case sectionElement:
		return w.renumberVec(body, func(out []byte) ([]byte, error) { return w.element(out, body) })
	case sectionCode:
		b, err := w.renumberVec(body, func(out []byte) ([]byte, error) { return w.body(out, body) })
		if err != nil {
			return nil, err
		}
		count, n := binary.Uvarint(b)
		b = append(binary.AppendUvarint(nil, count+2), b[n:]...)
		for _, f := range [][]byte{w.refillBody(), w.weighBody()} {
			b = append(binary.AppendUvarint(b, uint64(len(f))), f...)
		}
		return b, nil
	}
	return body.buf[body.off:], nil
}

// renumberVec rewrites the vector body holds, entry by entry.
func (w *rewrite) renumberVec(body *reader, entry func(out []byte) ([]byte, error)) ([]byte, error) {
	n, err := body.u32()
	if err != nil {
		return nil, err
	}
	out := binary.AppendUvarint(nil, uint64(n))
	for ; n > 0; n-- {
		if out, err = entry(out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// expr copies the constant expression at r to out, renumbering ref.func.
func (w *rewrite) expr(out []byte, r *reader) ([]byte, error) {
	err := r.instructions(func(in instr) error {
		if err := w.checkIndices(in); err != nil {
			return err
		}
		if in.op == 0xd2 {
			w.refsImport = w.refsImport || in.imm < w.interrupt
			out = binary.AppendUvarint(append(out, in.op), uint64(w.fn(in.imm)))
		} else {
			out = append(out, r.buf[in.at:in.end]...)
		}
		return nil
	})
	return out, err
}

// element copies one element segment at r to out, renumbering its
// functions.
func (w *rewrite) element(out []byte, r *reader) ([]byte, error) {
	flags, err := r.u32()
	if err != nil {
		return nil, err
	}
	out = binary.AppendUvarint(out, uint64(flags))
	if flags > 7 {
		return nil, fmt.Errorf("%w: element segment flags %d", ErrMalformed, flags)
	}
	var table uint32
	if flags&2 != 0 && flags&1 == 0 { // a table index
		if table, err = r.u32(); err != nil {
			return nil, err
		}
		out = binary.AppendUvarint(out, uint64(table))
	}
	if flags&1 == 0 { // an offset
		if out, err = w.expr(out, r); err != nil {
			return nil, err
		}
	}
	if flags&3 != 0 { // an element kind or reference type
		b, err := r.byte()
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	w.refsImport = false
	out, err = w.renumberVecAt(out, r, func(out []byte) ([]byte, error) {
		if flags&4 != 0 {
			return w.expr(out, r)
		}
		i, err := r.u32()
		if err == nil {
			w.refsImport = w.refsImport || i < w.interrupt
			i, err = w.fnChecked(i)
		}
		return binary.AppendUvarint(out, uint64(i)), err
	})
	switch {
	case !w.refsImport:
	case flags&1 == 0: // active: in its table
		w.reachImports[table] = true
	default: // passive or declarative: in any table, by table.init or ref.func
		w.anyReachImport = true
	}
	return out, err
}

// renumberVecAt is renumberVec, appending to out.
func (w *rewrite) renumberVecAt(out []byte, r *reader, entry func(out []byte) ([]byte, error)) ([]byte, error) {
	b, err := w.renumberVec(r, entry)
	return append(out, b...), err
}

// body copies one function body at r to out (with its size), renumbering
// calls and references and adding the checks.
func (w *rewrite) body(out []byte, r *reader) ([]byte, error) {
	fn, err := r.sized("body")
	if err != nil {
		return nil, err
	}
	start := fn.off
	if _, err := fn.locals(); err != nil {
		return nil, err
	}
	b := append(make([]byte, 0, len(fn.buf)-start+64), fn.buf[start:fn.off]...)
	b = w.tick(b) // at the function's start
	err = fn.instructions(func(in instr) error {
		if err := w.checkIndices(in); err != nil {
			return err
		}
		switch {
		case in.op == 0x10 && in.imm < w.interrupt: // a call of an import: weigh 64 KiB first
			b = binary.AppendUvarint(append(w.chargeImportCall(b), in.op), uint64(in.imm))
			return nil
		case in.op == 0x11 && w.callsMayReachImport(in.imm2): // a call_indirect that may call an import
			b = w.chargeImportCall(b)
		case in.op == 0x10 || in.op == 0xd2: // call, ref.func
			b = binary.AppendUvarint(append(b, in.op), uint64(w.fn(in.imm)))
			return nil
		case isBulk(in):
			b = binary.AppendUvarint(append(b, 0x10), uint64(w.weigh))
		}
		b = append(b, fn.buf[in.at:in.end]...)
		if in.op == 0x03 { // loop
			b = w.tick(b)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if fn.off != len(fn.buf) {
		return nil, fmt.Errorf("%w: %d bytes after the end of a function body", ErrMalformed, len(fn.buf)-fn.off)
	}
	return append(binary.AppendUvarint(out, uint64(len(b))), b...), nil
}

// chargeImportCall appends to b the charge of a call of an import,
// importCallCost: the weigh of 64 KiB, whose result is dropped. It leaves
// the stack as it was.
func (w *rewrite) chargeImportCall(b []byte) []byte {
	b = append(b, 0x41, 0x80, 0x80, 0x04) // i32.const 65536
	b = binary.AppendUvarint(append(b, 0x10), uint64(w.weigh))
	return append(b, 0x1a) // drop
}

// countdown is the code that subtracts what cost pushes (an i32) from the
// global and, when the count runs out, calls refill: so interrupt is
// called once for every interruptBudget units.
func (w *rewrite) countdown(b, cost []byte) []byte {
	b = w.global(b, 0x23)                // global.get
	b = append(append(b, cost...), 0x6b) // i32.sub
	b = w.global(b, 0x24)                // global.set
	b = w.global(b, 0x23)
	b = append(b, 0x41, 0, 0x4c, 0x04, 0x40) // i32.const 0; i32.le_s; if
	b = binary.AppendUvarint(append(b, 0x10), uint64(w.refill))
	return append(b, 0x0b) // end
}

// tick appends the check at a function's start and a loop's head to b: a
// cost of one, counted down in place (a call there, taken at every
// iteration of every loop, made a TinyGo plugin's collector a quarter
// slower).
func (w *rewrite) tick(b []byte) []byte {
	return w.countdown(b, []byte{0x41, 0x01}) // i32.const 1
}

// global appends the instruction op (global.get or global.set) of the
// countdown global to b.
func (w *rewrite) global(b []byte, op byte) []byte {
	return binary.AppendUvarint(append(b, op), uint64(w.counter))
}

// refillBody is the function called when the count runs out: it adds a
// budget to the count and calls interrupt.
func (w *rewrite) refillBody() []byte {
	b := w.global([]byte{0x00}, 0x23) // no locals; global.get
	b = appendSLEB(append(b, 0x41), interruptBudget)
	b = w.global(append(b, 0x6a), 0x24) // i32.add; global.set
	b = binary.AppendUvarint(append(b, 0x10), uint64(w.interrupt))
	return append(b, 0x0b)
}

// weighBody is the function called before a bulk instruction, with its
// count of bytes or elements, which it returns: a cost of one and one more
// per 4 KiB.
func (w *rewrite) weighBody() []byte {
	cost := []byte{0x20, 0x00, 0x41, 12, 0x76, 0x41, 0x01, 0x6a} // (n >> 12) + 1
	b := w.countdown([]byte{0x00}, cost)
	return append(b, 0x20, 0x00, 0x0b) // local.get 0
}

// names returns the payload of the name section at r with its function
// indices renumbered (function names, local names and label names; other
// subsections as they are), or false when it cannot be read, which
// refuses the module: dropping the section would make valid a module the
// validator refuses.
func (w *rewrite) names(r *reader) ([]byte, bool) {
	var out []byte
	for r.off < len(r.buf) {
		id, err := r.byte()
		if err != nil {
			return nil, false
		}
		sub, err := r.sized("subsection")
		if err != nil {
			return nil, false
		}
		b := sub.buf[sub.off:]
		if id >= 1 && id <= 3 {
			if b, err = w.renumberVec(sub, func(out []byte) ([]byte, error) {
				i, err := sub.u32()
				if err != nil {
					return nil, err
				}
				out = binary.AppendUvarint(out, uint64(w.fn(i)))
				at := sub.off
				if id == 1 {
					_, err = sub.name()
				} else {
					err = sub.nameMap()
				}
				return append(out, sub.buf[at:sub.off]...), err
			}); err != nil {
				return nil, false
			}
		}
		out = append(binary.AppendUvarint(append(out, id), uint64(len(b))), b...)
	}
	return out, true
}

// appendSection appends a section of id with body to out.
func appendSection(out []byte, id byte, body []byte) []byte {
	return append(binary.AppendUvarint(append(out, id), uint64(len(body))), body...)
}

// appendName appends a wasm name: its length, then its bytes.
func appendName(out []byte, name string) []byte {
	return append(binary.AppendUvarint(out, uint64(len(name))), name...)
}

// appendSLEB appends v as a signed LEB128 number, as i32.const takes it.
func appendSLEB(out []byte, v int64) []byte {
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if v == 0 && b&0x40 == 0 || v == -1 && b&0x40 != 0 {
			return append(out, b)
		}
		out = append(out, b|0x80)
	}
}
