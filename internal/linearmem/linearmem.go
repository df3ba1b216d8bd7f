// Package linearmem provides Heap, a WebAssembly linear memory on the Go
// heap, grown by copying as wazero's own memories are: the sandbox's
// fallback where the system refuses a mapping, and the test harness's
// metered memories.
package linearmem

// Heap is a linear memory of at most a maximum number of bytes, on the Go
// heap. It implements wazero's experimental.LinearMemory but Free, which
// its holders define as their release of memory requires.
type Heap struct {
	buf []byte
	max uint64
}

// NewHeap returns an empty Heap of at most max bytes.
func NewHeap(max uint64) Heap { return Heap{max: max} }

// Reallocate implements experimental.LinearMemory: it grows the memory to
// size bytes, new bytes zero, and returns it, or nil when size is beyond
// the maximum.
func (m *Heap) Reallocate(size uint64) []byte {
	if size > m.max {
		return nil
	}
	if size > uint64(len(m.buf)) {
		m.buf = append(m.buf, make([]byte, size-uint64(len(m.buf)))...)
	}
	return m.buf[:size]
}

// Len returns the bytes the memory holds.
func (m *Heap) Len() int { return len(m.buf) }

// Release drops the memory's bytes.
func (m *Heap) Release() { m.buf = nil }
