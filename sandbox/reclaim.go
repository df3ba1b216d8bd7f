package sandbox

import (
	"runtime/debug"
	"sync"
	"time"
)

// An instance discarded after a trap, a timeout or an out-of-memory may
// leave tens of MiB behind on the Go heap: its tables, and its linear
// memory where it is not a mapping of its own (linearmem.go). Go returns
// freed memory to the operating system lazily, so a plugin that blew up
// would keep the host's memory high for minutes. reclaimMemory returns it at once, in the
// background and at most once per reclaimInterval, since discards are rare
// and a forced collection briefly pauses the process.

const reclaimInterval = time.Second

// finalizerPause is how long reclaimMemory leaves the finalizers of what a
// collection found unreachable to run before collecting again.
const finalizerPause = 50 * time.Millisecond

var reclaim struct {
	mu      sync.Mutex
	last    time.Time
	pending bool
}

// reclaimMemory asks for freed memory to go back to the operating system
// soon, without blocking the caller.
func reclaimMemory() {
	reclaim.mu.Lock()
	defer reclaim.mu.Unlock()
	if reclaim.pending {
		return
	}
	reclaim.pending = true
	wait := max(0, reclaimInterval-time.Since(reclaim.last))
	time.AfterFunc(wait, func() {
		// A request from now on, while this one runs, makes another run:
		// what it freed may have been still in use when this one collected.
		reclaim.mu.Lock()
		reclaim.last, reclaim.pending = time.Now(), false
		reclaim.mu.Unlock()
		debug.FreeOSMemory()
		// Closed compiled code is unmapped by finalizers, which run after
		// the collection that found it unreachable; what they held is
		// freed by the next one.
		time.Sleep(finalizerPause)
		debug.FreeOSMemory()
	})
}
