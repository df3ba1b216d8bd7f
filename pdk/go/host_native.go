//go:build !wasm

package pdk

import "github.com/mcphost/mcphost/abi"

func hostCreateMessage(input uint64) uint64 {
	return activeKernel.HostCall(abi.HostCreateMessage, input)
}

func hostCreateElicitation(input uint64) uint64 {
	return activeKernel.HostCall(abi.HostCreateElicitation, input)
}

func hostListRoots() uint64 { return activeKernel.HostCall(abi.HostListRoots, 0) }

func hostRequestInput(input uint64) uint64 {
	return activeKernel.HostCall(abi.HostRequestInput, input)
}

func hostNotifyLoggingMessage(input uint64) {
	activeKernel.HostCall(abi.HostNotifyLoggingMessage, input)
}

func hostNotifyProgress(input uint64) { activeKernel.HostCall(abi.HostNotifyProgress, input) }

func hostNotifyToolListChanged() { activeKernel.HostCall(abi.HostNotifyToolListChanged, 0) }

func hostNotifyPromptListChanged() { activeKernel.HostCall(abi.HostNotifyPromptListChanged, 0) }

func hostNotifyResourceListChanged() {
	activeKernel.HostCall(abi.HostNotifyResourceListChanged, 0)
}

func hostNotifyResourceUpdated(input uint64) {
	activeKernel.HostCall(abi.HostNotifyResourceUpdated, input)
}

func hostNotifyElicitationComplete(input uint64) {
	activeKernel.HostCall(abi.HostNotifyElicitationComplete, input)
}
