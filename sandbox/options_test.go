package sandbox

import (
	"strings"
	"testing"
	"time"
)

func TestLimitsValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		limits Limits
		want   []string // substrings of the error; none: valid
	}{
		{"zero takes the defaults", Limits{}, nil},
		{"the defaults", Limits{MemoryMiB: DefaultMemoryMiB, Timeout: DefaultTimeout, MaxOutputBytes: DefaultMaxOutputBytes,
			MaxInstances: DefaultMaxInstances, MaxQueue: DefaultMaxQueue, HostCallsPerSecond: DefaultHostCallRate,
			MaxModuleMiB: DefaultMaxModuleMiB}, nil},
		{"the bounds", Limits{MemoryMiB: 4096, Timeout: time.Hour, MaxOutputBytes: 1 << 30,
			MaxInstances: 64, MaxQueue: 10000, HostCallsPerSecond: 100000, MaxModuleMiB: 1024}, nil},
		{"least memory", Limits{MemoryMiB: 4}, nil},
		{"no queue", Limits{MaxQueue: NoQueue}, nil},
		{"memory low", Limits{MemoryMiB: 2}, []string{"memory limit 2 MiB is not between 4 and 4096 MiB"}},
		{"memory high", Limits{MemoryMiB: 4097}, []string{"memory limit 4097 MiB is not between 4 and 4096 MiB"}},
		{"timeout", Limits{Timeout: time.Hour + time.Second}, []string{"timeout 1h0m1s is longer than 1h0m0s"}},
		{"output", Limits{MaxOutputBytes: 1<<30 + 1}, []string{"output limit 1073741825 bytes is more than 1073741824"}},
		{"instances", Limits{MaxInstances: 65}, []string{"instance limit 65 is more than 64"}},
		{"queue", Limits{MaxQueue: 10001}, []string{"queue limit 10001 is more than 10000"}},
		{"host call rate", Limits{HostCallsPerSecond: 100001}, []string{"host call rate 100001 per second is more than 100000"}},
		{"module size", Limits{MaxModuleMiB: 1025}, []string{"module size limit 1025 MiB is more than 1024"}},
		{"every problem", Limits{MemoryMiB: 1, MaxInstances: 100},
			[]string{"memory limit 1 MiB is not between 4 and 4096 MiB", "instance limit 100 is more than 64"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.limits.Validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Validate: nil, want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate: %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestLoadValidatesLimits checks that what Validate rejects, a plugin
// cannot be loaded with.
func TestLoadValidatesLimits(t *testing.T) {
	t.Parallel()
	l := Limits{MaxInstances: 65}
	want := l.Validate()
	if want == nil {
		t.Fatal("Validate accepts 65 instances")
	}
	if _, err := l.withDefaults(); err == nil || err.Error() != want.Error() {
		t.Errorf("withDefaults: %v, want %v", err, want)
	}
}
