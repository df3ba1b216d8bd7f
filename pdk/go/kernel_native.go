//go:build !wasm

package pdk

// Outside WebAssembly there is no Extism kernel. The PDK's logic still
// compiles natively so that it can be unit-tested: the tests install a fake
// kernel with useKernel and drive the exports through it.

// kernel is the subset of the Extism kernel (extism:host/env) and of the
// mcphost host functions (extism:host/user) the PDK calls.
type kernel interface {
	InputLength() uint64
	InputLoadU64(offset uint64) uint64
	InputLoadU8(offset uint64) uint32
	Alloc(length uint64) uint64
	Free(offset uint64)
	Length(offset uint64) uint64
	LoadU64(offset uint64) uint64
	LoadU8(offset uint64) uint32
	StoreU64(offset, v uint64)
	StoreU8(offset uint64, v uint32)
	OutputSet(offset, length uint64)
	ErrorSet(offset uint64)
	ConfigGet(offset uint64) uint64
	HTTPRequest(request, body uint64) uint64
	HTTPStatusCode() int32
	HTTPHeaders() uint64
	// HostCall calls the mcphost host function name. input is 0 for
	// functions without input; the result is 0 for functions without
	// output.
	HostCall(name string, input uint64) uint64
}

var activeKernel kernel = noKernel{}

// useKernel installs k and returns a function restoring the previous kernel.
func useKernel(k kernel) (restore func()) {
	prev := activeKernel
	activeKernel = k
	return func() { activeKernel = prev }
}

func extInputLength() uint64               { return activeKernel.InputLength() }
func extInputLoadU64(offset uint64) uint64 { return activeKernel.InputLoadU64(offset) }
func extInputLoadU8(offset uint64) uint32  { return activeKernel.InputLoadU8(offset) }
func extAlloc(length uint64) uint64        { return activeKernel.Alloc(length) }
func extFree(offset uint64)                { activeKernel.Free(offset) }
func extLength(offset uint64) uint64       { return activeKernel.Length(offset) }
func extLoadU64(offset uint64) uint64      { return activeKernel.LoadU64(offset) }
func extLoadU8(offset uint64) uint32       { return activeKernel.LoadU8(offset) }
func extStoreU64(offset uint64, v uint64)  { activeKernel.StoreU64(offset, v) }
func extStoreU8(offset uint64, v uint32)   { activeKernel.StoreU8(offset, v) }
func extOutputSet(offset, length uint64)   { activeKernel.OutputSet(offset, length) }
func extErrorSet(offset uint64)            { activeKernel.ErrorSet(offset) }
func extConfigGet(offset uint64) uint64    { return activeKernel.ConfigGet(offset) }
func extHTTPRequest(req, body uint64) uint64 {
	return activeKernel.HTTPRequest(req, body)
}
func extHTTPStatusCode() int32 { return activeKernel.HTTPStatusCode() }
func extHTTPHeaders() uint64   { return activeKernel.HTTPHeaders() }

// noKernel is the kernel outside WebAssembly when no test installed one.
type noKernel struct{}

func (noKernel) fail() { panic("pdk: no Extism kernel: the PDK runs inside a WebAssembly plugin") }

func (k noKernel) InputLength() uint64               { k.fail(); return 0 }
func (k noKernel) InputLoadU64(uint64) uint64        { k.fail(); return 0 }
func (k noKernel) InputLoadU8(uint64) uint32         { k.fail(); return 0 }
func (k noKernel) Alloc(uint64) uint64               { k.fail(); return 0 }
func (k noKernel) Free(uint64)                       { k.fail() }
func (k noKernel) Length(uint64) uint64              { k.fail(); return 0 }
func (k noKernel) LoadU64(uint64) uint64             { k.fail(); return 0 }
func (k noKernel) LoadU8(uint64) uint32              { k.fail(); return 0 }
func (k noKernel) StoreU64(uint64, uint64)           { k.fail() }
func (k noKernel) StoreU8(uint64, uint32)            { k.fail() }
func (k noKernel) OutputSet(uint64, uint64)          { k.fail() }
func (k noKernel) ErrorSet(uint64)                   { k.fail() }
func (k noKernel) ConfigGet(uint64) uint64           { k.fail(); return 0 }
func (k noKernel) HTTPRequest(uint64, uint64) uint64 { k.fail(); return 0 }
func (k noKernel) HTTPStatusCode() int32             { k.fail(); return 0 }
func (k noKernel) HTTPHeaders() uint64               { k.fail(); return 0 }
func (k noKernel) HostCall(string, uint64) uint64    { k.fail(); return 0 }
