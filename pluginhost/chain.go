package pluginhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sandbox"
)

// A Middleware wraps a plugin's runtime with one concern of the call
// policy.
type Middleware func(next host.Runtime) host.Runtime

// chain builds the one call chain of a plugin, from the operator's
// settings pc, around its sandboxed runtime rt. Outermost first:
//
//   - sandbox errors become the engine's *host.CallError (EngineErrors);
//   - the drain counts the calls running, so that a replaced version closes
//     only once they ended, and routes calls that reach a closed version to
//     its successor (drain.go);
//   - the calls-per-second limit (calls_per_second, ratelimit.go) refuses
//     calls at once;
//   - the circuit breaker (breaker.go) refuses them while the plugin keeps
//     failing;
//   - innermost, rt: the sandboxed plugin, which the loader hands over
//     isolated, running each call on instances of its caller.
//
// It returns the chain and its drain.
func chain(name string, pc config.PluginConfig, rt host.Runtime, shares RateShares, logger *slog.Logger) (host.Runtime, *drain) {
	logger = logger.With("plugin", name)
	d := &drain{name: name}
	mws := []Middleware{EngineErrors(name), d.wrap}
	if pc.Limits.CallsPerSecond > 0 {
		mws = append(mws, rateLimit(name, newRateLimiter(name, pc.Limits.CallsPerSecond, shares, logger, time.Now)))
	}
	if pc.Limits.BreakerFailures > 0 {
		d.breaker = newBreaker(name, breakerSettings{
			failures:   pc.Limits.BreakerFailures,
			window:     pc.Limits.BreakerWindow,
			backoff:    pc.Limits.BreakerBackoff,
			maxBackoff: pc.Limits.BreakerMaxBackoff,
		}, logger, time.Now)
		mws = append(mws, d.breaker.wrap)
	}
	for i := len(mws) - 1; i >= 0; i-- {
		rt = mws[i](rt)
	}
	return rt, d
}

// runtimeFunc is a Runtime whose Call is a function and whose other methods
// are next's.
type runtimeFunc struct {
	host.Runtime
	call func(ctx context.Context, export string, input []byte) ([]byte, error)
}

func (r runtimeFunc) Call(ctx context.Context, export string, input []byte) ([]byte, error) {
	return r.call(ctx, export, input)
}

// EngineErrors returns the Middleware that turns the sandbox's
// *sandbox.CallError into the engine's *host.CallError, naming the setting
// of the plugin's table that would raise the limit a call ran into. Every
// plugin's chain starts with it; tools that hand a bare sandbox.Plugin to
// the engine wrap it with it.
func EngineErrors(plugin string) Middleware {
	return func(next host.Runtime) host.Runtime {
		return runtimeFunc{next, func(ctx context.Context, export string, input []byte) ([]byte, error) {
			out, err := next.Call(ctx, export, input)
			var ce *sandbox.CallError
			if errors.As(err, &ce) {
				return nil, &host.CallError{Reason: ce.Kind.String(), Message: ce.Message + raise(ce, plugin),
					Own: ce.Kind == sandbox.KindPlugin, Canceled: ce.Kind == sandbox.KindCanceled, Outcome: callOutcome(ce)}
			}
			return out, err
		}}
	}
}

// callOutcome names how a call that failed with ce ended, for metrics
// (host.PluginCall): a word for each sandbox kind, and a busy plugin told
// apart from a spent memory budget.
func callOutcome(ce *sandbox.CallError) string {
	switch ce.Kind {
	case sandbox.KindPlugin:
		return "plugin_error"
	case sandbox.KindTrap:
		return "trap"
	case sandbox.KindTimeout:
		return "timeout"
	case sandbox.KindCanceled:
		return "canceled"
	case sandbox.KindInputTooLarge:
		return "input_too_large"
	case sandbox.KindOutputTooLarge:
		return "output_too_large"
	case sandbox.KindBusy:
		if ce.SpentBudget {
			return "memory_budget"
		}
		return "queue_full"
	case sandbox.KindNoExport:
		return "no_export"
	case sandbox.KindMalformedOutput:
		return host.OutcomeMalformedOutput
	case sandbox.KindOutOfMemory:
		return "out_of_memory"
	case sandbox.KindDenied:
		return "denied"
	}
	return host.OutcomeError
}

// raise says which setting of plugin's table would raise the limit that
// ce ran into, "" when none would.
func raise(ce *sandbox.CallError, plugin string) string {
	var keys string
	switch ce.Kind {
	case sandbox.KindOutOfMemory:
		keys = "memory_mib"
	case sandbox.KindTimeout:
		keys = "timeout"
	case sandbox.KindOutputTooLarge:
		keys = "max_output_bytes"
	case sandbox.KindInputTooLarge:
		return "; the input may take half of memory_mib: raise memory_mib" + inTable(plugin)
	case sandbox.KindBusy:
		if ce.SpentBudget { // the server's budget, named already
			return ""
		}
		keys = "max_instances or max_queue"
	default:
		return ""
	}
	return "; raise " + keys + inTable(plugin)
}

// inTable names where a plugin's settings go.
func inTable(plugin string) string {
	return " in [plugins." + plugin + "] (or [defaults]) of the server's config"
}

// Reasons of the calls the policy refuses without running them.
const (
	reasonRateLimited = "plugin rate limit exceeded"
	reasonUnavailable = "plugin unavailable"
)

// hostInitiated reports whether the host itself, not a client request,
// makes calls of export: listings and notifications. They are not rate
// limited.
func hostInitiated(export string) bool {
	switch export {
	case abi.ExportListTools, abi.ExportListPrompts, abi.ExportListResources, abi.ExportListResourceTemplates,
		abi.ExportV1Describe, abi.ExportOnRootsListChanged:
		return true
	}
	return false
}

// checkOutput is the sandbox's output check (sandbox.Options.CheckOutput):
// every export but the roots notification answers JSON, and an instance
// that wrote anything else is discarded.
func checkOutput(export string, out []byte) error {
	if export == abi.ExportOnRootsListChanged || json.Valid(out) {
		return nil
	}
	var v json.RawMessage
	err := json.Unmarshal(out, &v)
	if err == nil {
		err = errors.New("invalid JSON")
	}
	return fmt.Errorf("output is not valid JSON: %v", err)
}

// isolated runs the calls of a sandboxed plugin on instances of their
// caller (sandbox.Plugin.CallAs), as isolation (config.PluginConfig) says:
// per authenticated subject, per client session, or shared by everyone.
// Calls the host makes itself (listings) have no caller and share.
func isolated(p *sandbox.Plugin, isolation string) host.Runtime {
	if isolation != config.IsolationUser && isolation != config.IsolationSession {
		return p
	}
	return runtimeFunc{p, func(ctx context.Context, export string, input []byte) ([]byte, error) {
		owner := ""
		if subject, session, ok := host.Caller(ctx); ok {
			owner = "user:" + subject
			if isolation == config.IsolationSession {
				owner = "session:" + session
			}
		}
		return p.CallAs(ctx, owner, export, input)
	}}
}
