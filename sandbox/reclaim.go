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
		debug.FreeOSMemory()
		reclaim.mu.Lock()
		reclaim.last, reclaim.pending = time.Now(), false
		reclaim.mu.Unlock()
	})
}
