package sandbox

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
)

// invalidModule assembles a module with one memory and the types
// () -> i32 (type 0) and () -> () (type 1), whose function 0, of type 0,
// is exported as call_tool with code as its body (before its end), and
// sections more besides, put in their place: the shape of a plugin whose
// one flaw is in code.
func invalidModule(code []byte, more ...[]byte) []byte {
	body := slices.Concat([]byte{0x00}, code, []byte{0x0b})
	all := append([][]byte{
		wasmSection(1, wasmVec([]byte{0x60, 0x00, 0x01, 0x7f}, []byte{0x60, 0x00, 0x00})),
		wasmSection(3, wasmVec([]byte{0x00})),
		wasmSection(5, wasmVec([]byte{0x00, 0x01})),
		wasmSection(7, wasmVec(slices.Concat(wasmName("call_tool"), []byte{0x00, 0x00}))),
		wasmSection(10, wasmVec(slices.Concat(uleb(uint32(len(body))), body))),
	}, more...)
	slices.SortStableFunc(all, func(a, b []byte) int { return sectionRank[a[0]] - sectionRank[b[0]] })
	return wasmModule(all...)
}

// invalidModules are modules that any validator refuses, each of which the
// rewrite of makeInterruptible would make valid if it renumbered or
// appended after indices without checking them: an index one past the
// last names what the rewrite adds.
var invalidModules = map[string][]byte{
	// R1 of issue 23: global 0 does not exist, but the countdown would be
	// global 0, refilled at every iteration: the loop would never stop.
	"global.set of a global past the last": invalidModule([]byte{
		0x03, 0x40, // loop
		0x41, 0xff, 0xff, 0xff, 0xff, 0x07, 0x24, 0x00, // i32.const 0x7fffffff; global.set 0
		0x0c, 0x00, 0x0b, // br 0; end
		0x41, 0x00}), // i32.const 0
	"global.get of a global past the last": invalidModule([]byte{0x23, 0x00}),
	// Function 1 does not exist; after the rewrite it would be the
	// function that refills the countdown.
	"call of a function past the last":     invalidModule([]byte{0x10, 0x01, 0x41, 0x00}),
	"ref.func of a function past the last": invalidModule([]byte{0xd2, 0x01, 0x1a, 0x41, 0x00}),
	// Type 2 does not exist; the rewrite appends [i32] -> [i32] there.
	"call_indirect of a type past the last": invalidModule([]byte{0x41, 0x07, 0x41, 0x00, 0x11, 0x02, 0x00},
		wasmSection(4, wasmVec([]byte{0x70, 0x00, 0x01}))),
	"export of a function past the last": wasmModule(
		wasmSection(1, wasmVec([]byte{0x60, 0x00, 0x00})),
		wasmSection(3, wasmVec([]byte{0x00})),
		wasmSection(7, wasmVec(slices.Concat(wasmName("run"), []byte{0x00, 0x01}))),
		wasmSection(10, wasmVec([]byte{0x02, 0x00, 0x0b})),
	),
	"start function past the last": wasmModule(
		wasmSection(1, wasmVec([]byte{0x60, 0x00, 0x00})),
		wasmSection(3, wasmVec([]byte{0x00})),
		wasmSection(8, []byte{0x01}),
		wasmSection(10, wasmVec([]byte{0x02, 0x00, 0x0b})),
	),
	"element naming a function past the last": invalidModule([]byte{0x41, 0x00},
		wasmSection(4, wasmVec([]byte{0x70, 0x00, 0x01})),
		wasmSection(9, wasmVec([]byte{0x00, 0x41, 0x00, 0x0b, 0x01, 0x01}))),
	"function of a type past the last": wasmModule(
		wasmSection(1, wasmVec([]byte{0x60, 0x00, 0x00})),
		wasmSection(3, wasmVec([]byte{0x01})),
		wasmSection(10, wasmVec([]byte{0x02, 0x00, 0x0b})),
	),
	// The type section declares two types and holds one: the rewrite
	// rewrote the count and appended its own types after the one.
	"type section whose count exceeds its entries": wasmModule(
		wasmSection(1, []byte{0x02, 0x60, 0x00, 0x00}),
		wasmSection(3, wasmVec([]byte{0x00})),
		wasmSection(10, wasmVec([]byte{0x02, 0x00, 0x0b})),
	),
}

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
	for name, wasm := range invalidModules {
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

// TestTheRewriteRefusesIndicesOutOfRange checks makeInterruptible on its
// own: every index it renumbers or appends after is range-checked, so that
// it refuses an invalid module rather than make it valid.
func TestTheRewriteRefusesIndicesOutOfRange(t *testing.T) {
	for name, wasm := range invalidModules {
		t.Run(name, func(t *testing.T) {
			if _, err := makeInterruptible(wasm); !refusedAsInvalid(err) {
				t.Errorf("makeInterruptible: %v; want it refused as malformed", err)
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
	for name, wasm := range realModules(b) {
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
