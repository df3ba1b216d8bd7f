package poll

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestWithinWaitsForTheConditionAndNoLonger: Within returns true once cond
// holds, and false once the timeout has passed without it.
func TestWithinWaitsForTheConditionAndNoLonger(t *testing.T) {
	var calls atomic.Int32
	if !Within(5*time.Second, func() bool { return calls.Add(1) == 3 }) || calls.Load() != 3 {
		t.Errorf("Within returned before cond held, or went on after: %d calls", calls.Load())
	}
	start := time.Now()
	if Within(50*time.Millisecond, func() bool { return false }) {
		t.Error("Within reported a condition that never held")
	}
	if d := time.Since(start); d < 50*time.Millisecond || d > 5*time.Second {
		t.Errorf("Within gave up after %v, want just past 50ms", d)
	}
}
