package sandbox

import (
	"fmt"
	"runtime/debug"
)

// A panic of the WebAssembly runtime outside a running call. wazero
// recovers a panic while a module runs (a host function's, or its own)
// and returns it as the call's error, but not while it compiles, links or
// instantiates a module, or looks up an export, and Extism recovers
// nothing: a bug of either there — one that a module's bytes may be able
// to reach, or a race such as the one codeCache.compileMu keeps away —
// would end the whole process, every session and call of every plugin
// with it. So the sandbox runs those steps under guard: the panic fails
// the plugin's build, instance or call (an instance that panicked is
// discarded), and is logged with its stack at error level, since it is a
// bug of the host to fix, not the plugin's.

// guard returns what f returns, or, if f panics, the error that says so,
// logging the panic with its stack; during names what f does ("compile",
// "instantiate", an export's name).
func guard[T any](p *Plugin, during string, f func() (T, error)) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			p.logger.Error("the WebAssembly runtime panicked: a bug of the host, not of the plugin; the plugin's "+during+" failed, the host carries on",
				"during", during, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			err = fmt.Errorf("the WebAssembly runtime failed during %s (%v): a bug of the host, logged with its stack", during, r)
		}
	}()
	return f()
}
