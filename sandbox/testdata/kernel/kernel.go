//go:build wasip1

// Package kernel binds the Extism kernel (extism:host/env) for the sandbox
// test plugins, which use no PDK.
package kernel

import "encoding/binary"

//go:wasmimport extism:host/env input_length
func inputLength() uint64

//go:wasmimport extism:host/env input_load_u64
func inputLoadU64(offset uint64) uint64

//go:wasmimport extism:host/env input_load_u8
func inputLoadU8(offset uint64) uint32

//go:wasmimport extism:host/env alloc
func alloc(n uint64) uint64

//go:wasmimport extism:host/env length
func length(offset uint64) uint64

//go:wasmimport extism:host/env load_u64
func loadU64(offset uint64) uint64

//go:wasmimport extism:host/env load_u8
func loadU8(offset uint64) uint32

//go:wasmimport extism:host/env store_u64
func storeU64(offset, v uint64)

//go:wasmimport extism:host/env store_u8
func storeU8(offset uint64, v uint32)

//go:wasmimport extism:host/env output_set
func outputSet(offset, n uint64)

//go:wasmimport extism:host/env error_set
func errorSet(offset uint64)

//go:wasmimport extism:host/env error_get
func errorGet() uint64

//go:wasmimport extism:host/env config_get
func configGet(offset uint64) uint64

//go:wasmimport extism:host/env var_get
func varGet(offset uint64) uint64

//go:wasmimport extism:host/env var_set
func varSet(name, value uint64)

//go:wasmimport extism:host/env http_request
func httpRequest(request, body uint64) uint64

//go:wasmimport extism:host/env http_status_code
func httpStatusCode() int32

//go:wasmimport extism:host/env log_trace
func logTrace(offset uint64)

//go:wasmimport extism:host/env log_debug
func logDebug(offset uint64)

//go:wasmimport extism:host/env log_info
func logInfo(offset uint64)

//go:wasmimport extism:host/env log_warn
func logWarn(offset uint64)

//go:wasmimport extism:host/env log_error
func logError(offset uint64)

//go:wasmimport extism:host/env get_log_level
func getLogLevel() int32

// Input returns the call's input.
func Input() []byte {
	n := inputLength()
	b := make([]byte, n)
	var i uint64
	for ; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], inputLoadU64(i))
	}
	for ; i < n; i++ {
		b[i] = byte(inputLoadU8(i))
	}
	return b
}

// InputLength returns the length of the call's input.
func InputLength() uint64 { return inputLength() }

// Alloc copies b into a new block of kernel memory and returns its offset.
func Alloc(b []byte) uint64 {
	offset := AllocN(uint64(len(b)))
	n := uint64(len(b))
	var i uint64
	for ; i+8 <= n; i += 8 {
		storeU64(offset+i, binary.LittleEndian.Uint64(b[i:]))
	}
	for ; i < n; i++ {
		storeU8(offset+i, uint32(b[i]))
	}
	return offset
}

// AllocN returns the offset of a new block of n bytes of kernel memory.
func AllocN(n uint64) uint64 {
	offset := alloc(n)
	if offset == 0 && n > 0 {
		panic("kernel memory exhausted")
	}
	return offset
}

// Read returns the block of kernel memory at offset (nil for offset 0).
func Read(offset uint64) []byte {
	if offset == 0 {
		return nil
	}
	n := length(offset)
	b := make([]byte, n)
	var i uint64
	for ; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], loadU64(offset+i))
	}
	for ; i < n; i++ {
		b[i] = byte(loadU8(offset + i))
	}
	return b
}

// Output sets the call's output to b.
func Output(b []byte) { OutputBlock(Alloc(b)) }

// OutputBlock sets the call's output to the block at offset.
func OutputBlock(offset uint64) { outputSet(offset, length(offset)) }

// Fail sets the call's error to msg and returns the status to return.
func Fail(msg string) int32 {
	ErrorSet(Alloc([]byte(msg)))
	return 1
}

// Config returns the value of the config key, and whether it is set.
func Config(key string) (string, bool) {
	offset := ConfigGet(Alloc([]byte(key)))
	return string(Read(offset)), offset != 0
}

// Var returns the value of the variable name, and whether it is set.
func Var(name string) ([]byte, bool) {
	offset := VarGet(Alloc([]byte(name)))
	return Read(offset), offset != 0
}

// SetVar sets the variable name to value, or deletes it when value is nil.
func SetVar(name string, value []byte) {
	var offset uint64
	if value != nil {
		offset = Alloc(value)
	}
	VarSet(Alloc([]byte(name)), offset)
}

// HTTPRequest sends the Extism request (JSON) and returns the body.
func HTTPRequest(request []byte) []byte {
	return Read(HTTPRequestBlocks(Alloc(request), 0))
}

// The kernel functions that take blocks of kernel memory, for plugins that
// pass blocks of their own making.

// ErrorSet sets the call's error to the block at offset; 0 clears it.
func ErrorSet(offset uint64) { errorSet(offset) }

// ErrorGet returns the offset of the call's error, 0 when none is set.
func ErrorGet() uint64 { return errorGet() }

// ConfigGet returns the offset of the value of the config key at offset, 0
// when it is not set.
func ConfigGet(key uint64) uint64 { return configGet(key) }

// VarGet returns the offset of the value of the variable named at offset,
// 0 when it is not set.
func VarGet(name uint64) uint64 { return varGet(name) }

// VarSet sets the variable named at name to the block at value, or deletes
// it when value is 0.
func VarSet(name, value uint64) { varSet(name, value) }

// HTTPRequestBlocks sends the request (JSON) at request with the body at
// body (0 for none) and returns the offset of the response body.
func HTTPRequestBlocks(request, body uint64) uint64 { return httpRequest(request, body) }

// LogInfoBlock logs the block at offset at info level.
func LogInfoBlock(offset uint64) { logInfo(offset) }

// HTTPStatusCode returns the status code of the last HTTP response.
func HTTPStatusCode() int32 { return httpStatusCode() }

// LogTrace logs msg at trace level.
func LogTrace(msg string) { logTrace(Alloc([]byte(msg))) }

// LogDebug logs msg at debug level.
func LogDebug(msg string) { logDebug(Alloc([]byte(msg))) }

// LogInfo logs msg at info level.
func LogInfo(msg string) { LogInfoBlock(Alloc([]byte(msg))) }

// LogWarn logs msg at warn level.
func LogWarn(msg string) { logWarn(Alloc([]byte(msg))) }

// LogError logs msg at error level.
func LogError(msg string) { logError(Alloc([]byte(msg))) }

// LogLevel returns the lowest level the host logs: 0 trace, 1 debug, 2
// info, 3 warn, 4 error.
func LogLevel() int32 { return getLogLevel() }
