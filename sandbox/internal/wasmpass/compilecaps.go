package wasmpass

import (
	"cmp"
	"fmt"
)

// wazero compiles a module in one call that cannot be cancelled, and some
// of its passes take time and memory that grow with the square of what a
// function holds rather than with its size: 300 KB of nested blocks took a
// minute or more to compile, 4 KB of nested loops adding to 200 locals
// 15 s. So before compiling, the sandbox estimates the work of those
// passes from the code and refuses a module beyond these caps
// (checkCompileCost), at about four times what the largest real plugins
// need (RATIONALE.md, "How is a module's compile cost bounded?"). The rest
// of the work grows with the size of the module, which Limits.MaxModuleMiB
// caps, and with the size of a function's body, which maxFunctionBytes
// caps since the compiler holds one function's code at a time.
const (
	// maxFunctionBytes caps the body of one function.
	maxFunctionBytes = 256 << 10
	// maxFunctionWork caps the compile work (funcShape.work) of one
	// function: about a second.
	maxFunctionWork = 1 << 30
	// codeWorkPerByte caps the compile work of all of a module's
	// functions, per byte of their bodies (about 2.5 µs), or
	// maxFunctionWork when that is more. Bytes that are not code (data,
	// custom sections) cost little to compile, so they do not raise it.
	codeWorkPerByte = 2560
)

// Section ids of the sections the compile caps read besides the import
// section.
const (
	sectionType     = 1
	sectionFunction = 3
	sectionCode     = 10
)

// funcShape is what the compile caps measure in the body of one function.
type funcShape struct {
	index     int     // in the function index space, imports first
	size      int     // bytes of its body, locals included
	blocks    float64 // basic blocks the compiler creates (reader.code)
	gets      float64 // local.get instructions
	variables float64 // parameters, locals, and the arity of the widest type
	loops     float64 // deepest nesting of loops
}

// work estimates the time of compiling the function in the passes of
// wazero (v1.12) whose cost grows faster than the code, in nanoseconds of
// one core of the machine they were measured on (RATIONALE.md):
// blocks × (4·blocks + 8·gets + variables² × (loops + 1)), where
//   - blocks² is for loop detection, which walks up the dominator tree
//     from each edge (about 4 ns a step);
//   - blocks × gets for the local.gets, each of which walks up the chain
//     of blocks with a single predecessor (about 8 ns a step);
//   - blocks × variables² × (loops + 1) for the block parameters: a block
//     may take one for each variable (a local, or a value a block type
//     carries), and removing the redundant ones resolves, for each, every
//     argument of every branch to the block, once more for each level of
//     nested loops (under 1 ns a step).
//
// It is a float64 so that no module makes it overflow; it is exact up to
// 2⁵³, far above the caps.
func (s funcShape) work() float64 {
	return s.blocks * (4*s.blocks + 8*s.gets + s.variables*s.variables*(s.loops+1))
}

// checkCompileCost refuses wasm when compiling it would cost more than the
// caps allow, naming the cap, or when its code cannot be read or it
// declares more than its bytes can hold (checkDeclaredSizes); maxBytes
// caps its size (Limits.MaxModuleMiB). It reads every instruction once and
// allocates little, so it takes milliseconds for a module of megabytes.
func checkCompileCost(wasm []byte, maxBytes int) error {
	if len(wasm) > maxBytes {
		return fmt.Errorf("the module is %d bytes, more than the %d MiB max_module_mib allows", len(wasm), maxBytes>>20)
	}
	if err := checkDeclaredSizes(wasm); err != nil {
		return err
	}
	var (
		code, total float64   // bytes of code and compile work of all functions
		costliest   funcShape // the function of the most work
	)
	err := moduleShapes(wasm, func(s funcShape) error {
		w := s.work()
		if w > maxFunctionWork {
			return fmt.Errorf("function %d is too costly to compile: its compile work, blocks × (4·blocks + 8·local.gets + variables² × (loop depth + 1)) = %.0f × (4·%.0f + 8·%.0f + %.0f² × %.0f), is %.0f, more than the %d a function may have",
				s.index, s.blocks, s.blocks, s.gets, s.variables, s.loops+1, w, maxFunctionWork)
		}
		if s.size > maxFunctionBytes {
			return fmt.Errorf("function %d has a body of %d bytes, more than the %d a function may have", s.index, s.size, maxFunctionBytes)
		}
		code, total = code+float64(s.size), total+w
		if w > costliest.work() {
			costliest = s
		}
		return nil
	})
	if budget := max(maxFunctionWork, codeWorkPerByte*code); err == nil && total > budget {
		return fmt.Errorf("the module is too costly to compile: the compile work of its functions adds up to %.0f (function %d alone %.0f), more than the %.0f its %.0f bytes of code may have (%d a byte, at least %d)",
			total, costliest.index, costliest.work(), budget, code, codeWorkPerByte, maxFunctionWork)
	}
	return err
}

// moduleShapes reads the type, import, function and code sections of wasm
// and calls fn with the shape of each function body, in order. It stops at
// the first error: fn's, as it is, or a malformed section's.
func moduleShapes(wasm []byte, fn func(funcShape) error) error {
	var (
		params   []int    // of each function type
		arity    int      // the most parameters or results of a type
		types    []uint32 // of each defined function
		imported int      // functions
		bodies   int      // read so far
		stop     error    // fn's
	)
	err := sections(wasm, func(id byte, _ int, body *reader) error {
		switch id {
		case sectionType:
			return body.vec(func() error {
				p, r, err := body.funcType()
				params = append(params, p)
				arity = max(arity, p, r)
				return err
			})
		case sectionImport:
			return body.vec(func() error {
				_, kind, _, err := body.importEntry()
				if kind == kindFunc {
					imported++
				}
				return err
			})
		case sectionFunction:
			return body.vec(func() error {
				t, err := body.u32()
				types = append(types, t)
				return err
			})
		case sectionCode:
			return body.vec(func() error {
				index := imported + bodies
				if bodies++; bodies > len(types) {
					return fmt.Errorf("%w: more function bodies than functions", ErrMalformed)
				}
				t := types[bodies-1]
				if int(t) >= len(params) {
					return fmt.Errorf("%w: function %d has type %d, which does not exist", ErrMalformed, index, t)
				}
				s := funcShape{index: index, variables: float64(params[t] + arity)}
				if err := body.funcBody(&s); err != nil {
					return fmt.Errorf("function %d: %w", index, err)
				}
				stop = fn(s)
				return stop
			})
		}
		return nil
	})
	return cmp.Or(stop, err)
}

// funcType reads a function type and returns its numbers of parameters
// and results.
func (r *reader) funcType() (params, results int, err error) {
	form, err := r.byte()
	if err != nil {
		return 0, 0, err
	}
	if form != 0x60 {
		return 0, 0, fmt.Errorf("%w: type form %#x at offset %d is not a function type", ErrMalformed, form, r.off-1)
	}
	var n [2]uint32
	for i := range n {
		if n[i], err = r.u32(); err != nil {
			return 0, 0, err
		}
		for range n[i] {
			if err := r.valType(); err != nil {
				return 0, 0, err
			}
		}
	}
	return int(n[0]), int(n[1]), nil
}

// funcBody reads one entry of the code section into s.
func (r *reader) funcBody(s *funcShape) error {
	body, err := r.sized("body")
	if err != nil {
		return err
	}
	s.size = len(body.buf) - body.off
	n, err := body.locals()
	if err != nil {
		return err
	}
	s.variables += float64(n)
	return body.code(s)
}

// sized reads a size and returns a reader of the next size bytes, which it
// moves past; what names them in the error when they run past r's end.
func (r *reader) sized(what string) (*reader, error) {
	size, err := r.u32()
	if err != nil {
		return nil, err
	}
	if uint64(size) > uint64(len(r.buf)-r.off) {
		return nil, fmt.Errorf("%w: %s of %d bytes at offset %d runs past its section", ErrSectionOverrun, what, size, r.off)
	}
	sub := &reader{buf: r.buf[:r.off+int(size)], off: r.off, end: ErrSectionOverrun}
	r.off += int(size)
	return sub, nil
}

// locals reads the local declarations at the start of a function body and
// returns how many locals they declare.
func (r *reader) locals() (uint64, error) {
	groups, err := r.u32()
	var total uint64
	for ; err == nil && groups > 0; groups-- {
		var n uint32
		if n, err = r.u32(); err == nil {
			total += uint64(n)
			err = r.valType()
		}
	}
	return total, err
}

// code reads the instructions of a function body, which must end with its
// last byte, into s. It counts the basic blocks as wazero's compiler makes
// them: the entry block, one for each block and br_if, two for each loop,
// three for each if, memory.fill and table.fill (which it compiles as
// loops), and one for each target of a br_table, the default included.
func (r *reader) code(s *funcShape) error {
	s.blocks = 1
	var loops []bool // whether each open block, loop or if is a loop
	depth := 0       // of loops
	err := r.instructions(func(in instr) error {
		switch {
		case in.op == 0x02 || in.op == 0x03 || in.op == 0x04: // block, loop, if
			s.blocks += float64(in.op - 1)
			loops = append(loops, in.op == 0x03)
			if in.op == 0x03 {
				depth++
				s.loops = max(s.loops, float64(depth))
			}
		case in.op == 0x0b && len(loops) > 0: // end of a block, loop or if
			if loops[len(loops)-1] {
				depth--
			}
			loops = loops[:len(loops)-1]
		case in.op == 0x0d: // br_if
			s.blocks++
		case in.op == 0x0e: // br_table: imm targets and the default
			s.blocks += float64(in.imm) + 1
		case in.op == 0x20: // local.get
			s.gets++
		case in.op == 0xfc && (in.sub == 11 || in.sub == 17): // memory.fill, table.fill
			s.blocks += 3
		}
		return nil
	})
	if err == nil && r.off != len(r.buf) {
		err = fmt.Errorf("%w: %d bytes after the end of the body", ErrMalformed, len(r.buf)-r.off)
	}
	return err
}

// instr is one instruction as instructions reads it: its opcode, the
// sub-opcode of a prefixed one (0xfc, 0xfd), its first immediate when that
// is a number (an index, a br_table's count of targets), and where it
// starts and ends.
type instr struct {
	op      byte
	sub     uint32
	imm     uint32
	imm2    uint32 // call_indirect's table
	at, end int
	// blockType is a block's, loop's or if's type: a type index when it
	// is not negative, otherwise a value type or none.
	blockType int64
}

// instructions reads instructions up to the end that closes the
// expression (a function body or a constant expression), calling visit
// with each, that end included. It knows the instructions of the features
// wazero enables by default (WebAssembly 2.0), which are the ones the
// sandbox compiles.
func (r *reader) instructions(visit func(instr) error) error {
	open := 0 // blocks, loops and ifs
	for {
		in := instr{at: r.off}
		op, err := r.byte()
		if err != nil {
			return err
		}
		in.op = op
		switch {
		case op == 0x02 || op == 0x03 || op == 0x04: // block, loop, if
			open++
			in.blockType, err = r.s33()
		case op == 0x0b: // end
			open--
		case op == 0x0e: // br_table
			if in.imm, err = r.u32(); err != nil {
				return err
			}
			err = r.u32s(uint64(in.imm) + 1)
		case op == 0x0c || op == 0x0d || op == 0x10 || op >= 0x20 && op <= 0x26 || op == 0x3f || op == 0x40 || op == 0xd2:
			// br, br_if, call, local.get, local.set, local.tee,
			// global.get, global.set, table.get, table.set, memory.size,
			// memory.grow, ref.func: an index
			in.imm, err = r.u32()
		case op == 0x11: // call_indirect: a type and a table
			if in.imm, err = r.u32(); err == nil {
				in.imm2, err = r.u32()
			}
		case op == 0x1c: // select with types
			var n uint32
			if n, err = r.u32(); err != nil {
				return err
			}
			for i := uint32(0); i < n && err == nil; i++ {
				err = r.valType()
			}
		case op >= 0x28 && op <= 0x3e: // loads and stores: alignment, offset
			err = r.u32s(2)
		case op == 0x41:
			err = r.sleb(32)
		case op == 0x42:
			err = r.sleb(64)
		case op == 0x43:
			err = r.skip(4)
		case op == 0x44:
			err = r.skip(8)
		case op == 0xd0: // ref.null: a heap type
			err = r.sleb(33)
		case op == 0xfc:
			in.sub, err = r.miscOp()
		case op == 0xfd:
			in.sub, err = r.vectorOp()
		case op <= 0x01 || op == 0x05 || op == 0x0f || op == 0x1a || op == 0x1b || op >= 0x45 && op <= 0xc4 || op == 0xd1:
			// unreachable, nop, else, return, drop, select, the numeric
			// instructions and ref.is_null have no immediates
		default:
			return fmt.Errorf("%w: unknown instruction %#x at offset %d", ErrMalformed, op, in.at)
		}
		if err != nil {
			return err
		}
		in.end = r.off
		if err := visit(in); err != nil {
			return err
		}
		if open < 0 {
			return nil
		}
	}
}

// miscOp reads the rest of an instruction of the 0xfc prefix and returns
// its sub-opcode.
func (r *reader) miscOp() (uint32, error) {
	at := r.off - 1
	op, err := r.u32()
	if err != nil {
		return 0, err
	}
	switch op {
	case 0, 1, 2, 3, 4, 5, 6, 7: // saturating truncations
		return op, nil
	case 9, 11, 13, 15, 16, 17: // data.drop, memory.fill, elem.drop, table.grow, table.size, table.fill
		return op, r.u32s(1)
	case 8, 10, 12, 14: // memory.init, memory.copy, table.init, table.copy
		return op, r.u32s(2)
	}
	return 0, fmt.Errorf("%w: unknown instruction 0xfc %d at offset %d", ErrMalformed, op, at)
}

// vectorOp reads the rest of an instruction of the 0xfd prefix (SIMD) and
// returns its sub-opcode. Unassigned opcodes below 256 pass as having no
// immediates: wazero refuses them when it validates the module, before
// compiling any of it.
func (r *reader) vectorOp() (uint32, error) {
	at := r.off - 1
	op, err := r.u32()
	if err != nil {
		return 0, err
	}
	switch {
	case op <= 11 || op == 92 || op == 93: // loads and stores
		return op, r.u32s(2)
	case op == 12 || op == 13: // v128.const, i8x16.shuffle
		return op, r.skip(16)
	case op >= 21 && op <= 34: // extract and replace lane
		return op, r.skip(1)
	case op >= 84 && op <= 91: // load and store lane
		if err := r.u32s(2); err != nil {
			return 0, err
		}
		return op, r.skip(1)
	case op <= 255:
		return op, nil
	}
	return 0, fmt.Errorf("%w: unknown instruction 0xfd %d at offset %d", ErrMalformed, op, at)
}

// u32s skips n unsigned 32-bit LEB128 numbers.
func (r *reader) u32s(n uint64) error {
	for ; n > 0; n-- {
		if _, err := r.u32(); err != nil {
			return err
		}
	}
	return nil
}

// skip skips n bytes.
func (r *reader) skip(n int) error {
	if n > len(r.buf)-r.off {
		r.off = len(r.buf)
		return r.end
	}
	r.off += n
	return nil
}
