package sandbox

import (
	"sync"

	"github.com/tetratelabs/wazero/experimental"
)

// memoryArena allocates the linear memories of one instance: the plugin's
// and the Extism kernel's. On Linux (linearmem_linux.go) each is an
// anonymous mapping of its maximum size, reserved but not committed, that
// grows in place: no growth copies, nothing on the Go heap, and the memory
// goes back to the system as soon as the instance is closed. Elsewhere
// wazero allocates them on the Go heap (linearmem_other.go).
type memoryArena struct {
	mu   sync.Mutex
	mems []linearMemory
}

// linearMemory is a linear memory that memoryArena.free releases.
type linearMemory interface {
	experimental.LinearMemory
	release()
}

// free releases the arena's memories. wazero's Free, called when a module
// is closed, does nothing: a module may be closed while its code still runs
// (Plugin.run closes a call that overran its context from another
// goroutine), and unmapping its memory then would crash the process. So
// the memories are released here, once the instance no longer runs.
func (a *memoryArena) free() {
	a.mu.Lock()
	mems := a.mems
	a.mems = nil
	a.mu.Unlock()
	for _, m := range mems {
		m.release()
	}
}
