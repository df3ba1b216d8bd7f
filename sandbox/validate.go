package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"

	"github.com/tetratelabs/wazero"
)

// The sandbox rewrites a module before compiling it (prepare): it caps its
// tables, moves some of its imports and compiles a countdown into its code.
// Those passes read the module as a compiler's front end would, but what
// they make of a module that is invalid to begin with is no one's
// contract: an index one past the last, renumbered or appended after,
// names what a pass adds, and an invalid module can come out valid, with
// its countdown turned off. So wazero validates every module as it is,
// before any pass runs (wasmpass.Instrument calls validate first); the passes range-check the indices
// they read as well, and wazero validates their output again when it
// compiles it. Validating compiles the module with wazero's interpreter,
// whose compilation is a single pass over the code, a tenth of what the
// optimizing compiler takes (RATIONALE.md, "Why is a module validated
// before the sandbox rewrites it?"); it runs after the compile caps, which
// bound its cost too.

// validatedModules remembers the digests of the modules wazero found valid,
// so that loading a module again (a reload, another plugin of the same
// code) validates it once; with a dir, across processes too: an empty file
// per digest and validator, beside the compilation cache, so that a
// plugin compiled from that cache is not validated again at each start.
type validatedModules struct {
	dir     string // "" remembers in memory only
	mu      sync.Mutex
	digests map[[sha256.Size]byte]bool
}

// validatorID names what validates: the wazero version this binary is
// built with, whose rules a remembered digest was checked against.
var validatorID = sync.OnceValue(func() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "github.com/tetratelabs/wazero" {
				return "wazero-" + m.Version
			}
		}
	}
	return "wazero-unknown"
})

// marker is the file that remembers digest sum as valid, or "" without a
// dir.
func (v *validatedModules) marker(sum [sha256.Size]byte) string {
	if v.dir == "" {
		return ""
	}
	return filepath.Join(v.dir, hex.EncodeToString(sum[:])+"."+validatorID())
}

// validate refuses wasm, with ErrInvalidModule and wazero's reason, unless
// wazero, with the features the sandbox compiles with, finds it valid.
func (v *validatedModules) validate(ctx context.Context, wasm []byte) error {
	sum := sha256.Sum256(wasm)
	v.mu.Lock()
	ok := v.digests[sum]
	v.mu.Unlock()
	if ok {
		return nil
	}
	marker := v.marker(sum)
	if _, err := os.Stat(marker); marker == "" || err != nil {
		if err := validateModule(ctx, wasm); err != nil {
			return err
		}
		if marker != "" && os.MkdirAll(v.dir, 0o700) == nil {
			_ = os.WriteFile(marker, nil, 0o600) // a marker not written only costs a validation
		}
	}
	v.mu.Lock()
	if v.digests == nil {
		v.digests = map[[sha256.Size]byte]bool{}
	}
	v.digests[sum] = true
	v.mu.Unlock()
	return nil
}

// validateModule refuses wasm, with ErrInvalidModule and wazero's reason,
// unless wazero finds it valid. It compiles it with wazero's interpreter,
// in a runtime of its own with the default features, those of the
// sandbox's runtime, and keeps nothing of the compilation.
func validateModule(ctx context.Context, wasm []byte) error {
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer r.Close(ctx)
	if _, err := r.CompileModule(ctx, wasm); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidModule, err)
	}
	return nil
}
