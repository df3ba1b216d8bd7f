// Package wasmpass reads WebAssembly modules and rewrites them for the
// sandbox: it inspects a module (Inspect), reads what its memories and
// tables may take (ReadMemory), and runs the passes the sandbox compiles a
// module after (Instrument). It knows the binary format only, and nothing
// of the runtime: the caller validates and compiles.
package wasmpass

// Options configures Instrument.
type Options struct {
	// MaxBytes caps the size of the module, in bytes.
	MaxBytes int
	// Redirect moves some of the module's function imports; none move
	// when its Names is nil.
	Redirect Redirect
}

// Instrument returns wasm as the sandbox compiles it, or why it refuses
// it. It checks that wasm costs little enough to compile (at most
// opts.MaxBytes, and within the compile caps, compilecaps.go), then calls
// validate, which must refuse every module the compiler would: the passes
// that follow renumber indices and append functions, a global and types
// after the module's own, and what they make of an invalid module is no
// one's contract (an index one past the last would name what a pass
// adds). Then it caps the module's tables (capTables), moves the imports
// opts.Redirect names, and compiles in the countdown that calls
// InterruptModule's InterruptName (makeInterruptible).
//
// The passes run in that order only: each relies on what ran before it.
// The output is not validated again here: the compiler the caller hands it
// to must validate what it compiles (wazero's CompileModule does, whether
// or not its cache holds the module).
func Instrument(wasm []byte, validate func([]byte) error, opts Options) ([]byte, error) {
	if err := checkCompileCost(wasm, opts.MaxBytes); err != nil {
		return nil, err
	}
	if err := validate(wasm); err != nil {
		return nil, err
	}
	wasm, err := capTables(wasm)
	if err != nil {
		return nil, err
	}
	if opts.Redirect.Names != nil {
		if wasm, err = redirectImports(wasm, opts.Redirect); err != nil {
			return nil, err
		}
	}
	return makeInterruptible(wasm)
}
