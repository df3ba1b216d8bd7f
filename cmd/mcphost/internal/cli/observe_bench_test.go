package cli

import (
	"context"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/metrics"
	"github.com/mcphost/mcphost/sandbox"
	"github.com/mcphost/mcphost/status"
)

// BenchmarkObservedCall measures what the metrics and the status page do
// for one tools/call, as serve composes them (observe): the sandbox's
// report of the call's wait and run, the plugin call, the request.
func BenchmarkObservedCall(b *testing.B) {
	o, sandboxes := observe(metrics.New(metrics.Options{}), status.NewRecorder(), nil)
	sb := sandboxes("tools")
	ctx := context.Background()
	op := host.Operation{Method: "tools/call", ProtocolVersion: host.Version20251125, Transport: host.TransportStdio, Duration: time.Millisecond,
		Tool: "greet", Plugin: "tools", PluginOutcome: host.OutcomeOK}
	call := host.PluginCall{Plugin: "tools", Export: "call_tool", Outcome: host.OutcomeOK, Duration: time.Millisecond, Ended: time.Now()}
	b.ReportAllocs()
	for range b.N {
		sb.Called(ctx, sandbox.CallReport{Export: "call_tool", Wait: time.Microsecond, Run: time.Millisecond})
		o.PluginCalled(call)
		o.Served(op)
	}
}
