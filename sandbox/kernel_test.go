package sandbox

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

func TestErrorSet(t *testing.T) {
	t.Parallel()
	p := load(t, "guest", Options{Limits: Limits{MaxInstances: 1}})
	// As with Extism, an error fails the call even when the export returns 0.
	_, err := p.Call(t.Context(), "softfail", nil)
	if ce := wantKind(t, err, KindPlugin); ce.Message != "soft failure" {
		t.Errorf("got %q", ce.Message)
	}
	// error_get returns the error; error_set(0) clears it.
	if got := call(t, p, "errorget", "set then cleared"); got != "set then cleared" {
		t.Errorf("error_get returned %q", got)
	}

	// An error over MaxOutputBytes is cut before a character, not inside.
	p = load(t, "guest", Options{Limits: Limits{MaxOutputBytes: len("bad input: ") + 1}})
	_, err = p.Call(t.Context(), "fail", []byte("éé"))
	if ce := wantKind(t, err, KindPlugin); ce.Message != "bad input: … [error truncated: 3 bytes over the limit of 12 (max_output_bytes)]" {
		t.Errorf("got %q", ce.Message)
	}
}

func TestVars(t *testing.T) {
	t.Parallel()
	p := load(t, "guest", Options{Limits: Limits{MaxInstances: 1}})
	call(t, p, "setvar", "count=1")
	call(t, p, "setvar", "count=2")
	if got := call(t, p, "getvar", "count"); got != "2" {
		t.Errorf("got %q", got)
	}
	call(t, p, "setvar", "fits="+strings.Repeat("x", maxVarBytes/2))
	call(t, p, "setvar", "count")
	_, err := p.Call(t.Context(), "getvar", []byte("count"))
	wantKind(t, err, KindPlugin) // deleted
	if got := call(t, p, "getvar", "fits"); len(got) != maxVarBytes/2 {
		t.Errorf("got %d bytes", len(got))
	}
}

// TestHostileBlocksAreNotCopied has plugins pass a 64 MiB block to every
// kernel and host function the sandbox serves that reads guest memory, and
// set it as their output. Each refuses it, or keeps only what the sandbox
// keeps of it, without copying the block into the host's heap. It does not run in parallel, so that
// other tests' allocations do not count.
func TestHostileBlocksAreNotCopied(t *testing.T) {
	const size = 64 << 20
	limits := Limits{MemoryMiB: 256, MaxInstances: 1}
	overOutput := fmt.Sprintf("of %d bytes exceeds the limit of %d (max_output_bytes)", size, DefaultMaxOutputBytes)
	overKey := fmt.Sprintf("of %d bytes exceeds the limit of 4096", size)
	notified := false
	for _, tc := range []struct {
		plugin, what string
		kind         ErrorKind // 0 when the call succeeds
		want         string    // in the error message
	}{
		{"guest", "error", KindPlugin, fmt.Sprintf("… [error truncated: %d bytes over the limit of %d (max_output_bytes)]",
			size-DefaultMaxOutputBytes, DefaultMaxOutputBytes)},
		{"guest", "output", KindOutputTooLarge, fmt.Sprintf("output of %d bytes exceeds the limit of %d", size, DefaultMaxOutputBytes)},
		{"guest", "log", 0, ""},
		{"guest", "config", KindTrap, overKey},
		{"guest", "var_get", KindTrap, overKey},
		{"guest", "var_set_name", KindTrap, overKey},
		{"guest", "var_set_value", KindTrap, fmt.Sprintf("limit of %d bytes", maxVarBytes)},
		{"guest", "http_request", KindTrap, overOutput},
		{"guest", "http_body", KindTrap, overOutput},
		{"hostcall", "notify", KindTrap, overOutput},
	} {
		t.Run(tc.what, func(t *testing.T) {
			opts := Options{Limits: limits, Grants: Grants{AllowedHosts: []string{"127.0.0.1:1"}}}
			reserve, export, input := "hostile", "hostile", tc.what+" "+strconv.Itoa(size)
			if tc.plugin == "hostcall" {
				opts.HostFunctions = hostcallFns(map[string]hostFn{"notify": func(context.Context, []byte) ([]byte, error) {
					notified = true
					return nil, nil
				}})
				reserve, export, input = "reserve", "call_notify_block", strconv.Itoa(size)
			}
			p := load(t, tc.plugin, opts)
			// Grow the kernel memory first, so that its growth does not
			// count.
			call(t, p, reserve, strings.Replace(input, tc.what, "none", 1))
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := p.Call(t.Context(), export, []byte(input))
			runtime.ReadMemStats(&after)
			allocated := after.TotalAlloc - before.TotalAlloc
			t.Logf("%s: allocated %.1f MiB, heap grew %.1f MiB", tc.what,
				float64(allocated)/(1<<20), (float64(after.HeapAlloc)-float64(before.HeapAlloc))/(1<<20))
			if allocated > size/4 {
				t.Errorf("the call allocated %d MiB", allocated>>20)
			}
			if tc.kind == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			ce := wantKind(t, err, tc.kind)
			if !strings.Contains(ce.Message, tc.want) || len(ce.Message) > DefaultMaxOutputBytes+200 {
				t.Errorf("got a message of %d bytes ending %q, want one containing %q", len(ce.Message),
					ce.Message[max(0, len(ce.Message)-100):], tc.want)
			}
		})
	}
	if notified {
		t.Error("notify was called with an input over the limit")
	}
}
