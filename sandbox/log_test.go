package sandbox

import (
	"strings"
	"testing"

	extism "github.com/extism/go-sdk"
)

func TestGuestLogLimits(t *testing.T) {
	t.Parallel()
	logs := &logRecorder{}
	g := newGuestLog(logs.logger())

	g.kernel(extism.LogLevelWarn, "k"+strings.Repeat("x", 2*maxLogMessage))
	if recs := logs.records(t, "kx"); len(recs) != 1 || len(recs[0]["msg"].(string)) != maxLogMessage+len(" [truncated]") ||
		recs[0]["level"] != "WARN" {
		t.Errorf("long kernel message logged as %v", recs)
	}

	g.stdout.Write([]byte("a" + strings.Repeat("y", 2*maxLogMessage) + "\nsplit "))
	g.stdout.Write([]byte("line\nunterminated"))
	g.flush()
	if recs := logs.records(t, "ay"); len(recs) != 1 || len(recs[0]["msg"].(string)) != maxLogMessage {
		t.Errorf("long output line logged as %v", recs)
	}
	for _, msg := range []string{"split line", "unterminated"} {
		if recs := logs.records(t, msg); len(recs) != 1 || recs[0]["stream"] != "stdout" {
			t.Errorf("%q logged as %v", msg, recs)
		}
	}

	for range maxLogPerCall / 10 {
		g.stderr.Write([]byte("0123456789\n"))
	}
	// Records are logged while the budget lasts, the last one overdrawing it.
	used := maxLogMessage + len(" [truncated]") + maxLogMessage + len("split line") + len("unterminated")
	if n, want := len(logs.records(t, "0123456789")), (maxLogPerCall-used+9)/10; n != want {
		t.Errorf("%d lines logged, want %d", n, want)
	}
	if n := len(logs.records(t, "plugin log limit reached")); n != 1 {
		t.Errorf("%d limit warnings", n)
	}
	g.reset(t.Context())
	g.stderr.Write([]byte("after reset\n"))
	if n := len(logs.records(t, "after reset")); n != 1 {
		t.Error("the budget is not per call")
	}
}

func TestGuestLogLevels(t *testing.T) {
	t.Parallel()
	logs := &logRecorder{}
	p := load(t, "guest", Options{Logger: logs.logger()})
	// The host logs from debug up, and tells the plugin so: Extism's level
	// numbers are 0 trace, 1 debug, 2 info, 3 warn, 4 error.
	if got := call(t, p, "levels", ""); got != "1" {
		t.Errorf("get_log_level returned %s, want 1 (debug)", got)
	}
	if recs := logs.records(t, "at trace"); len(recs) != 0 {
		t.Errorf("trace message logged: %v", recs)
	}
	for msg, level := range map[string]string{"at debug": "DEBUG", "at info": "INFO", "at warn": "WARN", "at error": "ERROR"} {
		recs := logs.records(t, msg)
		if len(recs) != 1 || recs[0]["level"] != level || recs[0]["plugin"] != "guest" {
			t.Errorf("%q logged as %v, want one %s record of plugin guest", msg, recs, level)
		}
	}
}
