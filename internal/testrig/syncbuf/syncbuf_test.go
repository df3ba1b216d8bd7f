package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// TestConcurrentWritesAreAllKept: writes from many goroutines at once all
// land, whole, and String and Len see them.
func TestConcurrentWritesAreAllKept(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			_, _ = b.Write([]byte("ab"))
			_, _ = b.WriteString("cd")
		})
	}
	wg.Wait()
	if b.Len() != 200 || strings.Count(b.String(), "ab") != 50 || strings.Count(b.String(), "cd") != 50 {
		t.Errorf("after 50 concurrent pairs of writes: %d bytes, %q", b.Len(), b.String())
	}
}
