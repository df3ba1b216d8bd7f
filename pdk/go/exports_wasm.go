//go:build wasm && !(tinygo && scheduler.asyncify)

package pdk

// The ABI exports. Every plugin built with the PDK has all of them; each
// answers from what the plugin registered, so a plugin that registered no
// prompts answers list_prompts with an empty list. TinyGo's asyncify
// scheduler gets them from exports_asyncify.go instead.

//go:wasmexport list_tools
func exportListTools() int32 { return run(handleListTools) }

//go:wasmexport call_tool
func exportCallTool() int32 { return run(handleCallTool) }

//go:wasmexport list_prompts
func exportListPrompts() int32 { return run(handleListPrompts) }

//go:wasmexport get_prompt
func exportGetPrompt() int32 { return run(handleGetPrompt) }

//go:wasmexport list_resources
func exportListResources() int32 { return run(handleListResources) }

//go:wasmexport list_resource_templates
func exportListResourceTemplates() int32 { return run(handleListResourceTemplates) }

//go:wasmexport read_resource
func exportReadResource() int32 { return run(handleReadResource) }

//go:wasmexport complete
func exportComplete() int32 { return run(handleComplete) }

// exportHTTPErrors is abi.ExportHTTPErrors: it tells mcphost that Fetch
// handles a failed request as an error value, so that mcphost answers one
// with its reason rather than failing the call. The host never calls it.
//
//go:wasmexport mcphost_http_errors
func exportHTTPErrors() int32 { return 0 }
