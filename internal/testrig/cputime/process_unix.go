//go:build unix

package cputime

import (
	"syscall"
	"testing"
	"time"
)

// process returns the CPU time the process has used, user and system.
func process(tb testing.TB) (time.Duration, bool) {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano()), true
}
