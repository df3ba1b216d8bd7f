package wasmpass

import (
	"encoding/binary"
	"fmt"
)

// A wasm table is an array of references that wazero keeps on the Go heap,
// 8 bytes an element, outside the linear memory Limits.MemoryMiB caps, and
// wazero bounds neither its size nor its growth: a table.grow by 4 Gi
// elements asks the Go runtime for 32 GiB, which kills the process. So
// before compiling, the sandbox caps every table (capTables): a module has
// at most maxTables tables, imported and defined, of at most
// MaxTableElements elements each, so that the tables of an instance take
// at most 32 MiB. (Go's linker declares its table without a maximum, so a
// plugin built by Go gets one.)
const (
	// MaxTableElements is the most elements a table may have: 8 MiB of
	// references.
	MaxTableElements = 1 << 20
	maxTables        = 4
)

// sectionTable is the id of the table section.
const sectionTable = 4

// splice replaces wasm[at:end] with with.
type splice struct {
	at, end int
	with    []byte
}

// sectionEdit is the splices of one section: id, with its header at start
// and its body from begin to end.
type sectionEdit struct {
	id                byte
	start, begin, end int
	splices           []splice
}

// capTables returns wasm with the maximum of every table, imported or
// defined, set to MaxTableElements when it has none or a larger one, so
// that table.grow beyond it fails inside the guest (returns -1, as the wasm
// specification says) instead of allocating. It refuses a module with more
// than maxTables tables or a table whose minimum is above
// MaxTableElements. It returns wasm itself when no maximum changes (so the
// module's compilation cache entry stays the same); otherwise every other
// byte is kept and the sizes of the sections changed are re-encoded.
func capTables(wasm []byte) ([]byte, error) {
	var (
		edits  []sectionEdit
		tables int
	)
	err := sections(wasm, func(id byte, start int, body *reader) error {
		edit := sectionEdit{id: id, start: start, begin: body.off, end: len(body.buf)}
		table := func() error {
			if tables++; tables > maxTables {
				return fmt.Errorf("the module has more than %d tables (imported and defined)", maxTables)
			}
			s, err := body.cappedTable(tables - 1)
			if s != nil {
				edit.splices = append(edit.splices, *s)
			}
			return err
		}
		var err error
		switch id {
		case sectionImport:
			err = body.vec(func() error {
				for range 2 { // module and name
					if _, err := body.name(); err != nil {
						return err
					}
				}
				kind, err := body.byte()
				if err != nil {
					return err
				}
				if kind == kindTable {
					return table()
				}
				return body.importDesc(kind)
			})
		case sectionTable:
			err = body.vec(table)
		}
		if len(edit.splices) > 0 {
			edits = append(edits, edit)
		}
		return err
	})
	switch {
	case err != nil:
		return nil, err
	case len(edits) == 0:
		return wasm, nil
	}
	return applyEdits(wasm, edits), nil
}

// cappedTable reads the type of table index and returns the splice that
// sets its maximum to MaxTableElements, or nil when it has one no larger.
func (r *reader) cappedTable(index int) (*splice, error) {
	if r.off < len(r.buf) && r.buf[r.off] == 0x40 {
		return nil, fmt.Errorf("table %d has an initializer expression, which the sandbox does not support", index)
	}
	if err := r.refType(); err != nil {
		return nil, err
	}
	at := r.off
	flags, err := r.byte()
	if err != nil {
		return nil, err
	}
	if flags > 1 {
		return nil, fmt.Errorf("%w: table %d: limits flags %#x (a table is 32-bit and not shared)", ErrMalformed, index, flags)
	}
	minimum, err := r.u32()
	if err != nil {
		return nil, err
	}
	if minimum > MaxTableElements {
		return nil, fmt.Errorf("table %d has a minimum of %d elements, more than the %d a table may have", index, minimum, MaxTableElements)
	}
	if flags == 1 {
		maximum, err := r.u32()
		if err != nil || maximum <= MaxTableElements {
			return nil, err
		}
	}
	limits := binary.AppendUvarint([]byte{0x01}, uint64(minimum)) // LEB128
	return &splice{at: at, end: r.off, with: binary.AppendUvarint(limits, MaxTableElements)}, nil
}

// applyEdits returns wasm with the splices of edits, which are in binary
// order, applied and the sizes of their sections re-encoded.
func applyEdits(wasm []byte, edits []sectionEdit) []byte {
	out := make([]byte, 0, len(wasm)+16*len(edits))
	prev := 0
	for _, e := range edits {
		var body []byte
		from := e.begin
		for _, s := range e.splices {
			body = append(append(body, wasm[from:s.at]...), s.with...)
			from = s.end
		}
		body = append(body, wasm[from:e.end]...)
		out = append(append(out, wasm[prev:e.start]...), e.id)
		out = binary.AppendUvarint(out, uint64(len(body))) // LEB128
		out = append(out, body...)
		prev = e.end
	}
	return append(out, wasm[prev:]...)
}
