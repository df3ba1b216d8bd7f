package sandbox

import (
	"errors"
	"fmt"
	"reflect"
	"unsafe"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
)

// How an instance's exports are called.
//
// Extism's Plugin.CallWithContext looks up seven functions at every call
// (reset, alloc and input_set of its kernel module to set the input, the
// export, error_get, output_offset and output_length), and wazero creates a
// function with a 10 KiB call stack of its own at every lookup: some 80 KiB
// of garbage per call, whatever the call does. The host's collector then
// ran every few dozen calls of a small plugin, and its cycles were the
// slowest 2% of calls (RATIONALE.md, "Why does the sandbox call exports
// itself rather than through Extism?").
//
// So an instance's first call goes through CallWithContext, which also
// initializes the guest's runtime (a reactor's _initialize, Haskell's
// hs_init), and every later call through an exportCaller, which does what
// CallWithContext does with functions looked up once. The sandbox serves
// error_set and output_set itself (kernel.go), so Extism's error and output
// are never read.

// exportCaller calls the exports of one Extism instance. Like the
// instance, it serves one call at a time.
type exportCaller struct {
	plugin  *extism.Plugin
	kernel  kernelFunctions // of Extism's kernel module of the instance
	main    api.Module      // the plugin's module
	memory  api.Memory      // the kernel's memory, where the input goes
	reset   api.Function
	alloc   api.Function
	set     api.Function // input_set
	exports map[string]export
	stack   [2]uint64 // parameters and results of the functions called
}

// export is a function the plugin exports, with its number of results.
type export struct {
	api.Function
	results int
}

// newExportCaller returns the caller of p's exports. Extism keeps an
// instance's modules in unexported fields, which are read once here: a
// version of Extism that keeps them otherwise fails here, in every test,
// rather than quietly costing garbage.
func newExportCaller(p *extism.Plugin) (*exportCaller, error) {
	v := reflect.ValueOf(p).Elem()
	module := func(field string) (api.Module, error) {
		f := v.FieldByName(field)
		if !f.IsValid() || f.Type() != reflect.TypeFor[api.Module]() {
			return nil, fmt.Errorf("sandbox: extism.Plugin has no field %s holding an api.Module; this version of Extism is not supported", field)
		}
		return *(*api.Module)(unsafe.Pointer(f.UnsafeAddr())), nil
	}
	c := &exportCaller{plugin: p, exports: map[string]export{}}
	var err error
	if c.kernel.mod, err = module("extism"); err != nil {
		return nil, err
	}
	if c.main, err = module("mainModule"); err != nil {
		return nil, err
	}
	c.memory = c.kernel.mod.ExportedMemory("memory")
	c.reset = c.kernel.function(kernelReset)
	c.alloc = c.kernel.function(kernelAlloc)
	c.set = c.kernel.mod.ExportedFunction("input_set")
	if c.memory == nil || c.reset == nil || c.alloc == nil || c.set == nil {
		return nil, errors.New("sandbox: Extism's kernel module lacks its memory, reset, alloc or input_set")
	}
	return c, nil
}

// call runs export with input as Extism's Plugin.CallWithContext does,
// without reading Extism's error or output: it returns what the export
// returned (0 for an export without a result, 1 when it failed, or its
// exit code) and its error. ctx carries the values CallWithContext puts in
// its context (callContext.Value), set here.
func (c *exportCaller) call(ctx *callContext, export string, input []byte) (uint32, error) {
	if c.main.IsClosed() {
		return 0, errors.New(errExited.Message)
	}
	ctx.caller = c
	if err := c.reset.CallWithStack(ctx, c.stack[:]); err != nil {
		return 1, err
	}
	c.stack[0] = uint64(len(input))
	if err := c.alloc.CallWithStack(ctx, c.stack[:]); err != nil {
		return 1, err
	}
	offset := c.stack[0]
	// As with Extism, an input that does not fit is not written.
	c.memory.Write(uint32(offset), input)
	c.stack[0], c.stack[1] = offset, uint64(len(input))
	if err := c.set.CallWithStack(ctx, c.stack[:]); err != nil {
		return 1, err
	}
	ctx.inputOffset, ctx.inputSet = offset, true
	f, err := c.function(export)
	if err != nil {
		return 1, err
	}
	c.stack[0] = 0
	if err := f.CallWithStack(ctx, c.stack[:]); err != nil {
		return exitCode(err)
	}
	if f.results == 0 {
		return 0, nil
	}
	return api.DecodeU32(c.stack[0]), nil
}

// exitCode returns what a call that failed with err returns: 0 and no
// error for an exit with status 0, the status of another exit, and 1 for
// any other error.
func exitCode(err error) (uint32, error) {
	var exit *sys.ExitError
	switch {
	case errors.As(err, &exit) && exit.ExitCode() == 0:
		return 0, nil
	case errors.As(err, &exit):
		return exit.ExitCode(), err
	}
	return 1, err
}

// function returns the export called name, looked up once.
func (c *exportCaller) function(name string) (export, error) {
	if f, ok := c.exports[name]; ok {
		return f, nil
	}
	f := c.main.ExportedFunction(name)
	if f == nil {
		return export{}, fmt.Errorf("unknown function: %s", name)
	}
	e := export{Function: f, results: len(f.Definition().ResultTypes())}
	if e.results > 1 {
		return export{}, fmt.Errorf("function %s has %v results, expected 0 or 1", name, e.results)
	}
	c.exports[name] = e
	return e, nil
}
