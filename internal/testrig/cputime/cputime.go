// Package cputime reports the CPU time a benchmark's process spends an
// operation, collector included, beside its wall time: on a busy machine
// other processes inflate wall time far more than CPU time.
package cputime

import (
	"testing"
	"time"
)

// Start returns the process's CPU time so far, for ReportPerOp; 0 where
// it cannot be read.
func Start(b *testing.B) time.Duration {
	d, _ := process(b)
	return d
}

// ReportPerOp reports, as cpu-ns/op, the process's CPU time since start
// (Start) over b.N operations. It reports nothing where the CPU time
// cannot be read.
func ReportPerOp(b *testing.B, start time.Duration) {
	if d, ok := process(b); ok {
		b.ReportMetric(float64(d-start)/float64(b.N), "cpu-ns/op")
	}
}
