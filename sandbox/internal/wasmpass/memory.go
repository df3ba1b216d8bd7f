package wasmpass

import "fmt"

// Sections of a module that declare memories.
const sectionMemory = 5

// wasmPageBytes is the size of a page of linear memory.
const wasmPageBytes = 64 << 10

// Memory is what a module declares of its memories and tables.
type Memory struct {
	// MinBytes is the largest minimum size of its memories.
	MinBytes uint64
	// TableElements is the maxima of its tables added up, a table without
	// one counting as MaxTableElements (Instrument gives every table one).
	TableElements uint64
}

// ReadMemory reads the limits of wasm's memories and tables, imported and
// defined.
func ReadMemory(wasm []byte) (Memory, error) {
	var m Memory
	memory := func(r *reader) error {
		minimum, _, err := r.limitValues()
		m.MinBytes = max(m.MinBytes, minimum*wasmPageBytes)
		return err
	}
	table := func(r *reader) error {
		if err := r.refType(); err != nil {
			return err
		}
		_, maximum, err := r.limitValues()
		m.TableElements += min(maximum, MaxTableElements)
		return err
	}
	err := sections(wasm, func(id byte, _ int, body *reader) error {
		switch id {
		case sectionImport:
			return body.vec(func() error {
				for range 2 { // module and name
					if _, err := body.name(); err != nil {
						return err
					}
				}
				kind, err := body.byte()
				switch {
				case err != nil:
					return err
				case kind == kindMemory:
					return memory(body)
				case kind == kindTable:
					return table(body)
				}
				return body.importDesc(kind)
			})
		case sectionTable:
			return body.vec(func() error { return table(body) })
		case sectionMemory:
			return body.vec(func() error { return memory(body) })
		}
		return nil
	})
	return m, err
}

// limitValues reads table or memory limits: the minimum, and the maximum
// (MaxTableElements when there is none, as capTables would set).
func (r *reader) limitValues() (minimum, maximum uint64, err error) {
	flags, err := r.byte()
	if err != nil {
		return 0, 0, err
	}
	if flags > 7 {
		return 0, 0, fmt.Errorf("%w: bad limits flags %#x at offset %d", ErrMalformed, flags, r.off-1)
	}
	if minimum, err = r.uleb(64); err != nil || flags&1 == 0 {
		return minimum, MaxTableElements, err
	}
	maximum, err = r.uleb(64)
	return minimum, maximum, err
}
