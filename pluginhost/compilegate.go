package pluginhost

import (
	"context"
	"sync"
	"time"
)

// compileFirstAtMost is how long, at most, the plugins found at start-up
// wait for each other's compiles before their code runs. Loading compiled
// code from the cache takes milliseconds per plugin; a first start of a
// large module compiles for seconds, and the plugins ready sooner should
// not wait for it long.
const compileFirstAtMost = time.Second

// compileGate holds back the code of the plugins found at start-up, their
// start functions, _initialize and list exports, until every one of them
// is compiled or compileFirstAtMost has passed. Compiling is bounded work
// (package sandbox refuses modules that would cost too much) while plugin
// code may spin for its whole load budget, and wasm code holds its thread
// until it returns: were it let run first, a plugin that spins would take
// the cores that the others need to compile, and delay every plugin. See
// RATIONALE.md, "Why plugin code waits at start-up until every plugin is
// compiled".
type compileGate struct {
	open chan struct{}
	once sync.Once

	mu    sync.Mutex
	left  int
	timer *time.Timer // opens the gate at its latest; stopped when it opens sooner
}

// newCompileGate returns the gate of n plugins, which opens at the latest
// after atMost.
func newCompileGate(n int, atMost time.Duration) *compileGate {
	g := &compileGate{open: make(chan struct{}), left: n}
	if n <= 0 {
		g.opened()
		return g
	}
	g.mu.Lock()
	g.timer = time.AfterFunc(atMost, g.opened)
	g.mu.Unlock()
	return g
}

func (g *compileGate) opened() { g.once.Do(func() { close(g.open) }) }

// compiled records that one more plugin is compiled, or failed before.
func (g *compileGate) compiled() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.left--; g.left == 0 {
		g.timer.Stop()
		g.opened()
	}
}

// wait returns once the gate is open, or ctx's error when ctx ends first.
func (g *compileGate) wait(ctx context.Context) error {
	select {
	case <-g.open:
		return nil
	default:
	}
	select {
	case <-g.open:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
