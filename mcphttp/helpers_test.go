package mcphttp

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/jsonrpc"
	"github.com/mcphost/mcphost/internal/testrig/pluginfake"
)

// Plugins and messages of the tests, on pluginfake.
type fakeRuntime = pluginfake.Runtime

var (
	returns            = pluginfake.Returns
	modernMeta         = pluginfake.Meta20260728
	objectSchema       = pluginfake.NSchema
	echoTool           = abi.Tool{Name: "echo", InputSchema: objectSchema}
	encodeNotification = jsonrpc.EncodeNotification
)

// toolsPlugin serves tools, answering a call with "name:tool:arguments".
func toolsPlugin(name string, tools ...abi.Tool) *host.Plugin {
	return host.NewPlugin(name, "", pluginfake.Tools(name, tools...))
}

// callerPlugin has one tool, ask, that calls fn with its arguments.
func callerPlugin(fn func(context.Context, []byte) ([]byte, error)) *host.Plugin {
	return host.NewPlugin("p", "", pluginfake.Caller(fn))
}

// hostFn returns host function name as the engine offers it to a plugin.
func hostFn(t *testing.T, name string) func(context.Context, []byte) ([]byte, error) {
	t.Helper()
	fn, ok := host.NewServer(host.Options{}, nil).HostFunctions("p")[name]
	if !ok {
		t.Fatalf("no host function %s", name)
	}
	return fn
}

func mustJSON(v any) json.RawMessage {
	raw, _ := json.Marshal(v)
	return raw
}
