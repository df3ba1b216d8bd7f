package sandbox

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	extism "github.com/extism/go-sdk"
)

// callState is what the sandbox tracks during one call (or instantiation)
// of an instance, reached from the host functions through the context.
type callState struct {
	log  *guestLog
	rate int
	// err is the error the plugin set with error_set (kernel.go), empty
	// when none, and output the block it set with output_set, read once
	// the call returns. Only the call's goroutine uses them.
	err    string
	output struct{ offset, length uint64 }
	// kernel is the instance's kernel functions (kernel.go).
	kernel *kernelFunctions
	// denied is set when the plugin's grants refused a request and that
	// stops the call (kernel.httpRequest): its trap is KindDenied.
	denied bool

	mu     sync.Mutex
	tokens float64
	last   time.Time
}

type callStateKey struct{}

func newCallState(log *guestLog, rate int) *callState {
	s := &callState{}
	s.init(log, rate)
	return s
}

// init readies s for a call of an instance logging to log, with rate host
// function calls a second.
func (s *callState) init(log *guestLog, rate int) {
	s.log, s.rate, s.tokens, s.last = log, rate, float64(rate), time.Now()
}

func withCallState(ctx context.Context, s *callState) context.Context {
	return context.WithValue(ctx, callStateKey{}, s)
}

// callStateFrom returns the call's state, nil outside a sandbox call.
func callStateFrom(ctx context.Context) *callState {
	if c, ok := ctx.(*callContext); ok {
		return &c.state
	}
	s, _ := ctx.Value(callStateKey{}).(*callState)
	return s
}

// callContext is the context of one call of an instance (Plugin.run): its
// caller's, with the values the kernel functions look up at every host
// call, answered by one node. They are the call's state and, once
// exportCaller sets them, the values Extism's own host functions look up:
// the extism.Plugin, its kernel module and the input's offset. Four
// context.WithValue nodes cost four allocations a call, and every lookup
// that misses (wazero makes one at each call into the kernel) walked them
// all.
type callContext struct {
	context.Context
	state callState
	// caller is the instance's, once the call goes through it (call.go);
	// nil for an instance's first call, which goes through Extism, which
	// adds its values itself.
	caller *exportCaller
	// inputOffset is where the input is in the kernel's memory, once
	// input set tells so.
	inputOffset uint64
	inputSet    bool
}

// newCallContext returns the context of a call within ctx of an instance
// logging to log, with rate host function calls a second.
func newCallContext(ctx context.Context, log *guestLog, rate int) *callContext {
	c := &callContext{Context: ctx}
	c.state.init(log, rate)
	return c
}

// Value implements context.Context.
func (c *callContext) Value(key any) any {
	switch key {
	case callStateKey{}:
		return &c.state
	case extism.PluginCtxKey("extism"):
		if c.caller != nil {
			return c.caller.kernel.mod
		}
	case extism.PluginCtxKey("plugin"):
		if c.caller != nil {
			return c.caller.plugin
		}
	case extism.InputOffsetKey("inputOffset"):
		if c.inputSet {
			return c.inputOffset
		}
	}
	return c.Context.Value(key)
}

// takeHostCall counts a host function call against the rate limit and
// returns the error that stops the call when it is over.
func (s *callState) takeHostCall(name string) error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	s.tokens = min(float64(s.rate), s.tokens+now.Sub(s.last).Seconds()*float64(s.rate))
	s.last = now
	if s.tokens < 1 {
		return fmt.Errorf("host function %s: more than %d host function calls per second (host_calls_per_second); the call is stopped", name, s.rate)
	}
	s.tokens--
	return nil
}

// logWarn logs within the call's log budget, or with logger outside a
// call.
func (s *callState) logWarn(logger *slog.Logger, ctx context.Context, msg string, attrs ...slog.Attr) {
	if s == nil || s.log == nil {
		logger.LogAttrs(ctx, slog.LevelWarn, msg, attrs...)
		return
	}
	s.log.emit(slog.LevelWarn, msg, attrs...)
}
