package testenv

import (
	"strings"
	"testing"
)

// recorder is a testing.TB that records how Missing ended it.
type recorder struct {
	testing.TB
	failed, skipped string
}

func (r *recorder) Helper()                        {}
func (r *recorder) Fatalf(format string, a ...any) { r.failed = format }
func (r *recorder) Skipf(format string, a ...any)  { r.skipped = format }

// TestMissingFailsUnderCIAndSkipsElsewhere: Missing fails a test under
// CI=true (or 1), and skips it with CI unset, empty, "false" or "0".
func TestMissingFailsUnderCIAndSkipsElsewhere(t *testing.T) {
	for _, c := range []struct {
		ci   string
		fail bool
	}{{"true", true}, {"1", true}, {"", false}, {"false", false}, {"0", false}} {
		t.Setenv("CI", c.ci)
		r := &recorder{TB: t}
		Missing(r, "no %s (scripts/setup-x.sh installs it)", "x")
		if failed := r.failed != ""; failed != c.fail || failed == (r.skipped != "") {
			t.Errorf("CI=%q: failed %q, skipped %q; want failed %v", c.ci, r.failed, r.skipped, c.fail)
		}
		if !strings.Contains(r.failed+r.skipped, "%s") {
			t.Errorf("CI=%q: the message lost its description", c.ci)
		}
	}
}
