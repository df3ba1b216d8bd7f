package wasmpass

// Redirect moves a module's imports of some functions from one module
// name to another, where the host serves its own functions of those names.
type Redirect struct {
	// From and To are the module names an import moves from and to.
	From, To string
	// Names reports whether an import of the function name moves.
	Names func(name string) bool
}

// redirectImports returns wasm with its imports of the functions r.Names
// accepts moved from r.From to r.To. It returns wasm itself when there are
// none. Every other byte is kept; the import section's size is re-encoded.
func redirectImports(wasm []byte, r Redirect) ([]byte, error) {
	name := appendName(nil, r.To)
	var edit sectionEdit
	err := sections(wasm, func(id byte, start int, body *reader) error {
		if id != sectionImport {
			return nil
		}
		edit = sectionEdit{id: id, start: start, begin: body.off, end: len(body.buf)}
		return body.vec(func() error {
			at := body.off
			imp, kind, nameAt, err := body.importEntry()
			if err == nil && kind == kindFunc && imp.Module == r.From && r.Names(imp.Name) {
				edit.splices = append(edit.splices, splice{at: at, end: nameAt, with: name})
			}
			return err
		})
	})
	if err != nil || len(edit.splices) == 0 {
		return wasm, err
	}
	return applyEdits(wasm, []sectionEdit{edit}), nil
}
