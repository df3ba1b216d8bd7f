package wasmpass

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Errors the reader wraps to say why a binary was rejected.
var (
	// ErrBadMagic means the input does not start with the wasm magic number.
	ErrBadMagic = errors.New("not a wasm binary (bad magic)")
	// ErrBadVersion means the binary is not a version 1 core module (a
	// component, for example).
	ErrBadVersion = errors.New("unsupported wasm binary version")
	// ErrTruncated means the input ends in the middle of a section or value.
	ErrTruncated = errors.New("truncated wasm binary")
	// ErrSectionOverrun means a section's declared size runs past the end of
	// the input, or its contents run past its declared size.
	ErrSectionOverrun = errors.New("wasm section overrun")
	// ErrMalformed means a value inside a section is invalid: an over-long
	// LEB128 number, a name that is not UTF-8, an unknown import kind, or a
	// section whose contents are shorter than its declared size.
	ErrMalformed = errors.New("malformed wasm binary")
)

// Section ids and import kinds of the wasm binary format that the reader
// knows.
const (
	sectionCustom = 0
	sectionImport = 2
	sectionExport = 7

	kindFunc   = 0
	kindTable  = 1
	kindMemory = 2
	kindGlobal = 3
	kindTag    = 4
)

var wasmHeader = []byte{0x00, 'a', 's', 'm'}

// sections checks the header of wasm and calls fn with each section's id,
// the offset of its header and a reader of its body, which stays within the
// section's declared size.
func sections(wasm []byte, fn func(id byte, start int, body *reader) error) error {
	if !bytes.HasPrefix(wasm, wasmHeader[:min(len(wasm), len(wasmHeader))]) {
		return ErrBadMagic
	}
	if len(wasm) < 8 {
		return ErrTruncated
	}
	if v := wasm[4:8]; !bytes.Equal(v, []byte{1, 0, 0, 0}) {
		return fmt.Errorf("%w % x", ErrBadVersion, v)
	}
	r := &reader{buf: wasm, off: 8, end: ErrTruncated}
	for r.off < len(r.buf) {
		start := r.off
		id, err := r.byte()
		if err != nil {
			return err
		}
		size, err := r.u32()
		if err != nil {
			return err
		}
		if uint64(size) > uint64(len(r.buf)-r.off) {
			return fmt.Errorf("%w: section %d at offset %d declares %d bytes, %d remain",
				ErrSectionOverrun, id, start, size, len(r.buf)-r.off)
		}
		body := &reader{buf: r.buf[:r.off+int(size)], off: r.off, end: ErrSectionOverrun}
		r.off += int(size)
		if err := fn(id, start, body); err != nil {
			return fmt.Errorf("section %d at offset %d: %w", id, start, err)
		}
	}
	return nil
}

// reader decodes values from buf, starting at off. Reading past the end of
// buf fails with end: ErrTruncated for the whole binary, ErrSectionOverrun
// for a section body.
type reader struct {
	buf []byte
	off int
	end error
}

func (r *reader) byte() (byte, error) {
	if r.off >= len(r.buf) {
		return 0, r.end
	}
	b := r.buf[r.off]
	r.off++
	return b, nil
}

// uleb reads an unsigned LEB128 number of at most bits bits.
func (r *reader) uleb(bits uint) (uint64, error) {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		b, err := r.byte()
		if err != nil {
			return 0, err
		}
		if shift+7 > bits && b>>(bits-shift) != 0 {
			return 0, fmt.Errorf("%w: LEB128 number exceeds %d bits at offset %d", ErrMalformed, bits, r.off-1)
		}
		v |= uint64(b&0x7f) << shift
		if b&0x80 == 0 {
			return v, nil
		}
	}
}

func (r *reader) u32() (uint32, error) {
	v, err := r.uleb(32)
	return uint32(v), err
}

// s33 reads a signed LEB128 number of at most 33 bits, as a block type is.
func (r *reader) s33() (int64, error) {
	var v int64
	for shift := 0; shift < 35; shift += 7 {
		b, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= int64(b&0x7f) << shift
		if b&0x80 == 0 {
			if shift+7 < 64 && b&0x40 != 0 {
				v |= -1 << (shift + 7)
			}
			if v < -1<<32 || v >= 1<<32 {
				break
			}
			return v, nil
		}
	}
	return 0, fmt.Errorf("%w: LEB128 number exceeds 33 bits at offset %d", ErrMalformed, r.off-1)
}

// sleb skips a signed LEB128 number of at most bits bits.
func (r *reader) sleb(bits int) error {
	for n := 0; n < (bits+6)/7; n++ {
		b, err := r.byte()
		if err != nil {
			return err
		}
		if b&0x80 == 0 {
			return nil
		}
	}
	return fmt.Errorf("%w: LEB128 number exceeds %d bits at offset %d", ErrMalformed, bits, r.off-1)
}

func (r *reader) name() (string, error) {
	n, err := r.u32()
	if err != nil {
		return "", err
	}
	if uint64(n) > uint64(len(r.buf)-r.off) {
		r.off = len(r.buf)
		return "", r.end
	}
	s := r.buf[r.off : r.off+int(n)]
	r.off += int(n)
	if !utf8.Valid(s) {
		return "", fmt.Errorf("%w: name at offset %d is not UTF-8", ErrMalformed, r.off-int(n))
	}
	return string(s), nil
}

// counted reads a vector: a count, which must be at most the bytes left in
// r, then as many elements, each read by elem.
func (r *reader) counted(elem func() error) error {
	n, err := r.u32()
	if err != nil {
		return err
	}
	if left := len(r.buf) - r.off; uint64(n) > uint64(left) {
		return fmt.Errorf("%w: a count of %d at offset %d, more than the %d bytes after it can hold", ErrSectionOverrun, n, r.off, left)
	}
	for ; n > 0; n-- {
		if err := elem(); err != nil {
			return err
		}
	}
	return nil
}

// vec reads a vector (counted) that the section must end with.
func (r *reader) vec(elem func() error) error {
	if err := r.counted(elem); err != nil {
		return err
	}
	if r.off != len(r.buf) {
		return fmt.Errorf("%w: %d unread bytes at the end of the section", ErrMalformed, len(r.buf)-r.off)
	}
	return nil
}

// importEntry reads one entry of the import section: what it imports, its
// kind, and the offset of its name (the module's name ends there); it
// skips the entry's description.
func (r *reader) importEntry() (imp Import, kind byte, nameAt int, err error) {
	if imp, kind, nameAt, err = r.importHead(); err != nil {
		return imp, 0, 0, err
	}
	return imp, kind, nameAt, r.importDesc(kind)
}

// importHead reads what importEntry does but the entry's description.
func (r *reader) importHead() (imp Import, kind byte, nameAt int, err error) {
	if imp.Module, err = r.name(); err != nil {
		return imp, 0, 0, err
	}
	nameAt = r.off
	if imp.Name, err = r.name(); err != nil {
		return imp, 0, 0, err
	}
	kind, err = r.byte()
	return imp, kind, nameAt, err
}

// importDesc skips the description of an import of the given kind.
func (r *reader) importDesc(kind byte) error {
	switch kind {
	case kindFunc:
		_, err := r.u32()
		return err
	case kindTable:
		return r.table()
	case kindMemory:
		return r.limits()
	case kindGlobal:
		if err := r.valType(); err != nil {
			return err
		}
		_, err := r.byte() // mutability
		return err
	case kindTag:
		if _, err := r.byte(); err != nil { // attribute
			return err
		}
		_, err := r.u32()
		return err
	}
	return fmt.Errorf("%w: unknown import kind %#x at offset %d", ErrMalformed, kind, r.off-1)
}

// limits skips table or memory limits: a flags byte (bit 0: a maximum
// follows, bit 1: shared, bit 2: 64-bit) and one or two numbers.
func (r *reader) limits() error {
	flags, err := r.byte()
	if err != nil {
		return err
	}
	if flags > 7 {
		return fmt.Errorf("%w: bad limits flags %#x at offset %d", ErrMalformed, flags, r.off-1)
	}
	for n := 1 + int(flags&1); n > 0; n-- {
		if _, err := r.uleb(64); err != nil {
			return err
		}
	}
	return nil
}

// valType skips a value type, including the reference types of the GC
// proposal that carry a heap type.
func (r *reader) valType() error {
	b, err := r.byte()
	if err != nil {
		return err
	}
	switch b {
	case 0x7f, 0x7e, 0x7d, 0x7c, 0x7b: // i32 i64 f32 f64 v128
		return nil
	}
	r.off--
	return r.refType()
}

func (r *reader) refType() error {
	b, err := r.byte()
	if err != nil {
		return err
	}
	switch {
	case b == 0x63 || b == 0x64: // (ref null ht), (ref ht)
		return r.sleb(33) // a heap type
	case b >= 0x69 && b <= 0x74: // abstract heap type shorthands
		return nil
	}
	return fmt.Errorf("%w: unknown value type %#x at offset %d", ErrMalformed, b, r.off-1)
}
