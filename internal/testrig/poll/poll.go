// Package poll waits, in tests, for a condition that another goroutine or
// process makes true: the one place where a test sleeps to synchronise,
// between looks at the event it waits for.
package poll

import (
	"testing"
	"time"
)

// maxInterval bounds the pause between two looks at a condition: short
// enough that a test waits little past the event, long enough that a
// condition that costs a request does not load a busy machine.
const maxInterval = 20 * time.Millisecond

// Within calls cond until it returns true, for at most timeout, and
// reports whether it did: for a test that says itself what did not come.
// The pause between calls starts at a millisecond and doubles up to
// maxInterval.
func Within(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for pause := time.Millisecond; !cond(); pause = min(2*pause, maxInterval) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
	}
	return true
}

// Until is Within that fails tb, naming what it waited for, unless cond
// returns true within timeout.
func Until(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	if !Within(timeout, cond) {
		tb.Fatalf("not within %v: %s", timeout, what)
	}
}
