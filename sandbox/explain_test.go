package sandbox

import (
	"strings"
	"testing"
)

// TestTrapsSayWhatHappenedInThePluginsOwnWords: a crash is told apart
// (out of memory, an exit, a panic) and carries the plugin's own first
// words on stderr, without host internals or the wasm stack trace.
func TestTrapsSayWhatHappenedInThePluginsOwnWords(t *testing.T) {
	t.Parallel()
	p := load(t, "guest", Options{Limits: Limits{MemoryMiB: 32, MaxInstances: 1}})
	for _, c := range []struct {
		export, input string
		kind          ErrorKind
		want          string
	}{
		{"grow", "64", KindOutOfMemory, "all 32 MiB of its memory were in use; the plugin said: runtime: out of memory: cannot allocate"},
		{"trap", "", KindTrap, "wasm error: unreachable; the plugin said: panic: boom"},
		{"exit", "3", KindTrap, "exited with status 3"},
	} {
		_, err := p.Call(t.Context(), c.export, []byte(c.input))
		ce := wantKind(t, err, c.kind)
		if !strings.HasPrefix(ce.Message, c.want) {
			t.Errorf("%s: %q, want it to start %q", c.export, ce.Message, c.want)
		}
		for _, internal := range []string{"wasm stack trace", "goroutine ", ".go:", "recovered by wazero"} {
			if strings.Contains(ce.Message, internal) {
				t.Errorf("%s: %q shows host or runtime internals (%q)", c.export, ce.Message, internal)
			}
		}
		call(t, p, "echo", "still serving")
	}
}
