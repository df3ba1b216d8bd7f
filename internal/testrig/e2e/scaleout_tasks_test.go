package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/mcphost/mcphost/internal/testrig/redistest"
)

// TestTasksMoveBetweenReplicasBehindHAProxy creates tasks through haproxy
// in front of three replicas sharing Redis, round robin without
// stickiness, so that each request of a task lands on another replica
// than the one before, in both eras: a task created on one replica is
// polled, listed, read and cancelled on the others, and the cancel stops
// the plugin on the replica that runs it.
func TestTasksMoveBetweenReplicasBehindHAProxy(t *testing.T) {
	r := redistest.Start(t)
	url, bases := replicasBehindHAProxy(t, replicaFixtureOf(t, r, taskConfig, taskPlugins), 3)
	before := make([]int, len(bases))
	for i, base := range bases {
		before[i] = operations(t, base)
	}

	t.Run("2025-11-25", func(t *testing.T) {
		p := &httpPeer{url: url}
		id := &ids{}
		initTasks(t, p)
		quick := createdTask(t, p.request(t, id.next(), "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"millis": 300}, "task": map[string]any{"ttl": 60000}}))
		done := resultOf(t, p.request(t, id.next(), "tasks/result", map[string]any{"taskId": quick}))
		if text := done["content"].([]any)[0].(map[string]any)["text"]; text != "done" || metaTask(done) != quick {
			t.Fatalf("tasks/result on another replica: %v", done)
		}
		for range 3 { // each replica in turn
			pollStatus(t, p, id, quick, "completed")
		}
		slow := createdTask(t, p.request(t, id.next(), "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"millis": 50000}, "task": map[string]any{}}))
		pollStatus(t, p, id, slow, "working")
		for range 3 {
			if n := len(resultOf(t, p.request(t, id.next(), "tasks/list", nil))["tasks"].([]any)); n != 2 {
				t.Errorf("tasks/list on a replica lists %d tasks, want 2", n)
			}
		}
		if got := resultOf(t, p.request(t, id.next(), "tasks/cancel", map[string]any{"taskId": slow})); got["status"] != "cancelled" {
			t.Fatalf("tasks/cancel on another replica: %v", got)
		}
		// With max_instances = 1, a call on the replica that ran the task
		// would wait 50 s for it, were it not stopped: three calls, one on
		// each replica.
		start := time.Now()
		for range 3 {
			if res := resultOf(t, p.request(t, id.next(), "tools/call", map[string]any{"name": "ok", "arguments": map[string]any{}})); res["content"].([]any)[0].(map[string]any)["text"] != "ok" {
				t.Fatalf("ok after the cancel: %v", res)
			}
		}
		if d := time.Since(start); d > 15*time.Second {
			t.Errorf("the calls after tasks/cancel took %v: the plugin went on", d)
		}
		for range 3 {
			pollStatus(t, p, id, slow, "cancelled")
		}
		other := &httpPeer{url: url}
		initTasks(t, other)
		if code := codeOf(t, other.request(t, 1, "tasks/get", map[string]any{"taskId": quick})); code != -32602 {
			t.Errorf("tasks/get of another session's task: code %d, want -32602", code)
		}
		// A task in input_required: its tasks/result, on whichever replica,
		// carries the elicitation its run sends, and the answer, POSTed to
		// yet another, reaches the run.
		for range 3 {
			asking := createdTask(t, p.request(t, id.next(), "tools/call", map[string]any{"name": "test_elicitation", "arguments": map[string]any{"message": "Who are you?"}, "task": map[string]any{}}))
			pollStatus(t, p, id, asking, "input_required")
			if text := answerTaskElicitation(t, p, asking, id)["content"].([]any)[0].(map[string]any)["text"].(string); !strings.Contains(text, "Ada") {
				t.Fatalf("tasks/result of an elicitation task on another replica: %s", text)
			}
		}
	})

	t.Run("2026-07-28", func(t *testing.T) {
		caps := map[string]any{"io.modelcontextprotocol/clientCapabilities": map[string]any{
			"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}}
		meta := func() map[string]any { // a fresh copy: the request completes it
			return map[string]any{"io.modelcontextprotocol/clientCapabilities": caps["io.modelcontextprotocol/clientCapabilities"]}
		}
		call := func(id int, method, name string, params map[string]any) map[string]any {
			t.Helper()
			params["_meta"] = meta()
			m := postModern(t, url, id, method, name, params)
			res, _ := m["result"].(map[string]any)
			if res == nil {
				t.Fatalf("%s: %v, want a result", method, m)
			}
			return res
		}
		created := call(1, "tools/call", "slow", map[string]any{"name": "slow", "arguments": map[string]any{"millis": 1500}})
		task, _ := created["taskId"].(string)
		if created["resultType"] != "task" || task == "" {
			t.Fatalf("a call longer than task_after: %v, want a CreateTaskResult", created)
		}
		n := 1
		var got map[string]any
		if !poll.Within(20*time.Second, func() bool {
			n++
			got = call(n, "tasks/get", task, map[string]any{"taskId": task})
			return got["status"] == "completed"
		}) {
			t.Fatalf("tasks/get: %v, want completed", got)
		}
		if text := fmt.Sprint(got["result"]); !strings.Contains(text, "done") {
			t.Errorf("the completed task inlines %v, want the tool's result", got["result"])
		}
		for range 3 {
			n++
			if got := call(n, "tasks/get", task, map[string]any{"taskId": task}); got["status"] != "completed" {
				t.Errorf("tasks/get on a replica: %v, want completed", got)
			}
		}
		slow := call(n+1, "tools/call", "slow", map[string]any{"name": "slow", "arguments": map[string]any{"millis": 50000}})["taskId"].(string)
		call(n+2, "tasks/cancel", slow, map[string]any{"taskId": slow})
		for i := range 3 {
			if got := call(n+3+i, "tasks/get", slow, map[string]any{"taskId": slow}); got["status"] != "cancelled" {
				t.Errorf("tasks/get after tasks/cancel on another replica: %v, want cancelled", got)
			}
		}
	})

	for i, base := range bases {
		if served := operations(t, base) - before[i]; served < 5 {
			t.Errorf("replica %d served %d of the task requests; want haproxy to spread them", i, served)
		}
	}
}
