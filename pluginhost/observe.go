package pluginhost

import (
	"context"
	"errors"

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

func (r requestReporter) Happened(event string) {
	if r.next != nil {
		r.next.Happened(event)
	}
}

// LoadObserver is told of what the plugin host loads, for metrics
// (Loader.Loads). Its methods must be quick.
type LoadObserver interface {
	// Changed is told of each change of the plugins that serve: a plugin
	// added, replaced (a hot swap), reconfigured, or removed.
	Changed(plugin, change string)
	// LoadFailed is told of each version of plugin that did not load,
	// and why, in a word (failureReason).
	LoadFailed(plugin, reason string)
	// ListingCache is told of each load that looked in the listing
	// cache: whether it found what the plugin listed.
	ListingCache(hit bool)
}

// The reasons LoadObserver.LoadFailed gives.
const (
	FailedSource        = "source"         // its source (an OCI registry) did not give it
	FailedInvalidModule = "invalid_module" // not a valid WebAssembly module
	FailedLoadBudget    = "load_budget"    // it did not start and list within load_budget
	FailedStart         = "start"          // it trapped or failed starting or listing
	FailedOther         = "other"          // its grants, ABI, pin, size, ...
)

// failureReason says in a word why a load failed with err.
func failureReason(err error) string {
	var ce *sandbox.CallError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return FailedLoadBudget
	case errors.Is(err, sandbox.ErrInvalidModule), errors.Is(err, sandbox.ErrBadMagic), errors.Is(err, sandbox.ErrBadVersion),
		errors.Is(err, sandbox.ErrTruncated), errors.Is(err, sandbox.ErrSectionOverrun), errors.Is(err, sandbox.ErrMalformed):
		return FailedInvalidModule
	case errors.As(err, &ce):
		return FailedStart
	}
	return FailedOther
}

// changed tells the Loader's LoadObserver, if any, of a change.
func (l *Loader) changed(plugin, change string) {
	if l.Loads != nil {
		l.Loads.Changed(plugin, change)
	}
}

// loadFailed tells the Loader's LoadObserver, if any, of a failed load.
func (l *Loader) loadFailed(plugin, reason string) {
	if l.Loads != nil {
		l.Loads.LoadFailed(plugin, reason)
	}
}
