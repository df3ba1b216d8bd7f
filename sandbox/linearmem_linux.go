package sandbox

import (
	"context"
	"syscall"

	"github.com/mcphost/mcphost/internal/linearmem"
	"github.com/tetratelabs/wazero/experimental"
)

// linearMemoryFactor is what a linear memory of n bytes may cost: n, since
// it grows in place outside the Go heap.
const linearMemoryFactor = 1

// context returns ctx with the arena as the memory allocator of the
// modules instantiated with it.
func (a *memoryArena) context(ctx context.Context) context.Context {
	return experimental.WithMemoryAllocator(ctx, experimental.MemoryAllocatorFunc(a.allocate))
}

// allocate returns a new linear memory of at most max bytes: a mapping,
// or, when the system refuses one, a memory on the Go heap.
func (a *memoryArena) allocate(_, max uint64) experimental.LinearMemory {
	var m linearMemory = &heapMemory{linearmem.NewHeap(max)}
	if max > 0 {
		buf, err := syscall.Mmap(-1, 0, int(max), syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_NORESERVE)
		if err == nil {
			m = &mappedMemory{buf: buf}
		}
	}
	a.mu.Lock()
	a.mems = append(a.mems, m)
	a.mu.Unlock()
	return m
}

// mappedMemory is a linear memory in an anonymous private mapping of its
// maximum size: inaccessible beyond its current size (so neither
// committed nor counted against the system's commit limit), and growing in
// place.
type mappedMemory struct {
	buf  []byte // the whole mapping
	size uint64 // the accessible bytes, from the start
}

// Reallocate implements experimental.LinearMemory: it makes the first size
// bytes accessible, or returns nil when size is beyond the maximum or the
// system refuses. Pages made accessible are zero.
func (m *mappedMemory) Reallocate(size uint64) []byte {
	if size > uint64(len(m.buf)) {
		return nil
	}
	if size > m.size {
		if err := syscall.Mprotect(m.buf[m.size:size], syscall.PROT_READ|syscall.PROT_WRITE); err != nil {
			return nil
		}
		m.size = size
	}
	return m.buf[:size:size]
}

// Free implements experimental.LinearMemory; memoryArena.free releases
// the memory.
func (m *mappedMemory) Free() {}

func (m *mappedMemory) release() {
	_ = syscall.Munmap(m.buf) // fails only for what is not a mapping
}

// heapMemory is a linear memory on the Go heap, grown by copying as
// wazero's own.
type heapMemory struct{ linearmem.Heap }

// Free implements experimental.LinearMemory; memoryArena.free releases
// the memory.
func (m *heapMemory) Free() {}

func (m *heapMemory) release() { m.Release() }
