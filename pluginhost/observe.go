package pluginhost

import (
	"context"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sandbox"
)

// requestReporter is a plugin's sandbox Observer: it tells the request
// that a call serves (host.ReportCallTimes, host.ReportDenied) how long
// the call waited and ran and what the plugin was denied, for its
// Operation and the audit trail, and passes everything on to next (nil
// for none).
type requestReporter struct {
	plugin string
	next   sandbox.Observer
}

func (r requestReporter) Called(ctx context.Context, c sandbox.CallReport) {
	host.ReportCallTimes(ctx, c.Wait, c.Run)
	if r.next != nil {
		r.next.Called(ctx, c)
	}
}

func (r requestReporter) HostCalled(ctx context.Context, function string, denied bool) {
	if denied {
		host.ReportDenied(ctx, r.plugin, host.DeniedHostFunction, "host function "+function+" is not granted to plugin "+r.plugin)
	}
	if r.next != nil {
		r.next.HostCalled(ctx, function, denied)
	}
}

func (r requestReporter) Requested(ctx context.Context, rule string, denied bool) {
	if denied {
		detail := "an HTTP request that no allowed_hosts entry of plugin " + r.plugin + " grants"
		if rule != "" {
			detail = "an HTTP request granted by " + rule + " in the allowed_hosts of plugin " + r.plugin + ", refused at a redirect or a private address"
		}
		host.ReportDenied(ctx, r.plugin, host.DeniedEgress, detail)
	}
	if r.next != nil {
		r.next.Requested(ctx, rule, denied)
	}
}
