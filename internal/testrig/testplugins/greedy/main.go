//go:build wasip1

// Command greedy is a test plugin that tries to make the host use memory:
// it floods the Extism kernel's allocator, grows its own memory until
// there is none, and hands the kernel functions and host functions the
// largest blocks it can. It is written with the Extism Go PDK and calls
// the kernel functions directly, as a third-party plugin would. The
// memory tests in internal/testrig/e2e check that the server's peak memory stays
// within the bound RATIONALE.md gives.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	pdk "github.com/extism/go-pdk"
)

func main() {}

//go:wasmimport extism:host/env alloc
func kernelAlloc(n uint64) uint64

//go:wasmimport extism:host/env store_u8
func kernelStoreU8(offset uint64, v uint32)

//go:wasmimport extism:host/env error_set
func kernelErrorSet(offset uint64)

//go:wasmimport extism:host/env config_get
func kernelConfigGet(offset uint64) uint64

//go:wasmimport extism:host/env var_set
func kernelVarSet(name, value uint64)

//go:wasmimport extism:host/env log_info
func kernelLogInfo(offset uint64)

//go:wasmimport extism:host/env http_request
func kernelHTTPRequest(request, body uint64) uint64

//go:wasmimport extism:host/user notify_logging_message
func notifyLoggingMessage(offset uint64)

// tools are the tools greedy lists, each taking its arguments as an object.
var tools = []string{"alloc_flood", "grow", "error_set", "log", "config_get", "var_set", "notify", "http_headers", "output", "sleep", "ok"}

//go:wasmexport list_tools
func listTools() int32 {
	var list []string
	for _, name := range tools {
		list = append(list, `{"name":"`+name+`","inputSchema":{"type":"object"}}`)
	}
	pdk.OutputString(`{"tools":[` + strings.Join(list, ",") + `]}`)
	return 0
}

// args are the arguments of every tool: a size in bytes, a count (of
// milliseconds for sleep), a URL and the character texts are made of (JSON-escaped in what the plugin
// writes: "<" is "\u003c" in what Go's encoder writes).
type args struct {
	Bytes uint64 `json:"bytes"`
	N     int    `json:"n"`
	URL   string `json:"url"`
	Fill  string `json:"fill"`
}

//go:wasmexport call_tool
func callTool() int32 {
	var in struct {
		Request struct {
			Name      string `json:"name"`
			Arguments args   `json:"arguments"`
		} `json:"request"`
	}
	if err := json.Unmarshal(pdk.Input(), &in); err != nil {
		return fail(err.Error())
	}
	a := in.Request.Arguments
	switch in.Request.Name {
	case "alloc_flood":
		return allocFlood()
	case "grow":
		return grow()
	case "error_set":
		kernelErrorSet(block(a.Bytes))
		return 1
	case "log":
		for range a.N {
			kernelLogInfo(block(a.Bytes)) // which frees the block
		}
	case "config_get":
		kernelConfigGet(block(a.Bytes))
	case "var_set":
		kernelVarSet(alloc([]byte("v")), block(a.Bytes))
	case "notify":
		// A log notification whose data is a string of a.Bytes bytes.
		payload := `{"level":"info","data":"` + strings.Repeat(a.fill(), int(a.Bytes)) + `"}`
		b := alloc([]byte(payload))
		for range a.N {
			notifyLoggingMessage(b)
		}
	case "http_headers":
		// A request whose one header takes a.Bytes bytes.
		req, _ := json.Marshal(map[string]any{"url": a.URL, "headers": map[string]string{"X-Big": strings.Repeat("h", int(a.Bytes))}})
		for range a.N {
			kernelHTTPRequest(alloc(req), 0) // which frees the request
		}
	case "output":
		pdk.OutputString(`{"content":[{"type":"text","text":"` + strings.Repeat(a.fill(), int(a.Bytes)) + `"}]}`)
		return 0
	case "sleep":
		fmt.Fprintln(os.Stderr, "sleep: started") // what a test waits for to know the call holds its instance
		time.Sleep(time.Duration(a.N) * time.Millisecond)
	case "ok":
	default:
		return fail("no tool " + in.Request.Name)
	}
	pdk.OutputString(`{"content":[{"type":"text","text":"ok"}]}`)
	return 0
}

// fill returns the character of a's texts, "x" by default.
func (a args) fill() string {
	if a.Fill == "" {
		return "x"
	}
	return a.Fill
}

// block returns a new block of n bytes of kernel memory, each of its pages
// written so that the host's memory holds it.
func block(n uint64) uint64 {
	offset := kernelAlloc(n)
	if offset == 0 && n > 0 {
		panic(fmt.Sprintf("kernel memory exhausted: no block of %d bytes", n))
	}
	for i := uint64(0); i < n; i += 4096 {
		kernelStoreU8(offset+i, 1)
	}
	return offset
}

// alloc copies b into a new block of kernel memory.
func alloc(b []byte) uint64 {
	m := pdk.AllocateBytes(b)
	return m.Offset()
}

// allocFlood allocates blocks of 1 MiB of kernel memory, writing each, until
// the kernel refuses one.
func allocFlood() int32 {
	for mib := 0; ; mib++ {
		offset := kernelAlloc(1 << 20)
		if offset == 0 {
			return fail(fmt.Sprintf("kernel memory exhausted after %d MiB", mib))
		}
		for i := uint64(0); i < 1<<20; i += 4096 {
			kernelStoreU8(offset+i, 1)
		}
	}
}

var hoard [][]byte

// grow allocates blocks of 1 MiB of its own memory, writing each, until
// there is none.
func grow() int32 {
	for {
		b := make([]byte, 1<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		hoard = append(hoard, b)
	}
}

// fail sets msg as the call's error.
func fail(msg string) int32 {
	pdk.SetErrorString(msg)
	return 1
}
