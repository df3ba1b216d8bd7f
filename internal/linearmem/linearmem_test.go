package linearmem

import (
	"bytes"
	"testing"
)

// TestHeapGrowsToItsMaximumKeepingItsBytes: a Heap grows, keeping what it
// held and zeroing what it adds, up to its maximum and not beyond, and
// never shrinks.
func TestHeapGrowsToItsMaximumKeepingItsBytes(t *testing.T) {
	m := NewHeap(1 << 16)
	b := m.Reallocate(10)
	copy(b, "0123456789")
	b = m.Reallocate(1 << 16)
	if len(b) != 1<<16 || string(b[:10]) != "0123456789" || !bytes.Equal(b[10:], make([]byte, 1<<16-10)) {
		t.Fatalf("grown to 64 KiB: %d bytes, %q...", len(b), b[:12])
	}
	if b := m.Reallocate(1<<16 + 1); b != nil {
		t.Errorf("beyond the maximum: %d bytes, want nil", len(b))
	}
	if b := m.Reallocate(5); len(b) != 5 || m.Len() != 1<<16 {
		t.Errorf("a smaller size: %d bytes of %d held, want 5 of %d", len(b), m.Len(), 1<<16)
	}
	if m.Release(); m.Len() != 0 {
		t.Errorf("released: %d bytes held", m.Len())
	}
}
