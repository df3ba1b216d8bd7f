package wasmpass

import (
	"cmp"
	"fmt"
)

// Section ids checkDeclaredSizes reads besides those the other passes do.
const (
	sectionData = 11
	sectionTag  = 13
)

// wazero's decoder (v1.12) allocates what a module declares before it
// reads any of it: a vector's elements, a name's or a data segment's
// bytes, a name map's entries. A count is a number of up to 2³²−1, so a
// module of fifteen bytes declaring 2³²−1 tables had it ask for 128 GiB,
// which ends the whole process (Go's runtime cannot recover from running
// out of memory), and one declaring as many exports hung it building a
// map. It also reads a section's contents without regard to the section's
// end, so a count read past it, in the next section's bytes, is as bad.
//
// checkDeclaredSizes reads every section the decoder reads, as it reads
// it, and refuses a module in which a count is more than the bytes left in
// its section (every element of these vectors takes at least a byte) or
// whose sections' contents do not end where the sections do. Where the
// decoder then reads a count, checkDeclaredSizes has read the same one, so
// what it allocates is at most a few times the module's size, which
// Limits.MaxModuleMiB caps. The locals of a function, which take no bytes
// (one group may declare 2³²−1), are capped by the compile caps
// (funcShape.variables).
func checkDeclaredSizes(wasm []byte) error {
	return sections(wasm, func(id byte, _ int, r *reader) error {
		var err error
		switch id {
		case sectionCustom:
			var name string
			if name, err = r.name(); err == nil && name == "name" {
				err = r.nameSubsections()
			}
			return err // the rest of a custom section is not read
		case sectionType:
			err = r.counted(func() error {
				form, err := r.byte()
				if err == nil && form != 0x60 {
					return fmt.Errorf("%w: function type starts with %#x, not 0x60, at offset %d", ErrMalformed, form, r.off-1)
				}
				if err == nil {
					err = r.counted(r.valType) // parameters
				}
				if err == nil {
					err = r.counted(r.valType) // results
				}
				return err
			})
		case sectionImport:
			err = r.counted(func() error { _, _, _, err := r.importEntry(); return err })
		case sectionFunction:
			err = r.counted(func() error { _, err := r.u32(); return err })
		case sectionTable:
			err = r.counted(r.table)
		case sectionMemory:
			err = r.counted(r.limits)
		case sectionGlobal:
			err = r.counted(func() error {
				err := r.valType()
				if err == nil {
					_, err = r.byte() // mutability
				}
				if err == nil {
					err = r.constExpr()
				}
				return err
			})
		case sectionExport:
			err = r.counted(func() error {
				_, err := r.name()
				if err == nil {
					_, err = r.byte() // kind
				}
				if err == nil {
					_, err = r.u32()
				}
				return err
			})
		case sectionStart, sectionDataCount:
			_, err = r.u32()
		case sectionElement:
			err = r.counted(r.elementSegment)
		case sectionCode:
			err = r.counted(func() error { _, err := r.sized("function body"); return err })
		case sectionData:
			err = r.counted(r.dataSegment)
		case sectionTag:
			err = r.counted(func() error {
				_, err := r.byte() // attribute
				if err == nil {
					_, err = r.u32()
				}
				return err
			})
		default:
			return nil // the decoder refuses it unread
		}
		if err == nil && r.off != len(r.buf) {
			err = fmt.Errorf("%w: %d unread bytes at the end of the section", ErrMalformed, len(r.buf)-r.off)
		}
		return err
	})
}

// bytes skips a vector of bytes: a count, then as many bytes.
func (r *reader) bytes() error {
	n, err := r.u32()
	if err != nil {
		return err
	}
	return r.skip(int(n))
}

// constExpr skips a constant expression, up to the end that closes it.
func (r *reader) constExpr() error {
	return r.instructions(func(instr) error { return nil })
}

// table skips a table's type: an optional 0x40 0x00 that says an
// initialising expression follows the limits, a reference type, limits.
func (r *reader) table() error {
	init := r.off < len(r.buf) && r.buf[r.off] == 0x40
	if init {
		if _, err := r.byte(); err != nil {
			return err
		}
		if b, err := r.byte(); err != nil || b != 0 {
			return cmp.Or(err, fmt.Errorf("%w: %#x after a table's 0x40 at offset %d, not 0", ErrMalformed, b, r.off-1))
		}
	}
	if err := r.refType(); err != nil {
		return err
	}
	if err := r.limits(); err != nil || !init {
		return err
	}
	return r.constExpr()
}

// elementSegment skips an element segment, in any of its eight forms
// (WebAssembly 2.0, 5.5.12): bit 0 of the prefix says passive or
// declarative, bit 1 an explicit table (when active) or declarative (when
// not), bit 2 expressions rather than function indices.
func (r *reader) elementSegment() error {
	prefix, err := r.u32()
	if err != nil {
		return err
	}
	if prefix > 7 {
		return fmt.Errorf("%w: element segment prefix %d at offset %d", ErrMalformed, prefix, r.off-1)
	}
	active, explicit, exprs := prefix&1 == 0, prefix&2 != 0, prefix&4 != 0
	if active && explicit {
		if _, err := r.u32(); err != nil { // table
			return err
		}
	}
	if active {
		if err := r.constExpr(); err != nil { // offset
			return err
		}
	}
	switch {
	case prefix == 0 || prefix == 4: // implicitly funcref
	case exprs:
		err = r.refType()
	default:
		_, err = r.byte() // element kind
	}
	if err != nil {
		return err
	}
	if exprs {
		return r.counted(r.constExpr)
	}
	return r.counted(func() error { _, err := r.u32(); return err })
}

// dataSegment skips a data segment: a prefix (0 active, 1 passive, 2
// active with a memory index), the offset of an active one, its bytes.
func (r *reader) dataSegment() error {
	prefix, err := r.u32()
	if err != nil {
		return err
	}
	switch prefix {
	case 2:
		if _, err := r.u32(); err != nil { // memory
			return err
		}
		fallthrough
	case 0:
		if err := r.constExpr(); err != nil {
			return err
		}
	case 1:
	default:
		return fmt.Errorf("%w: data segment prefix %d at offset %d", ErrMalformed, prefix, r.off-1)
	}
	return r.bytes()
}

// nameSubsections reads the subsections of the name section as the decoder
// does: the module's name, the functions' names and their locals' names,
// each of which must end where its subsection does (the decoder reads on
// past it), and the others skipped.
func (r *reader) nameSubsections() error {
	for r.off < len(r.buf) {
		id, err := r.byte()
		if err != nil {
			return err
		}
		sub, err := r.sized("name subsection")
		if err != nil {
			return err
		}
		switch id {
		case 0:
			_, err = sub.name()
		case 1:
			err = sub.nameMap()
		case 2:
			err = sub.counted(func() error {
				_, err := sub.u32() // function
				if err == nil {
					err = sub.nameMap()
				}
				return err
			})
		default:
			continue
		}
		if err == nil && sub.off != len(sub.buf) {
			err = fmt.Errorf("%w: name subsection %d ends %d bytes before its declared size", ErrMalformed, id, len(sub.buf)-sub.off)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// nameMap reads a name map: a vector of indices and names.
func (r *reader) nameMap() error {
	return r.counted(func() error {
		_, err := r.u32()
		if err == nil {
			_, err = r.name()
		}
		return err
	})
}
