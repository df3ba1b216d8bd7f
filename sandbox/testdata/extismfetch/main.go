//go:build wasip1

// Command extismfetch is the sandbox test plugin that sends HTTP requests
// through the third-party Extism Go PDK (github.com/extism/go-pdk), which
// expects Extism's contract: a request that fails fails the call.
package main

import pdk "github.com/extism/go-pdk"

func main() {}

// http sends a GET request to the URL its input holds and outputs the
// response body.
//
//go:wasmexport http
func http() int32 {
	resp := pdk.NewHTTPRequest(pdk.MethodGet, pdk.InputString()).Send()
	pdk.Output(resp.Body())
	return 0
}
