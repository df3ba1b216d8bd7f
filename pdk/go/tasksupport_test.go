//go:build !wasm

package pdk

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestTaskSupport(t *testing.T) {
	freshRegistry(t)
	noop := func(*Context, struct{}) (string, error) { return "", nil }
	Tool("long", "", noop, TaskSupport("optional"))
	Tool("plain", "", noop)
	if e := reg.tools[0].tool.Execution; e == nil || e.TaskSupport != "optional" {
		t.Fatalf("execution = %+v, want taskSupport optional", e)
	}
	if e := reg.tools[1].tool.Execution; e != nil {
		t.Fatalf("tool without TaskSupport has execution %+v", e)
	}
	b, err := json.Marshal(reg.tools[0].tool)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"execution":{"taskSupport":"optional"}`) {
		t.Errorf("tool JSON %s lacks execution.taskSupport", b)
	}
	for _, mode := range []string{"forbidden", "required"} {
		Tool("x", "", noop, TaskSupport(mode))
		if got := reg.tools[2].tool.Execution.TaskSupport; got != mode {
			t.Errorf("TaskSupport(%q) gave %q", mode, got)
		}
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "TaskSupport") {
			t.Errorf("TaskSupport(\"sometimes\") did not panic with a message naming it: %v", r)
		}
	}()
	TaskSupport("sometimes")
}
