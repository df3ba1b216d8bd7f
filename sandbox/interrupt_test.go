package sandbox

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/mcphost/mcphost/internal/testrig/wasmtest"
	"github.com/tetratelabs/wazero"
)

// TestARecursionWithoutLoopsStopsAtItsTimeout checks that a call is
// stopped at its timeout when its code has no loop to check in: every
// function looks at the countdown when it starts.
func TestARecursionWithoutLoopsStopsAtItsTimeout(t *testing.T) {
	t.Parallel()
	p, err := engine.Load(t.Context(), "recursion", wasmtest.RecursionModule(), Options{Limits: Limits{Timeout: 200 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = p.Call(t.Context(), "spin", nil)
	wantKind(t, err, KindTimeout)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("spin ran %v past its 200ms timeout", d)
	}
}

// The grace SECURITY.md states between the end of a call's timeout and
// the end of the call: in module code, and inside a host function. The
// tests allow schedulingSlack more, for the delays of a loaded machine
// running every package's tests at once, and log what they measured.
const (
	moduleCodeGrace   = 100 * time.Millisecond
	hostFunctionGrace = time.Second
	schedulingSlack   = 400 * time.Millisecond
)

// TestSleepersStopWithinTheirTimeout checks that a call that sleeps in
// WASI's poll_oneoff again and again, called directly or through a table,
// ends within its timeout and the grace SECURITY.md states for a host
// function (R2 of issue 23: through a table, it looked at its context
// once in 1,024 sleeps).
func TestSleepersStopWithinTheirTimeout(t *testing.T) {
	t.Parallel()
	const timeout, grace = 300 * time.Millisecond, hostFunctionGrace + schedulingSlack
	for _, indirect := range []bool{false, true} {
		p, err := engine.Load(t.Context(), "sleeper", plugintest.PollSleeper("spin", indirect), Options{Limits: Limits{Timeout: timeout}})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = p.Call(t.Context(), "spin", nil)
		wantKind(t, err, KindTimeout)
		d := time.Since(start)
		t.Logf("indirect=%v: stopped %v after its %v timeout", indirect, d-timeout, timeout)
		if d > timeout+grace {
			t.Errorf("indirect=%v: the sleeper ran %v, more than its %v timeout and %v of grace", indirect, d, timeout, grace)
		}
		p.Close(t.Context())
	}
}

// TestWazeroChecksStopALoopWithoutTheCountdown checks the second line,
// Limits.WazeroChecks: the runtime a plugin with it is compiled by stops
// a loop that has no countdown at all, as if the countdown were escaped,
// at the call's deadline.
func TestWazeroChecksStopALoopWithoutTheCountdown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, engine.runtimeConfig(Limits{WazeroChecks: true}, false, engine.code.shared))
	defer r.Close(ctx)
	spin := wasmtest.Module(
		wasmtest.Section(1, wasmtest.Vec([]byte{0x60, 0x00, 0x00})),
		wasmtest.Section(3, wasmtest.Vec([]byte{0x00})),
		wasmtest.Section(7, wasmtest.Vec(slices.Concat(wasmtest.Name("spin"), []byte{0x00, 0x00}))),
		wasmtest.Section(10, wasmtest.Vec([]byte{0x07, 0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b})), // loop br 0 end
	)
	mod, err := r.Instantiate(ctx, spin)
	if err != nil {
		t.Fatal(err)
	}
	const deadline = 200 * time.Millisecond
	callCtx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	start := time.Now()
	if _, err := mod.ExportedFunction("spin").Call(callCtx); err == nil {
		t.Fatal("spin returned")
	}
	d := time.Since(start)
	t.Logf("wazero's checks stopped spin %v after its %v deadline", d-deadline, deadline)
	if d > deadline+moduleCodeGrace+schedulingSlack {
		t.Errorf("wazero's checks stopped spin %v after its %v deadline", d-deadline, deadline)
	}
}

// TestAPluginWithWazeroChecksRunsAndStops checks that a plugin loaded with
// Limits.WazeroChecks answers, and is stopped at its timeout.
func TestAPluginWithWazeroChecksRunsAndStops(t *testing.T) {
	t.Parallel()
	p, err := engine.Load(t.Context(), "recursion", wasmtest.RecursionModule(), Options{Limits: Limits{Timeout: 200 * time.Millisecond, WazeroChecks: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(t.Context())
	start := time.Now()
	_, err = p.Call(t.Context(), "spin", nil)
	wantKind(t, err, KindTimeout)
	d := time.Since(start) - 200*time.Millisecond
	t.Logf("spin stopped %v after its 200ms timeout", d)
	if d > moduleCodeGrace+schedulingSlack {
		t.Errorf("spin ran %v past its 200ms timeout", d)
	}
}
