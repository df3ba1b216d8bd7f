package wasmpass

import "bytes"

// Import is a function a module imports.
type Import struct {
	Module string
	Name   string
}

// inspection is what Inspect reads of a module.
type inspection struct {
	exports []string
	imports []Import
	custom  map[string][]byte
}

// Inspect parses the structure of a wasm binary without compiling or
// running it: the names of its exported functions and its imported
// functions, in binary order, and the payload of each custom section by
// name (when a name occurs more than once the last section wins). It
// needs no validation first: it reads only the sections it needs, checks
// that every section stays within its declared size and never panics,
// whatever the input.
func Inspect(wasm []byte) (exports []string, imports []Import, custom map[string][]byte, err error) {
	i := &inspection{custom: map[string][]byte{}}
	if err := sections(wasm, i.section); err != nil {
		return nil, nil, nil, err
	}
	return i.exports, i.imports, i.custom, nil
}

// section decodes one section whose body r holds.
func (i *inspection) section(id byte, _ int, r *reader) error {
	switch id {
	case sectionCustom:
		name, err := r.name()
		if err != nil {
			return err
		}
		i.custom[name] = bytes.Clone(r.buf[r.off:])
		return nil
	case sectionImport:
		return r.vec(func() error {
			imp, kind, _, err := r.importEntry()
			if kind == kindFunc && err == nil {
				i.imports = append(i.imports, imp)
			}
			return err
		})
	case sectionExport:
		return r.vec(func() error {
			name, err := r.name()
			if err != nil {
				return err
			}
			kind, err := r.byte()
			if err != nil {
				return err
			}
			if kind == kindFunc {
				i.exports = append(i.exports, name)
			}
			_, err = r.u32()
			return err
		})
	}
	return nil
}

// reader decodes values from buf, starting at off. Reading past the end of
