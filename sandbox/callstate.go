package sandbox

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
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

	mu     sync.Mutex
	tokens float64
	last   time.Time
}

type callStateKey struct{}

func newCallState(log *guestLog, rate int) *callState {
	return &callState{log: log, rate: rate, tokens: float64(rate), last: time.Now()}
}

func withCallState(ctx context.Context, s *callState) context.Context {
	return context.WithValue(ctx, callStateKey{}, s)
}

// callStateFrom returns the call's state, nil outside a sandbox call.
func callStateFrom(ctx context.Context) *callState {
	s, _ := ctx.Value(callStateKey{}).(*callState)
	return s
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
