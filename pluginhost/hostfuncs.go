package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sandbox"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// hostFunctions links every host function of the ABI into a plugin: those
// granted run impl's implementation; every other one fails with an error
// that names the grant to add.
func hostFunctions(plugin string, granted []string, impl map[string]host.HostFunc) []sandbox.HostFunction {
	names := abi.HostFunctionNames()
	fns := make([]sandbox.HostFunction, 0, len(names))
	for _, name := range names {
		sig, _ := abi.HostSignatureOf(name)
		f := sandbox.HostFunction{Name: name, Input: sig.Input, Output: sig.Output, Failure: hyperFailures[name]}
		fn, ok := impl[name]
		switch {
		case !isGranted(granted, name):
			f.Fn, f.Denied = denied(fmt.Sprintf("host function %s is not granted to plugin %s (add it to host_functions in [plugins.%s])", name, plugin, plugin)), true
		case !ok:
			f.Fn, f.Denied = denied(fmt.Sprintf("host function %s is not supported by this version of mcphost", name)), true
		default:
			f.Fn = fn
		}
		f.Fn = traced(name, f.Denied, f.Fn)
		fns = append(fns, f)
	}
	return fns
}

// DeniedHostFunctions links every host function of the ABI into a plugin
// that is granted none: each fails with an error that names the grant to
// add. The developer tools run plugins so, to list what they offer.
func DeniedHostFunctions(plugin string) []sandbox.HostFunction {
	return hostFunctions(plugin, nil, nil)
}

// hostAliases pairs the host functions that are one function under two
// names; granting either grants both.
var hostAliases = map[string]string{
	abi.HostNotifyElicitationComplete:     abi.HostNotifyURLElicitationCompleted,
	abi.HostNotifyURLElicitationCompleted: abi.HostNotifyElicitationComplete,
}

// isGranted reports whether the host function name is in granted, itself
// or by its alias.
func isGranted(granted []string, name string) bool {
	return slices.Contains(granted, name) || slices.Contains(granted, hostAliases[name])
}

func denied(msg string) func(context.Context, []byte) ([]byte, error) {
	return func(context.Context, []byte) ([]byte, error) { return nil, errors.New(msg) }
}

// scopeName is the instrumentation scope of the host functions' spans.
const scopeName = "github.com/mcphost/mcphost/pluginhost"

// traced returns fn, the host function name, as a span of its own under
// the span of the plugin call that calls it, when that one is recording;
// denied marks a function the plugin is not granted.
func traced(name string, denied bool, fn host.HostFunc) host.HostFunc {
	return func(ctx context.Context, input []byte) ([]byte, error) {
		parent := trace.SpanFromContext(ctx)
		if !parent.IsRecording() {
			return fn(ctx, input)
		}
		ctx, span := parent.TracerProvider().Tracer(scopeName).Start(ctx, name, trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(attribute.String("mcphost.host_function.name", name), attribute.Bool("mcphost.host_function.denied", denied)))
		defer span.End()
		out, err := fn(ctx, input)
		if err != nil {
			span.SetStatus(codes.Error, err.Error())
		}
		return out, err
	}
}
