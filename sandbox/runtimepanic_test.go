package sandbox

import (
	"strings"
	"testing"
)

// A panic of the runtime in a step the sandbox guards fails that step with
// an error that says so, logged at error level with the panic and its
// stack; the plugin is served after it.
func TestARuntimePanicFailsTheStepNotTheHost(t *testing.T) {
	var log logRecorder
	p := load(t, "guest", Options{Logger: log.logger()})
	_, err := guard(p, "instantiate", func() (*instance, error) {
		var none []*instance
		return none[16], nil // as wazevo's NewFunction did (TestPluginsOfOneModuleBuiltAtOnceFromTheCacheFolder)
	})
	if err == nil || !strings.Contains(err.Error(), "the WebAssembly runtime failed during instantiate (runtime error: index out of range [16] with length 0)") {
		t.Fatalf("got %v, want the error naming the step and the panic", err)
	}
	recs := log.records(t, "the WebAssembly runtime panicked")
	if len(recs) != 1 || recs[0]["level"] != "ERROR" || recs[0]["during"] != "instantiate" ||
		!strings.Contains(recs[0]["stack"].(string), "TestARuntimePanicFailsTheStepNotTheHost") {
		t.Fatalf("the panic's log records: %v", recs)
	}
	if out := call(t, p, "echo", "after"); out != "after" {
		t.Fatalf("a call after the panic: %q", out)
	}
}
