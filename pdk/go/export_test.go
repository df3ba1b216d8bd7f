//go:build !wasm

package pdk

import (
	"fmt"

	"github.com/mcphost/mcphost/abi"
)

// exportHandlers are the handlers of the ABI exports (exports_wasm.go), by
// export name.
var exportHandlers = map[string]handler{
	abi.ExportListTools:             handleListTools,
	abi.ExportCallTool:              handleCallTool,
	abi.ExportListPrompts:           handleListPrompts,
	abi.ExportGetPrompt:             handleGetPrompt,
	abi.ExportListResources:         handleListResources,
	abi.ExportListResourceTemplates: handleListResourceTemplates,
	abi.ExportReadResource:          handleReadResource,
	abi.ExportComplete:              handleComplete,
}

// CallExport runs the ABI export named export with the JSON input, as
// mcphost runs it in a plugin, on a fake kernel, and returns its JSON
// output, or "error: " and its error text. It exists for the package's
// examples (package pdk_test), and only in its tests.
func CallExport(export, input string) string {
	h, ok := exportHandlers[export]
	if !ok {
		panic("no export " + export)
	}
	k := makeFakeKernel(panicReporter{})
	defer useKernel(k)()
	rc, output, errText := k.call(h, input)
	if rc != 0 {
		return "error: " + errText
	}
	return output
}

// panicReporter is the reporter of a fake kernel outside a test: it panics.
type panicReporter struct{}

func (panicReporter) Helper()                           {}
func (panicReporter) Fatal(args ...any)                 { panic(fmt.Sprint(args...)) }
func (panicReporter) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
