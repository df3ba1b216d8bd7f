//go:build wasm

package pdk

// The Extism kernel functions (module extism:host/env) the PDK uses. Every
// Extism host provides all of them; the Go linker drops the imports a plugin
// never reaches.

//go:wasmimport extism:host/env input_length
func extInputLength() uint64

//go:wasmimport extism:host/env input_load_u64
func extInputLoadU64(offset uint64) uint64

//go:wasmimport extism:host/env input_load_u8
func extInputLoadU8(offset uint64) uint32

//go:wasmimport extism:host/env alloc
func extAlloc(length uint64) uint64

//go:wasmimport extism:host/env free
func extFree(offset uint64)

//go:wasmimport extism:host/env length
func extLength(offset uint64) uint64

//go:wasmimport extism:host/env load_u64
func extLoadU64(offset uint64) uint64

//go:wasmimport extism:host/env load_u8
func extLoadU8(offset uint64) uint32

//go:wasmimport extism:host/env store_u64
func extStoreU64(offset uint64, v uint64)

//go:wasmimport extism:host/env store_u8
func extStoreU8(offset uint64, v uint32)

//go:wasmimport extism:host/env output_set
func extOutputSet(offset uint64, length uint64)

//go:wasmimport extism:host/env error_set
func extErrorSet(offset uint64)

//go:wasmimport extism:host/env config_get
func extConfigGet(offset uint64) uint64

//go:wasmimport extism:host/env http_request
func extHTTPRequest(request uint64, body uint64) uint64

//go:wasmimport extism:host/env http_status_code
func extHTTPStatusCode() int32

//go:wasmimport extism:host/env http_headers
func extHTTPHeaders() uint64
