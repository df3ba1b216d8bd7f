//go:build wasip1

// Command hostcall is the sandbox test plugin that calls host functions of
// every signature.
package main

import "github.com/mcphost/mcphost/sandbox/testdata/kernel"

//go:wasmimport extism:host/user roundtrip
func roundtrip(input uint64) uint64

//go:wasmimport extism:host/user notify
func notify(input uint64)

//go:wasmimport extism:host/user ask
func ask() uint64

//go:wasmimport extism:host/user wait
func wait()

func main() {}

//go:wasmexport call_roundtrip
func callRoundtrip() int32 {
	kernel.Output(kernel.Read(roundtrip(kernel.Alloc(kernel.Input()))))
	return 0
}

//go:wasmexport call_notify
func callNotify() int32 {
	notify(kernel.Alloc(kernel.Input()))
	return 0
}

//go:wasmexport call_ask
func callAsk() int32 {
	kernel.Output(kernel.Read(ask()))
	return 0
}

//go:wasmexport call_wait
func callWait() int32 {
	wait()
	return 0
}

// inputNumber returns the call's input as a decimal number.
func inputNumber() int {
	n := 0
	for _, c := range kernel.Input() {
		n = n*10 + int(c-'0')
	}
	return n
}

// reserve allocates as many bytes of kernel memory as its input says.
//
//go:wasmexport reserve
func reserve() int32 {
	kernel.AllocN(uint64(inputNumber()))
	return 0
}

// call_notify_block calls notify with a new block of as many bytes as its
// input says.
//
//go:wasmexport call_notify_block
func callNotifyBlock() int32 {
	notify(kernel.AllocN(uint64(inputNumber())))
	return 0
}

// call_notify_many calls notify as many times as its input says.
//
//go:wasmexport call_notify_many
func callNotifyMany() int32 {
	n := inputNumber()
	msg := kernel.Alloc([]byte("flood"))
	for range n {
		notify(msg)
	}
	return 0
}
