//go:build tinygo && wasm && scheduler.asyncify

package pdk

import "unsafe"

// The ABI exports for TinyGo's asyncify scheduler (its default for wasip1),
// which run every call on one goroutine that lives as long as the plugin.
//
// TinyGo runs each call of a //go:wasmexport function on a new goroutine,
// with a new stack of the target's default-stack-size (256 KiB with the
// project's target): a quarter of a megabyte of garbage per call. Its
// collector scans goroutine stacks and the whole data segment, constants
// included, conservatively, so that once the heap spans a few megabytes,
// constants of the data segment (unicode tables, powers of ten) that fall
// inside it keep dead stacks alive, and each dead stack, scanned in turn,
// keeps more. The tools example's heap grew from 1.5 to 48 MiB in 100 calls,
// a third of it dead stacks, and every collection, one every ~70 calls,
// scanned them all: 0.3 to 1 s stalls. (With -scheduler=none the exports
// run on the system stack and none of this happens.)
//
// So these exports are plain //export functions, which run on the system
// stack, and hand each call to the worker goroutine: started by the first
// call, parked between calls. A call can still block (channels, mutexes,
// time.Sleep) and the plugin's other goroutines run meanwhile, as with
// //go:wasmexport; the runtime functions used are the ones TinyGo's own
// //go:wasmexport wrappers call.

//export list_tools
func exportListTools() int32 { return serve(handleListTools) }

//export call_tool
func exportCallTool() int32 { return serve(handleCallTool) }

//export list_prompts
func exportListPrompts() int32 { return serve(handleListPrompts) }

//export get_prompt
func exportGetPrompt() int32 { return serve(handleGetPrompt) }

//export list_resources
func exportListResources() int32 { return serve(handleListResources) }

//export list_resource_templates
func exportListResourceTemplates() int32 { return serve(handleListResourceTemplates) }

//export read_resource
func exportReadResource() int32 { return serve(handleReadResource) }

//export complete
func exportComplete() int32 { return serve(handleComplete) }

// exportHTTPErrors is abi.ExportHTTPErrors (see exports_wasm.go).
//
//export mcphost_http_errors
func exportHTTPErrors() int32 { return 0 }

// wasmExportRun runs the scheduler until a goroutine calls wasmExportExit,
// then panics unless *done (TinyGo's //go:wasmexport wrappers call it after
// starting the call's goroutine).
//
//go:linkname wasmExportRun runtime.wasmExportRun
func wasmExportRun(done *bool)

// wasmExportExit parks the current goroutine and makes wasmExportRun
// return.
//
//go:linkname wasmExportExit runtime.wasmExportExit
func wasmExportExit()

// scheduleTask puts a goroutine (a *internal/task.Task) in the run queue.
//
//go:linkname scheduleTask runtime.scheduleTask
func scheduleTask(t unsafe.Pointer)

// currentTask returns the current goroutine's *internal/task.Task.
//
//go:linkname currentTask internal/task.Current
func currentTask() unsafe.Pointer

// The worker goroutine and the call it runs.
var (
	worker  unsafe.Pointer // its task while parked; nil before the first call
	job     handler
	jobRC   int32
	jobDone bool
)

// serve runs h on the worker goroutine, with the scheduler, until it is
// done, and returns its result.
func serve(h handler) int32 {
	job, jobDone = h, false
	if worker == nil {
		go work()
	} else {
		t := worker
		worker = nil
		scheduleTask(t)
	}
	wasmExportRun(&jobDone)
	return jobRC
}

// work is the worker goroutine: it runs a call, then parks until the next.
func work() {
	for {
		jobRC = run(job)
		job = nil
		jobDone = true
		worker = currentTask()
		wasmExportExit()
	}
}
