package pluginhost

import (
	"context"
	"testing"
	"time"
)

// isOpen reports whether g lets plugin code run now.
func isOpen(g *compileGate) bool {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return g.wait(ctx) == nil
}

func TestCompileGateOpensOnceEveryPluginIsCompiled(t *testing.T) {
	g := newCompileGate(3, time.Hour)
	g.compiled()
	g.compiled()
	if isOpen(g) {
		t.Fatal("open with one plugin of three still compiling")
	}
	g.compiled()
	if !isOpen(g) {
		t.Fatal("closed with every plugin compiled")
	}
	g.compiled() // more than expected: no panic on a closed channel
	if err := g.wait(t.Context()); err != nil {
		t.Fatalf("wait on an open gate: %v", err)
	}
}

func TestCompileGateOpensAtItsLatest(t *testing.T) {
	g := newCompileGate(2, 50*time.Millisecond)
	g.compiled()
	if isOpen(g) {
		t.Fatal("open at once with a plugin still compiling")
	}
	if err := g.wait(t.Context()); err != nil {
		t.Fatalf("the gate did not open at its latest: %v", err)
	}
}

func TestCompileGateWaitEndsWithTheContext(t *testing.T) {
	g := newCompileGate(1, time.Hour)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := g.wait(ctx); err == nil {
		t.Fatal("wait on a closed gate returned nil after its context ended")
	}
}

func TestCompileGateOfNoPluginsIsOpen(t *testing.T) {
	if !isOpen(newCompileGate(0, time.Hour)) {
		t.Fatal("a gate for no plugins is closed")
	}
}

func TestCompileGateOpenedEarlyStopsItsTimer(t *testing.T) {
	g := newCompileGate(2, time.Hour)
	g.compiled()
	g.compiled()
	// Stop reports true only for a timer still pending: the gate opened
	// early must have stopped it, not left it to fire an hour later.
	if g.timer.Stop() {
		t.Fatal("the gate opened early and left its timer running")
	}
}
