//go:build wasm

package pdk

// The mcphost host functions (module extism:host/user). A plugin imports
// only those it reaches: the Go linker drops the others, so a plugin that
// never reports progress does not import notify_progress and needs no grant
// for it.

//go:wasmimport extism:host/user create_message
func hostCreateMessage(input uint64) uint64

//go:wasmimport extism:host/user create_elicitation
func hostCreateElicitation(input uint64) uint64

//go:wasmimport extism:host/user list_roots
func hostListRoots() uint64

//go:wasmimport extism:host/user request_input
func hostRequestInput(input uint64) uint64

//go:wasmimport extism:host/user notify_logging_message
func hostNotifyLoggingMessage(input uint64)

//go:wasmimport extism:host/user notify_progress
func hostNotifyProgress(input uint64)

//go:wasmimport extism:host/user notify_tool_list_changed
func hostNotifyToolListChanged()

//go:wasmimport extism:host/user notify_prompt_list_changed
func hostNotifyPromptListChanged()

//go:wasmimport extism:host/user notify_resource_list_changed
func hostNotifyResourceListChanged()

//go:wasmimport extism:host/user notify_resource_updated
func hostNotifyResourceUpdated(input uint64)

//go:wasmimport extism:host/user notify_elicitation_complete
func hostNotifyElicitationComplete(input uint64)
