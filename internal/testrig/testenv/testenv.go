// Package testenv says what tests do when this machine lacks something a
// test needs (a toolchain, a service, a tool): skip, loudly, on a
// developer's machine, and fail under CI, so that a green CI run means
// that every test ran. .ci/run sets CI.
package testenv

import (
	"fmt"
	"os"
	"testing"
)

// CI reports whether the CI variable is set to anything but "", "false"
// or "0".
func CI() bool {
	ci := os.Getenv("CI")
	return ci != "" && ci != "false" && ci != "0"
}

// Missing ends tb for want of what format and args describe (with what
// installs it): it fails tb under CI, and skips it elsewhere.
func Missing(tb testing.TB, format string, args ...any) {
	tb.Helper()
	what := fmt.Sprintf(format, args...)
	if CI() {
		tb.Fatalf("CI is set, and %s", what)
	} else {
		tb.Skipf("*** SKIPPED: %s ***", what)
	}
}
