package sandbox

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/wasmtest"
	"github.com/tetratelabs/wazero"
)

// refusedAsInvalid reports whether err refuses a module for what it is:
// invalid to wazero, or malformed to the sandbox's own reader.
func refusedAsInvalid(err error) bool {
	return errors.Is(err, ErrInvalidModule) || errors.Is(err, ErrMalformed) ||
		errors.Is(err, ErrSectionOverrun) || errors.Is(err, ErrTruncated)
}

// TestInvalidModulesAreRefusedBeforeTheirRewrite checks that Load refuses
// a module that is invalid as it is, whatever the sandbox's rewrites would
// make of it, with an error that says it is invalid and why.
func TestInvalidModulesAreRefusedBeforeTheirRewrite(t *testing.T) {
	for name, wasm := range wasmtest.InvalidModules {
		t.Run(name, func(t *testing.T) {
			p, err := engine.Load(t.Context(), "invalid", wasm, Options{})
			if err == nil {
				p.Close(t.Context())
				t.Fatal("Load accepted an invalid module")
			}
			if !refusedAsInvalid(err) {
				t.Errorf("Load: %v; want it refused as invalid", err)
			}
		})
	}
}

// BenchmarkValidateFirst measures what validating a module before the
// passes costs, against the baseline of compiling it cold (wazero's
// optimizing compiler, no cache) in the same run, for a standard-Go test
// plugin and the JavaScript engine (QuickJS, C): it reports the
// validation's milliseconds per MB of module and its share of a cold
// compile.
func BenchmarkValidateFirst(b *testing.B) {
	for name, wasm := range wasmtest.RealModules(b) {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			var validate, compile time.Duration
			for b.Loop() {
				start := time.Now()
				if err := validateModule(ctx, wasm); err != nil {
					b.Fatal(err)
				}
				validate += time.Since(start)
				start = time.Now()
				r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
				if _, err := r.CompileModule(ctx, wasm); err != nil {
					b.Fatal(err)
				}
				compile += time.Since(start)
				r.Close(ctx)
			}
			mb := float64(len(wasm)) / 1e6
			b.ReportMetric(validate.Seconds()*1000/float64(b.N)/mb, "validate-ms/MB")
			b.ReportMetric(float64(validate)/float64(compile), "validate/compile")
		})
	}
}
