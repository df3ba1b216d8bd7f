package sandbox

import (
	"context"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/poll"
)

// TestStatsCountBusyIdleAndWaiting: a call running on the only instance
// makes it busy and the next call wait; once both ended, the instance is
// idle; the plugin holds memory of the budget throughout, which the
// Engine counts as held.
func TestStatsCountBusyIdleAndWaiting(t *testing.T) {
	t.Parallel()
	entered := make(chan struct{}, 2)
	release := make(chan struct{})
	p := load(t, "hostcall", Options{Limits: Limits{MaxInstances: 1}, HostFunctions: hostcallFns(map[string]hostFn{
		"wait": func(ctx context.Context, _ []byte) ([]byte, error) {
			entered <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil, nil
		},
	})})
	if s := p.Stats(); s.Busy != 0 || s.Idle != 1 || s.Waiting != 0 || s.MemoryHeld == 0 {
		t.Fatalf("after the load: %+v, want one idle instance and memory held", s)
	}
	done := make(chan error, 2)
	for range 2 {
		go func() { _, err := p.Call(t.Context(), "call_wait", nil); done <- err }()
	}
	<-entered
	poll.Until(t, 10*time.Second, "the second call waits", func() bool { return p.Stats().Waiting == 1 })
	if s := p.Stats(); s.Busy != 1 || s.Idle != 0 {
		t.Errorf("one call running, one waiting: %+v", s)
	}
	if limit, held := engine.MemoryBudget(); limit != DefaultMemoryBudgetMiB<<20 || held < p.Stats().MemoryHeld {
		t.Errorf("the engine's budget: %d held of %d; the plugin holds %d", held, limit, p.Stats().MemoryHeld)
	}
	close(release)
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if s := p.Stats(); s.Busy != 0 || s.Idle != 1 || s.Waiting != 0 {
		t.Errorf("after the calls: %+v, want one idle instance", s)
	}
}
