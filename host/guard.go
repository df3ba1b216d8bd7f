package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/sandbox"
)

// guardedRuntime is a plugin's runtime with what the host enforces around
// every call, per plugin, from its config: the calls-per-second limit, the
// circuit breaker (breaker.go), and the allow-lists of exposed items
// (filter.go, which also applies them to the plugin's lists).
type guardedRuntime struct {
	Runtime
	plugin   string
	limiter  *tokenBucket // nil: no limit
	breaker  *breaker     // nil: no breaker
	filter   itemFilter
	maxItems int // 0: no cap on listed items
	logger   *slog.Logger
}

// guardRuntime wraps rt with the plugin's limits and filters.
func guardRuntime(name string, pc config.PluginConfig, rt Runtime, logger *slog.Logger) *guardedRuntime {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With("plugin", name)
	g := &guardedRuntime{
		Runtime:  rt,
		plugin:   name,
		filter:   newItemFilter(pc),
		maxItems: pc.Limits.MaxListItems,
		logger:   logger,
	}
	if pc.Limits.CallsPerSecond > 0 {
		g.limiter = newTokenBucket(pc.Limits.CallsPerSecond, time.Now)
	}
	if pc.Limits.BreakerFailures > 0 {
		g.breaker = newBreaker(name, breakerSettings{
			failures:   pc.Limits.BreakerFailures,
			window:     pc.Limits.BreakerWindow,
			backoff:    pc.Limits.BreakerBackoff,
			maxBackoff: pc.Limits.BreakerMaxBackoff,
		}, logger, time.Now)
	}
	return g
}

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

// Call runs export unless the rate limit, the breaker or the allow-lists
// refuse it, in which case it fails at once with a *sandbox.CallError of
// kind KindRateLimited, KindUnavailable or KindPlugin.
func (g *guardedRuntime) Call(ctx context.Context, export string, input []byte) ([]byte, error) {
	if g.limiter != nil && !hostInitiated(export) && !g.limiter.take() {
		return nil, &sandbox.CallError{Plugin: g.plugin, Export: export, Kind: sandbox.KindRateLimited, Message: fmt.Sprintf(
			"more than %g calls per second (calls_per_second of [plugins.%s]); try again shortly", g.limiter.rate, g.plugin)}
	}
	if err := g.filter.checkCall(g.plugin, export, input); err != nil {
		return nil, err
	}
	probe, err := g.breaker.allow(export)
	if err != nil {
		return nil, err
	}
	if export != abi.ExportOnRootsListChanged {
		ctx = sandbox.WithOutputCheck(ctx, checkJSON)
	}
	out, err := g.Runtime.Call(ctx, export, input)
	o, detail := classify(export, out, err)
	g.breaker.done(probe, o, detail)
	return out, err
}

// outcome is what a call tells the breaker about the plugin's health.
type outcome int

const (
	neutral outcome = iota // says nothing: canceled, busy, refused
	success                // the plugin answered, even with an error of its own
	failure                // the plugin crashed, hung, or answered garbage
)

// classify judges a finished call.
func classify(export string, out []byte, err error) (outcome, string) {
	if err != nil {
		switch sandbox.KindOf(err) {
		case sandbox.KindTrap, sandbox.KindTimeout, sandbox.KindOutputTooLarge, sandbox.KindMalformedOutput:
			return failure, err.Error()
		case sandbox.KindPlugin:
			return success, ""
		}
		return neutral, ""
	}
	if export != abi.ExportOnRootsListChanged && !json.Valid(out) {
		return failure, "malformed output from " + export
	}
	return success, ""
}

// checkJSON rejects output that is not JSON, so that the sandbox discards
// the instance that wrote it.
func checkJSON(out []byte) error {
	if json.Valid(out) {
		return nil
	}
	var v json.RawMessage
	err := json.Unmarshal(out, &v)
	if err == nil {
		err = errors.New("invalid JSON")
	}
	return fmt.Errorf("output is not valid JSON: %v", err)
}

// tokenBucket is a calls-per-second limit: it holds up to burst tokens,
// refilled at rate a second; each call takes one.
type tokenBucket struct {
	mu     sync.Mutex
	rate   float64
	burst  float64
	tokens float64
	last   time.Time
	now    func() time.Time
}

func newTokenBucket(rate float64, now func() time.Time) *tokenBucket {
	burst := math.Max(1, rate)
	return &tokenBucket{rate: rate, burst: burst, tokens: burst, last: now(), now: now}
}

// take takes a token if there is one.
func (b *tokenBucket) take() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	b.tokens = math.Min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// checkPin returns an error when pc pins the plugin file to a SHA-256 that
// file does not have.
func checkPin(pc config.PluginConfig, file []byte) error {
	if pc.SHA256 == "" {
		return nil
	}
	sum := sha256.Sum256(file)
	if actual := hex.EncodeToString(sum[:]); actual != pc.SHA256 {
		return fmt.Errorf("plugin file does not match its sha256 pin: expected %s, actual %s "+
			"(replace the file, or update sha256 in [plugins.%s] if the change is expected)", pc.SHA256, actual, pc.Name)
	}
	return nil
}

// queueLimit converts config max_queue, where 0 means no queue, to
// sandbox.Limits.MaxQueue, where 0 means the default.
func queueLimit(n int) int {
	if n == 0 {
		return sandbox.NoQueue
	}
	return n
}
