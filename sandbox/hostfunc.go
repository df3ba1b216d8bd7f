package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	extism "github.com/extism/go-sdk"
	"github.com/mcphost/mcphost/abi"
)

// HostFunction is a function the host offers plugins in abi.HostModule.
// Input and Output say whether it takes and returns bytes, which fixes its
// wasm signature: (i64) -> i64, (i64) -> (), () -> i64 or () -> (), the
// i64s being Extism memory offsets.
type HostFunction struct {
	Name   string
	Input  bool
	Output bool
	// Fn serves a call. ctx is the context the plugin's caller passed to
	// Plugin.Call (with the call's timeout), so values the caller stored in
	// it are visible. Fn should return once ctx is done: nothing can stop a
	// call while it runs host code. When Fn fails, a
	// function with an output returns abi.HostFunctionError to the plugin
	// (with the code of an *abi.Error in err's chain, else
	// abi.CodeInternalError); a function without one logs the error.
	Fn func(ctx context.Context, input []byte) ([]byte, error)
	// Failure, when set, is what a function with an output returns when
	// Fn fails, instead of abi.HostFunctionError (hyper-mcp's functions
	// that answer null or nothing); the error is then logged.
	Failure []byte
	// Denied marks a function the plugin is not granted: Fn only says so.
	// An Observer counts its calls as denials.
	Denied bool
}

// toExtism returns f as an Extism host function that logs to logger,
// refuses inputs of more than maxInput bytes (Limits.MaxOutputBytes) and
// tells observer, when not nil, of each call.
func (f HostFunction) toExtism(logger *slog.Logger, maxInput int, observer Observer) extism.HostFunction {
	var params, results []extism.ValueType
	if f.Input {
		params = []extism.ValueType{extism.ValueTypePTR}
	}
	if f.Output {
		results = []extism.ValueType{extism.ValueTypePTR}
	}
	hf := extism.NewHostFunctionWithStack(f.Name, func(ctx context.Context, cp *extism.CurrentPlugin, stack []uint64) {
		state := callStateFrom(ctx)
		if err := state.takeHostCall(f.Name); err != nil {
			panic(err) // stops the call: a trap
		}
		if observer != nil {
			observer.HostCalled(ctx, f.Name, f.Denied)
		}
		var input []byte
		if f.Input {
			input = readBlock(cp, stack[0], "host function "+f.Name+": input", maxInput, outputLimit)
		}
		output, err := f.Fn(ctx, input)
		// The call's context may have ended while it waited: the call then
		// ends now, as at its next look at its countdown, whatever the
		// function answered, rather than run on with an answer it timed
		// out for.
		endIfDone(ctx)
		if err != nil {
			if !f.Output {
				// Within the call's log budget: a plugin calling a
				// failing function in a loop must not flood the log.
				state.logWarn(logger, ctx, "host function failed",
					slog.String("function", f.Name), slog.String("error", err.Error()))
				return
			}
			output = errorEnvelope(err)
			if f.Failure != nil {
				state.logWarn(logger, ctx, "host function failed",
					slog.String("function", f.Name), slog.String("error", err.Error()))
				output = f.Failure
			}
		}
		if f.Output && len(output) == 0 {
			stack[0] = 0 // an empty output: no block (the kernel allocates none)
		} else if f.Output {
			offset, err := cp.WriteBytes(output)
			if err != nil {
				panic(fmt.Errorf("host function %s: writing output: %w", f.Name, err))
			}
			stack[0] = offset
		}
	}, params, results)
	hf.SetNamespace(abi.HostModule)
	return hf
}

// errorEnvelope encodes err as the abi.HostFunctionError a host function
// returns to the plugin.
func errorEnvelope(err error) []byte {
	e := abi.Error{Code: abi.CodeInternalError, Message: err.Error()}
	if ae := (*abi.Error)(nil); errors.As(err, &ae) {
		e = *ae
		if !json.Valid(e.Data) {
			e.Data = nil
		}
	}
	b, _ := json.Marshal(abi.HostFunctionError{Error: &e}) // cannot fail: Data is valid or nil
	return b
}

// hostFunctions checks fns and that they provide every function info
// imports from abi.HostModule, and returns them as Extism host functions
// whose inputs may take up to maxInput bytes, which tell observer of their
// calls.
func hostFunctions(info *Info, fns []HostFunction, logger *slog.Logger, maxInput int, observer Observer) ([]extism.HostFunction, error) {
	out := make([]extism.HostFunction, 0, len(fns))
	provided := make(map[string]bool, len(fns))
	for _, f := range fns {
		switch {
		case f.Name == "":
			return nil, errors.New("host function without a name")
		case f.Fn == nil:
			return nil, fmt.Errorf("host function %s has no Fn", f.Name)
		case provided[f.Name]:
			return nil, fmt.Errorf("host function %s defined twice", f.Name)
		}
		provided[f.Name] = true
		out = append(out, f.toExtism(logger, maxInput, observer))
	}
	for _, name := range info.HostImports() {
		if !provided[name] {
			return nil, fmt.Errorf("plugin imports unknown host function %q from %s", name, abi.HostModule)
		}
	}
	return out, nil
}
