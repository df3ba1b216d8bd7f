package sandbox

import (
	"context"

	extism "github.com/extism/go-sdk"
	"github.com/mcphost/mcphost/sandbox/internal/wasmpass"
)

// How a call is stopped when its context ends: the sandbox compiles a
// countdown into the module (wasmpass.Instrument), which calls
// wasmpass.InterruptModule's wasmpass.InterruptName every so often; the
// sandbox serves that import (interruptFunction) and ends the call there
// once its context has ended (RATIONALE.md, "How is a call stopped when
// its context ends?").

// interruptFunction is the host function an interruptible module calls
// when its countdown runs out: it ends the call by panicking, which wazero turns
// into the call's error, when the call's context has ended. The instance
// is then discarded (CallAs keeps only instances whose call's context did
// not end).
func interruptFunction() extism.HostFunction {
	f := extism.NewHostFunctionWithStack(wasmpass.InterruptName, func(ctx context.Context, _ *extism.CurrentPlugin, _ []uint64) {
		endIfDone(ctx)
	}, nil, nil)
	f.SetNamespace(wasmpass.InterruptModule)
	return f
}

// endIfDone ends the call whose host function runs with ctx, by panicking
// with ctx's cause, which wazero turns into the call's error, once ctx has
// ended.
func endIfDone(ctx context.Context) {
	if ctx.Err() != nil {
		panic(context.Cause(ctx))
	}
}

// startContext returns ctx for instantiating a plugin. Extism's wrapper of
// a host function refuses a call without the plugin in its context, which
// Extism puts there for calls of exports but not while wazero runs the
// module's start function: the start function's checks would fail on their
// first look. So ctx carries a plugin of no use to anything but that
// wrapper; the sandbox's other host functions fail on it as they did
// without it.
func startContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, extism.PluginCtxKey("plugin"), &extism.Plugin{})
}
