package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sandbox"
)

// A plugin's circuit breaker. Closed, it counts the plugin's failures
// (traps, timeouts, oversized or malformed output); when failures reach
// the threshold within the window it opens: every call of the plugin then
// fails at once, without running, for the back-off. Then it is half-open:
// the next call runs as a probe while the others still fail at once. A
// probe that succeeds closes the breaker and resets the back-off; one that
// fails opens it again for twice the back-off, up to the cap. Each change
// is logged with the plugin's name.

type breakerSettings struct {
	failures   int
	window     time.Duration
	backoff    time.Duration
	maxBackoff time.Duration
}

type breakerState int

// The states of a circuit breaker, as PluginStats reports them.
const (
	BreakerClosed   = "closed"
	BreakerOpen     = "open"
	BreakerHalfOpen = "half_open"
)

const (
	breakerClosed breakerState = iota
	breakerOpen
	breakerHalfOpen
)

type breaker struct {
	plugin string
	set    breakerSettings
	logger *slog.Logger
	now    func() time.Time

	mu        sync.Mutex
	state     breakerState
	failures  []time.Time // while closed: the failures within the window
	backoff   time.Duration
	openUntil time.Time
	probing   bool
	lastErr   string
}

func newBreaker(plugin string, set breakerSettings, logger *slog.Logger, now func() time.Time) *breaker {
	if set.window <= 0 {
		set.window = 30 * time.Second
	}
	if set.backoff <= 0 {
		set.backoff = 10 * time.Second
	}
	if set.maxBackoff < set.backoff {
		set.maxBackoff = set.backoff
	}
	return &breaker{plugin: plugin, set: set, logger: logger, now: now, backoff: set.backoff}
}

// allow decides whether a call may run. probe is true for the one call
// that tests a half-open breaker; done must be told its outcome. A nil
// breaker allows everything.
func (b *breaker) allow() (probe bool, err error) {
	if b == nil {
		return false, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if b.state == breakerOpen && !now.Before(b.openUntil) {
		b.state = breakerHalfOpen
		b.logger.Info("circuit breaker half-open: the next call probes the plugin", "backoff", b.backoff)
	}
	switch b.state {
	case breakerOpen:
		return false, b.refusal(fmt.Sprintf("next probe in %s", b.openUntil.Sub(now).Round(time.Millisecond)))
	case breakerHalfOpen:
		if b.probing {
			return false, b.refusal("a probe call is running")
		}
		b.probing = true
		return true, nil
	}
	return false, nil
}

// stateName returns the breaker's state: BreakerClosed, BreakerOpen, or
// BreakerHalfOpen once its back-off is over, before a call finds it so.
func (b *breaker) stateName() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.state == breakerClosed:
		return BreakerClosed
	case b.state == breakerOpen && b.now().Before(b.openUntil):
		return BreakerOpen
	}
	return BreakerHalfOpen
}

// refusal is the error of a call refused while the breaker is not closed.
func (b *breaker) refusal(when string) error {
	return &host.CallError{Reason: reasonUnavailable, Message: fmt.Sprintf(
		"circuit breaker open after repeated failures (last: %s); calls fail at once until a probe succeeds: %s",
		b.lastErr, when), Outcome: "breaker_open"}
}

// done records the outcome of a call allow let through.
func (b *breaker) done(probe bool, o outcome, detail string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if o == failure {
		b.lastErr = firstLine(detail, 200)
	}
	if probe {
		b.probing = false
		switch o {
		case success:
			b.state, b.failures, b.backoff = breakerClosed, nil, b.set.backoff
			b.logger.Info("circuit breaker closed: the probe call succeeded")
		case failure:
			b.backoff = min(2*b.backoff, b.set.maxBackoff)
			b.open(now, "circuit breaker reopened: the probe call failed")
		}
		return
	}
	if o != failure || b.state != breakerClosed {
		return
	}
	cut := 0
	for cut < len(b.failures) && now.Sub(b.failures[cut]) >= b.set.window {
		cut++
	}
	b.failures = append(b.failures[cut:], now)
	if len(b.failures) >= b.set.failures {
		b.failures = nil
		b.open(now, "circuit breaker opened: the plugin keeps failing")
	}
}

// open opens the breaker for the current back-off.
func (b *breaker) open(now time.Time, msg string) {
	b.state, b.openUntil = breakerOpen, now.Add(b.backoff)
	b.logger.Warn(msg, "failures", b.set.failures, "window", b.set.window, "backoff", b.backoff, "last_error", b.lastErr)
}

// firstLine returns the first line of s, cut to n bytes.
func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// wrap puts the breaker in a plugin's call chain: it refuses calls while it
// is open and learns from the outcome of the others.
func (b *breaker) wrap(next host.Runtime) host.Runtime {
	return runtimeFunc{next, func(ctx context.Context, export string, input []byte) ([]byte, error) {
		probe, err := b.allow()
		if err != nil {
			return nil, err
		}
		out, err := next.Call(ctx, export, input)
		o, detail := classify(err)
		b.done(probe, o, detail)
		return out, err
	}}
}

// outcome is what a call tells the breaker about the plugin's health.
type outcome int

const (
	neutral outcome = iota // says nothing: canceled, busy, refused
	success                // the plugin answered, even with an error of its own
	failure                // the plugin crashed, hung, or answered garbage
)

// classify judges a finished call by its error. Output that is not JSON
// never comes back as a success: the sandbox's output check (checkOutput)
// fails it with KindMalformedOutput.
func classify(err error) (outcome, string) {
	if err == nil {
		return success, ""
	}
	var ce *sandbox.CallError
	switch sandbox.KindOf(err) {
	case sandbox.KindTrap, sandbox.KindDenied, sandbox.KindOutOfMemory, sandbox.KindTimeout, sandbox.KindOutputTooLarge, sandbox.KindMalformedOutput:
		// The words a client reads, without the sandbox's own prefix
		// (package, plugin, export): the refusal quotes them.
		if errors.As(err, &ce) {
			return failure, fmt.Sprintf("%s: %s", ce.Kind, ce.Message)
		}
		return failure, err.Error()
	case sandbox.KindPlugin:
		return success, ""
	}
	return neutral, ""
}
