package host

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/poll"
)

// taskTools is the state of the tools of taskPlugin.
type taskTools struct {
	started chan struct{} // a "wait" call started
	release chan struct{} // closed: "wait" calls answer
	stopped chan error    // a "wait" call was interrupted, with this
}

var openSchema = json.RawMessage(`{"type":"object"}`)

// pollID numbers the polling requests of taskStatus, apart from the ids
// the tests choose.
var pollID atomic.Int64

func init() { pollID.Store(100000) }

// taskPlugin offers tools for tasks: quick, wait (until released or
// interrupted), fails (an isError result), refuses (a protocol error),
// typed (takes an integer n), ask (progress, then an elicitation), plain
// (no execution: tasks forbidden) and must (tasks required).
func taskPlugin(t *testing.T) (*Plugin, *taskTools) {
	tt := &taskTools{started: make(chan struct{}, 10), release: make(chan struct{}), stopped: make(chan error, 10)}
	optional := &abi.ToolExecution{TaskSupport: "optional"}
	elicit, progress := hostFn(t, abi.HostCreateElicitation), hostFn(t, abi.HostNotifyProgress)
	text := func(s string) ([]byte, error) {
		return json.Marshal(abi.CallToolResult{Content: []abi.Content{{Type: "text", Text: s}}})
	}
	p := NewPlugin("p", "", fakeRuntime{
		abi.ExportListTools: returns(abi.ListToolsResult{Tools: []abi.Tool{
			{Name: "quick", InputSchema: openSchema, Execution: optional},
			{Name: "wait", InputSchema: openSchema, Execution: optional},
			{Name: "fails", InputSchema: openSchema, Execution: optional},
			{Name: "refuses", InputSchema: openSchema, Execution: optional},
			{Name: "typed", InputSchema: objectSchema, Execution: optional},
			{Name: "ask", InputSchema: openSchema, Execution: optional},
			{Name: "plain", InputSchema: openSchema},
			{Name: "must", InputSchema: openSchema, Execution: &abi.ToolExecution{TaskSupport: "required"}},
			{Name: "odd", InputSchema: openSchema, Execution: &abi.ToolExecution{TaskSupport: "sometimes"}},
		}}),
		abi.ExportCallTool: func(ctx context.Context, in []byte) ([]byte, error) {
			var input abi.Input
			_ = json.Unmarshal(in, &input)
			var req abi.CallToolParams
			_ = json.Unmarshal(input.Request, &req)
			switch req.Name {
			case "wait":
				tt.started <- struct{}{}
				select {
				case <-tt.release:
					return text("released")
				case <-ctx.Done():
					tt.stopped <- ctx.Err()
					return nil, &CallError{Reason: "plugin call canceled", Message: "canceled", Canceled: true}
				}
			case "fails":
				return json.Marshal(abi.CallToolResult{Content: []abi.Content{{Type: "text", Text: "it broke"}}, IsError: true})
			case "refuses":
				return nil, &CallError{Own: true, Message: `{"code":-32602,"message":"refused: bad input"}`}
			case "ask":
				if token := input.Context.Meta["progressToken"]; token != nil {
					if _, err := progress(ctx, mustJSON(abi.ProgressParams{ProgressToken: token, Progress: 1})); err != nil {
						return text("progress: " + err.Error())
					}
				}
				answer, err := elicit(ctx, []byte(`{"message":"name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`))
				if err != nil {
					return text("error: " + err.Error())
				}
				return text("answer: " + string(answer))
			}
			return text(req.Name + " ran with " + string(req.Arguments))
		},
	})
	return p, tt
}

// await reads messages until one matches, and returns it with the ones
// read before it.
func (h *harness) await(t *testing.T, match func(map[string]any) bool) (map[string]any, []map[string]any) {
	t.Helper()
	var before []map[string]any
	for {
		m := h.out.next(t)
		if match(m) {
			return m, before
		}
		before = append(before, m)
	}
}

// responseTo matches the response to the request with this id.
func responseTo(id any) func(map[string]any) bool {
	return func(m map[string]any) bool {
		_, isMessage := m["method"]
		return !isMessage && fmt.Sprint(m["id"]) == fmt.Sprint(id)
	}
}

func isMethod(method string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["method"] == method }
}

// request sends a request and returns its response, skipping other
// messages.
func (h *harness) request(t *testing.T, id int, method string, params any) map[string]any {
	t.Helper()
	p, _ := json.Marshal(params)
	h.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, p))
	m, _ := h.await(t, responseTo(id))
	return m
}

// startTask calls a tool as a task and returns the task of the
// CreateTaskResult.
func (h *harness) startTask(t *testing.T, id int, tool string, task map[string]any) map[string]any {
	t.Helper()
	res := result(t, h.request(t, id, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{}, "task": task}))
	created, ok := res["task"].(map[string]any)
	if !ok {
		t.Fatalf("tools/call with a task answered %v, want a CreateTaskResult", res)
	}
	return created
}

// taskStatus polls tasks/get until the task has the status.
func (h *harness) taskStatus(t *testing.T, id string, status string) map[string]any {
	t.Helper()
	var got map[string]any
	if !poll.Within(5*time.Second, func() bool {
		got = result(t, h.request(t, int(pollID.Add(1)), "tasks/get", map[string]any{"taskId": id}))
		return got["status"] == status
	}) {
		t.Fatalf("task status %v, want %s", got, status)
	}
	return got
}

// h2 returns a harness for another session of srv.
func h2(t *testing.T, srv *Server) *harness {
	out := newRecorder()
	h := &harness{srv: srv, sess: srv.NewSession(out), out: out}
	t.Cleanup(h.sess.Close)
	return h
}

// responses reads messages until it has the responses to every id.
func (h *harness) responses(t *testing.T, ids ...int) map[int]map[string]any {
	t.Helper()
	got := map[int]map[string]any{}
	for len(got) < len(ids) {
		m := h.out.next(t)
		for _, id := range ids {
			if responseTo(id)(m) {
				got[id] = m
			}
		}
	}
	return got
}

func taskHarness(t *testing.T, store taskStoreCase, version string) (*harness, *taskTools) {
	p, tt := taskPlugin(t)
	h := newHarness(t, p)
	store.use(h.srv)
	initWithCaps(t, h, version, `{"elicitation":{"form":{}}}`)
	return h, tt
}

func relatedTask(m map[string]any) any {
	meta, _ := m["_meta"].(map[string]any)
	rt, _ := meta[relatedTaskKey].(map[string]any)
	return rt["taskId"]
}

func TestTasksAreDeclaredAndListedOnlyTo20251125(t *testing.T) {
	p, _ := taskPlugin(t)
	h := newHarness(t, p)
	caps := result(t, h.init(t, Version20251125))["capabilities"].(map[string]any)
	tasks, _ := caps["tasks"].(map[string]any)
	requests, _ := tasks["requests"].(map[string]any)
	if tasks["list"] == nil || tasks["cancel"] == nil || requests["tools"].(map[string]any)["call"] == nil {
		t.Fatalf("tasks capability %v", caps["tasks"])
	}
	support := map[string]any{}
	for cursor, id := "", 1; ; id++ {
		res := result(t, h.call(t, id, "tools/list", map[string]any{"cursor": cursor}))
		for _, tl := range res["tools"].([]any) {
			tool := tl.(map[string]any)
			support[tool["name"].(string)] = tool["execution"]
		}
		if cursor, _ = res["nextCursor"].(string); cursor == "" {
			break
		}
	}
	for name, want := range map[string]string{"quick": "optional", "must": "required", "plain": "", "odd": ""} {
		got := ""
		if x, ok := support[name].(map[string]any); ok {
			got = x["taskSupport"].(string)
		}
		if got != want {
			t.Errorf("%s: execution %v, want taskSupport %q", name, support[name], want)
		}
	}

	old := newHarness(t, p)
	caps = result(t, old.init(t, Version20250618))["capabilities"].(map[string]any)
	if caps["tasks"] != nil {
		t.Errorf("2025-06-18 session got the tasks capability: %v", caps)
	}
	tool := result(t, old.call(t, 1, "tools/list", nil))["tools"].([]any)[0].(map[string]any)
	if _, ok := tool["execution"]; ok {
		t.Errorf("2025-06-18 session got execution: %v", tool)
	}
}

func TestConfigTaskSupportOverridesThePlugin(t *testing.T) {
	forEachTaskStore(t, testConfigTaskSupportOverridesThePlugin)
}

func testConfigTaskSupportOverridesThePlugin(t *testing.T, store taskStoreCase) {
	p, _ := taskPlugin(t)
	p.taskSupport = map[string]string{"plain": "optional", "wait": "required", "*": "forbidden"}
	h := newHarness(t, p)
	store.use(h.srv)
	h.init(t, Version20251125)
	entries := h.srv.Catalog().toolIndex
	for name, want := range map[string]string{"plain": "optional", "wait": "required", "quick": "forbidden", "must": "forbidden"} {
		if got := entries[name].taskSupport(); got != want {
			t.Errorf("%s: taskSupport %q, want %q", name, got, want)
		}
		listed := withTaskSupport(entries[name]).Execution
		if (listed == nil) != (want == "forbidden") || listed != nil && listed.TaskSupport != want {
			t.Errorf("%s listed with execution %+v, want %q", name, listed, want)
		}
	}
	if code := errCode(t, h.call(t, 1, "tools/call", map[string]any{"name": "quick", "task": map[string]any{}})); code != CodeMethodNotFound {
		t.Errorf("task on a tool the config forbids: code %d", code)
	}
	if res := result(t, h.call(t, 2, "tools/call", map[string]any{"name": "plain", "task": map[string]any{}})); res["task"] == nil {
		t.Errorf("task on a tool the config allows: %v", res)
	}
}

func TestTaskLifecycleToCompletion(t *testing.T) { forEachTaskStore(t, testTaskLifecycleToCompletion) }

func testTaskLifecycleToCompletion(t *testing.T, store taskStoreCase) {
	h, _ := taskHarness(t, store, Version20251125)
	before := time.Now().Add(-time.Second)
	task := h.startTask(t, 1, "quick", map[string]any{"ttl": 60000})
	id, _ := task["taskId"].(string)
	if len(id) < 32 || task["status"] != "working" || task["ttl"] != float64(60000) || task["pollInterval"] != float64(1000) {
		t.Fatalf("created task %v", task)
	}
	for _, k := range []string{"createdAt", "lastUpdatedAt"} {
		at, err := time.Parse(time.RFC3339Nano, task[k].(string))
		if err != nil || at.Before(before) || at.After(time.Now()) {
			t.Errorf("%s %v: %v", k, task[k], err)
		}
	}
	res := result(t, h.request(t, 2, "tasks/result", map[string]any{"taskId": id}))
	if text := res["content"].([]any)[0].(map[string]any)["text"]; text != "quick ran with {}" || relatedTask(res) != id {
		t.Fatalf("tasks/result %v", res)
	}
	done := h.taskStatus(t, id, "completed")
	if done["taskId"] != id || done["_meta"] != nil || done["createdAt"] != task["createdAt"] {
		t.Errorf("tasks/get %v", done)
	}
	// The result stays for tasks/result until the ttl elapses.
	again := result(t, h.request(t, 3, "tasks/result", map[string]any{"taskId": id}))
	if relatedTask(again) != id {
		t.Errorf("second tasks/result %v", again)
	}
	if other := h.startTask(t, 4, "quick", map[string]any{}); other["taskId"] == id {
		t.Error("two tasks got the same id")
	}
}

func TestTaskResultWaitsAndTasksCancelInterruptsThePlugin(t *testing.T) {
	forEachTaskStore(t, testTaskResultWaitsAndTasksCancelInterruptsThePlugin)
}

func testTaskResultWaitsAndTasksCancelInterruptsThePlugin(t *testing.T, store taskStoreCase) {
	h, tt := taskHarness(t, store, Version20251125)
	id := h.startTask(t, 1, "wait", map[string]any{})["taskId"].(string)
	<-tt.started
	// notifications/cancelled for the tools/call does not stop a task.
	h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	h.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":%q}}`, id))
	h.out.none(t, 100*time.Millisecond) // tasks/result blocks while the task works
	h.taskStatus(t, id, "working")

	h.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"taskId":%q}}`, id))
	answers := h.responses(t, 2, 3)
	cancelled := result(t, answers[3])
	if cancelled["status"] != "cancelled" || cancelled["taskId"] != id || cancelled["statusMessage"] == nil {
		t.Fatalf("tasks/cancel %v", cancelled)
	}
	select {
	case err := <-tt.stopped:
		if err != context.Canceled {
			t.Errorf("plugin saw %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("tasks/cancel did not interrupt the plugin")
	}
	if code := errCode(t, answers[2]); code != CodeInternalError {
		t.Errorf("tasks/result of a cancelled task: code %d", code)
	}
	if code := errCode(t, h.request(t, 4, "tasks/cancel", map[string]any{"taskId": id})); code != CodeInvalidParams {
		t.Errorf("cancelling a cancelled task: code %d", code)
	}
	if got := h.taskStatus(t, id, "cancelled"); got["statusMessage"] != cancelled["statusMessage"] {
		t.Errorf("cancelled task changed: %v", got)
	}
}

func TestTaskStatusNotifications(t *testing.T) { forEachTaskStore(t, testTaskStatusNotifications) }

func testTaskStatusNotifications(t *testing.T, store taskStoreCase) {
	h, tt := taskHarness(t, store, Version20251125)
	id := h.startTask(t, 1, "wait", map[string]any{})["taskId"].(string)
	<-tt.started
	close(tt.release)
	note, _ := h.await(t, isMethod("notifications/tasks/status"))
	p := note["params"].(map[string]any)
	if p["taskId"] != id || p["status"] != "completed" || p["_meta"] != nil || p["createdAt"] == nil {
		t.Fatalf("status notification %v", note)
	}
	if code := errCode(t, h.request(t, 2, "tasks/cancel", map[string]any{"taskId": id})); code != CodeInvalidParams {
		t.Errorf("cancelling a completed task: code %d", code)
	}
}

func TestTaskFailuresKeepTheCallsOutcome(t *testing.T) {
	forEachTaskStore(t, testTaskFailuresKeepTheCallsOutcome)
}

func testTaskFailuresKeepTheCallsOutcome(t *testing.T, store taskStoreCase) {
	h, _ := taskHarness(t, store, Version20251125)
	for i, c := range []struct {
		tool, args string
		code       int    // of the error tasks/result returns; 0: a result
		text       string // of the result, or in statusMessage
	}{
		{"fails", `{}`, 0, "it broke"},
		{"typed", `{"n":"three"}`, 0, "invalid arguments for tool typed"},
		{"refuses", `{}`, CodeInvalidParams, "refused: bad input"},
	} {
		direct := h.request(t, 10*i+1, "tools/call", map[string]any{"name": c.tool, "arguments": json.RawMessage(c.args)})
		created := result(t, h.request(t, 10*i+2, "tools/call", map[string]any{"name": c.tool, "arguments": json.RawMessage(c.args), "task": map[string]any{}}))
		id := created["task"].(map[string]any)["taskId"].(string)
		got := h.request(t, 10*i+3, "tasks/result", map[string]any{"taskId": id})
		if c.code != 0 {
			if code := errCode(t, got); code != c.code || fmt.Sprint(got["error"]) != fmt.Sprint(direct["error"]) {
				t.Errorf("%s: tasks/result %v, want the error of the direct call %v", c.tool, got, direct)
			}
		} else {
			res := result(t, got)
			delete(res, "_meta")
			if fmt.Sprint(res) != fmt.Sprint(result(t, direct)) || res["isError"] != true {
				t.Errorf("%s: tasks/result %v, want the direct call's %v", c.tool, res, direct)
			}
		}
		if failed := h.taskStatus(t, id, "failed"); !strings.Contains(fmt.Sprint(failed["statusMessage"]), c.text) {
			t.Errorf("%s: failed task %v, want a statusMessage with %q", c.tool, failed, c.text)
		}
	}
}

func TestTaskProtocolErrors(t *testing.T) { forEachTaskStore(t, testTaskProtocolErrors) }

func testTaskProtocolErrors(t *testing.T, store taskStoreCase) {
	h, _ := taskHarness(t, store, Version20251125)
	nextID := 0
	for _, c := range []struct {
		method string
		params map[string]any
		code   int
	}{
		{"tools/call", map[string]any{"name": "plain", "task": map[string]any{}}, CodeMethodNotFound},
		{"tools/call", map[string]any{"name": "odd", "task": map[string]any{}}, CodeMethodNotFound},
		{"tools/call", map[string]any{"name": "must"}, CodeMethodNotFound},
		{"tools/call", map[string]any{"name": "quick", "task": map[string]any{"ttl": "long"}}, CodeInvalidParams},
		{"tools/call", map[string]any{"name": "quick", "task": 5}, CodeInvalidParams},
		{"tools/call", map[string]any{"name": "nope", "task": map[string]any{}}, CodeInvalidParams},
		{"tasks/get", map[string]any{"taskId": "nope"}, CodeInvalidParams},
		{"tasks/result", map[string]any{"taskId": "nope"}, CodeInvalidParams},
		{"tasks/cancel", map[string]any{"taskId": "nope"}, CodeInvalidParams},
		{"tasks/get", map[string]any{}, CodeInvalidParams},
		{"tasks/get", map[string]any{"taskId": 7}, CodeInvalidParams},
		{"tasks/list", map[string]any{"cursor": "garbage!"}, CodeInvalidParams},
		{"tasks/list", map[string]any{"cursor": encodeCursor("tools", 1)}, CodeInvalidParams},
	} {
		nextID++
		if code := errCode(t, h.request(t, nextID, c.method, c.params)); code != c.code {
			t.Errorf("%s %v: code %d, want %d", c.method, c.params, code, c.code)
		}
	}
	if res := result(t, h.request(t, 102, "tools/call", map[string]any{"name": "must", "task": map[string]any{}})); res["task"] == nil {
		t.Errorf("required tool with a task: %v", res)
	}
	msg := h.request(t, 103, "tools/call", map[string]any{"name": "must"})["error"].(map[string]any)["message"].(string)
	if !strings.Contains(msg, "Task augmentation required") {
		t.Errorf("required tool without a task: %q", msg)
	}

	// Before 2025-11-25 there are no tasks: the task is ignored, every tool
	// runs directly and the tasks/ methods do not exist.
	old, _ := taskHarness(t, store, Version20250618)
	for i, name := range []string{"must", "plain", "quick"} {
		res := result(t, old.request(t, 10+i, "tools/call", map[string]any{"name": name, "task": map[string]any{}}))
		if res["task"] != nil || res["content"] == nil {
			t.Errorf("2025-06-18 %s with a task: %v", name, res)
		}
	}
	for i, method := range []string{"tasks/get", "tasks/result", "tasks/list", "tasks/cancel"} {
		if code := errCode(t, old.request(t, 20+i, method, map[string]any{"taskId": "x"})); code != CodeMethodNotFound {
			t.Errorf("2025-06-18 %s: code %d", method, code)
		}
	}
}

func TestTaskTTLIsCappedAndExpires(t *testing.T) { forEachTaskStore(t, testTaskTTLIsCappedAndExpires) }

func testTaskTTLIsCappedAndExpires(t *testing.T, store taskStoreCase) {
	h, tt := taskHarness(t, store, Version20251125)
	if ttl := h.startTask(t, 1, "quick", map[string]any{"ttl": 1e12})["ttl"]; ttl != float64(time.Hour.Milliseconds()) {
		t.Errorf("ttl asked 1e12 ms, got %v, want the 1h maximum", ttl)
	}
	if ttl := h.startTask(t, 2, "quick", map[string]any{})["ttl"]; ttl != float64(defaultTaskTTL.Milliseconds()) {
		t.Errorf("no ttl asked: got %v, want the default", ttl)
	}

	done := h.startTask(t, 3, "quick", map[string]any{"ttl": 150})
	id := done["taskId"].(string)
	if done["ttl"] != float64(150) {
		t.Fatalf("ttl 150: %v", done)
	}
	h.taskStatus(t, id, "completed")
	var expired map[string]any // once the ttl has passed
	if !poll.Within(5*time.Second, func() bool {
		expired = h.request(t, int(pollID.Add(1)), "tasks/result", map[string]any{"taskId": id})
		return expired["error"] != nil
	}) || errCode(t, expired) != CodeInvalidParams {
		t.Errorf("tasks/result after the ttl: %v", expired)
	}

	// A task still running when its ttl elapses is interrupted and dropped;
	// a tasks/result waiting for it hears that it expired.
	running := h.startTask(t, 5, "wait", map[string]any{"ttl": 200})["taskId"].(string)
	<-tt.started
	h.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":6,"method":"tasks/result","params":{"taskId":%q}}`, running))
	select {
	case <-tt.stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("the ttl did not interrupt the running task")
	}
	waited, _ := h.await(t, responseTo(6))
	if e, _ := waited["error"].(map[string]any); errCode(t, waited) != CodeInvalidParams || !strings.Contains(fmt.Sprint(e["message"]), "expired") {
		t.Errorf("tasks/result waiting for an expiring task: %v", waited)
	}
	if code := errCode(t, h.request(t, 7, "tasks/get", map[string]any{"taskId": running})); code != CodeInvalidParams {
		t.Errorf("tasks/get after the ttl: code %d", code)
	}
	if n := len(allTasks(h.srv, taskOwner{Session: h.sess.id})); n != 2 {
		t.Errorf("%d tasks kept, want the 2 with long ttls", n)
	}
}

func TestTaskInputRequiredWhileItsElicitationWaits(t *testing.T) {
	forEachTaskStore(t, testTaskInputRequiredWhileItsElicitationWaits)
}

func testTaskInputRequiredWhileItsElicitationWaits(t *testing.T, store taskStoreCase) {
	h, _ := taskHarness(t, store, Version20251125)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{},"task":{},"_meta":{"progressToken":"tok"}}}`)
	created, _ := h.await(t, responseTo(1))
	id := result(t, created)["task"].(map[string]any)["taskId"].(string)

	waiting := h.taskStatus(t, id, "input_required")
	if !strings.Contains(fmt.Sprint(waiting["statusMessage"]), "elicitation/create") {
		t.Errorf("input_required task %v", waiting)
	}
	// Progress went out with the related task; the elicitation waits for
	// a tasks/result.
	// The status notification is announced just after the status changes:
	// wait for it to go out before looking at what went out.
	var seen []map[string]any
	poll.Within(5*time.Second, func() bool {
		h.out.mu.Lock()
		seen = append(seen[:0], h.out.msgs...)
		h.out.mu.Unlock()
		return slices.ContainsFunc(seen, func(m map[string]any) bool {
			p, _ := m["params"].(map[string]any)
			return m["method"] == "notifications/tasks/status" && p["status"] == "input_required"
		})
	})
	h.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tasks/result","params":{"taskId":%q}}`, id))
	ask, _ := h.await(t, isMethod("elicitation/create"))
	if relatedTask(ask["params"].(map[string]any)) != id {
		t.Fatalf("elicitation without the related task: %v", ask)
	}
	var progress, inputRequired bool
	for _, m := range seen {
		switch m["method"] {
		case "elicitation/create":
			t.Fatalf("the elicitation went out before tasks/result: %v", m)
		case "notifications/progress":
			p := m["params"].(map[string]any)
			progress = p["progressToken"] == "tok" && relatedTask(p) == id
		case "notifications/tasks/status":
			inputRequired = inputRequired || m["params"].(map[string]any)["status"] == "input_required"
		}
	}
	if !progress || !inputRequired {
		t.Errorf("progress with the related task: %v; input_required announced: %v; messages %v", progress, inputRequired, seen)
	}

	askID, _ := json.Marshal(ask["id"])
	h.send(`{"jsonrpc":"2.0","id":` + string(askID) + `,"result":{"action":"accept","content":{"name":"Ada"},"_meta":{"` + relatedTaskKey + `":{"taskId":"` + id + `"}}}}`)
	res, _ := h.await(t, responseTo(2))
	text := result(t, res)["content"].([]any)[0].(map[string]any)["text"].(string)
	if !strings.Contains(text, `"Ada"`) || relatedTask(result(t, res)) != id {
		t.Fatalf("tasks/result %v", res)
	}
	h.taskStatus(t, id, "completed")
}

func TestTaskCancelWhileInputRequiredDropsTheQueuedRequest(t *testing.T) {
	forEachTaskStore(t, testTaskCancelWhileInputRequiredDropsTheQueuedRequest)
}

func testTaskCancelWhileInputRequiredDropsTheQueuedRequest(t *testing.T, store taskStoreCase) {
	h, _ := taskHarness(t, store, Version20251125)
	id := h.startTask(t, 1, "ask", map[string]any{})["taskId"].(string)
	h.taskStatus(t, id, "input_required")
	if res := result(t, h.request(t, 2, "tasks/cancel", map[string]any{"taskId": id})); res["status"] != "cancelled" {
		t.Fatalf("tasks/cancel %v", res)
	}
	// The elicitation never went out, so neither does its cancellation.
	deadline := time.After(200 * time.Millisecond)
	for {
		select {
		case m := <-h.out.ch:
			if m["method"] == "elicitation/create" || m["method"] == "notifications/cancelled" {
				t.Fatalf("unexpected %v", m)
			}
			continue
		case <-deadline:
		}
		break
	}
	if code := errCode(t, h.request(t, 3, "tasks/result", map[string]any{"taskId": id})); code != CodeInternalError {
		t.Errorf("tasks/result of the cancelled task: code %d", code)
	}
}

func TestTasksAreIsolatedBetweenSessions(t *testing.T) {
	forEachTaskStore(t, testTasksAreIsolatedBetweenSessions)
}

func testTasksAreIsolatedBetweenSessions(t *testing.T, store taskStoreCase) {
	p, _ := taskPlugin(t)
	a := newHarness(t, p)
	store.use(a.srv)
	a.init(t, Version20251125)
	b := h2(t, a.srv)
	b.init(t, Version20251125)

	var mine []string
	for i := range 3 {
		mine = append(mine, a.startTask(t, 1+i, "quick", map[string]any{})["taskId"].(string))
	}
	theirs := b.startTask(t, 1, "quick", map[string]any{})["taskId"].(string)

	var listed []string
	for cursor, i := "", 0; ; i++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		res := result(t, a.request(t, 10+i, "tasks/list", params))
		for _, task := range res["tasks"].([]any) {
			listed = append(listed, task.(map[string]any)["taskId"].(string))
		}
		if cursor, _ = res["nextCursor"].(string); cursor == "" {
			break
		}
		if i == 0 && len(listed) != 2 {
			t.Fatalf("first page of %d, want 2", len(listed))
		}
	}
	if strings.Join(listed, ",") != strings.Join(mine, ",") {
		t.Errorf("session a lists %v, want its own %v in order", listed, mine)
	}
	res := result(t, b.request(t, 2, "tasks/list", nil))
	if tasks := res["tasks"].([]any); len(tasks) != 1 || tasks[0].(map[string]any)["taskId"] != theirs {
		t.Errorf("session b lists %v", res)
	}
	for i, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		if code := errCode(t, b.request(t, 3+i, method, map[string]any{"taskId": mine[0]})); code != CodeInvalidParams {
			t.Errorf("%s of another session's task: code %d", method, code)
		}
	}
}

type testSubjectKey struct{}

func TestTasksAreBoundToTheAuthenticatedSubject(t *testing.T) {
	forEachTaskStore(t, testTasksAreBoundToTheAuthenticatedSubject)
}

func testTasksAreBoundToTheAuthenticatedSubject(t *testing.T, store taskStoreCase) {
	subjectOf := func(ctx context.Context) string { s, _ := ctx.Value(testSubjectKey{}).(string); return s }
	as := func(subject string) context.Context {
		return context.WithValue(context.Background(), testSubjectKey{}, subject)
	}

	p, _ := taskPlugin(t)
	srv := store.use(NewServer(Options{PageSize: 10, Subject: subjectOf}, BuildCatalog(context.Background(), []*Plugin{p}, nil)))
	type client struct {
		sess *Session
		out  *recorder
		ctx  context.Context
	}
	newClient := func(subject string) *client {
		out := newRecorder()
		c := &client{sess: srv.NewSession(out), out: out, ctx: as(subject)}
		t.Cleanup(c.sess.Close)
		c.sess.Handle(c.ctx, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`), c.out)
		c.out.next(t)
		c.sess.Handle(c.ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), c.out)
		return c
	}
	nextID := 0
	call := func(c *client, ctx context.Context, method string, params any) map[string]any {
		raw, _ := json.Marshal(params)
		nextID++
		c.sess.Handle(ctx, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, nextID, method, raw)), c.out)
		for {
			if m := c.out.next(t); m["method"] == nil {
				return m
			}
		}
	}
	alice, alice2, bob := newClient("alice"), newClient("alice"), newClient("bob")
	created := result(t, call(alice, alice.ctx, "tools/call", map[string]any{"name": "quick", "task": map[string]any{}}))
	id := created["task"].(map[string]any)["taskId"].(string)

	// The same subject sees the task from another session of its own...
	if got := result(t, call(alice2, alice2.ctx, "tasks/get", map[string]any{"taskId": id})); got["taskId"] != id {
		t.Errorf("alice's other session: %v", got)
	}
	if tasks := result(t, call(alice2, alice2.ctx, "tasks/list", nil))["tasks"].([]any); len(tasks) != 1 {
		t.Errorf("alice's other session lists %v", tasks)
	}
	// ...another subject does not, not even in the creating session.
	for _, c := range []struct {
		client *client
		ctx    context.Context
	}{{bob, bob.ctx}, {alice, as("bob")}, {alice, context.Background()}} {
		for _, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
			if code := errCode(t, call(c.client, c.ctx, method, map[string]any{"taskId": id})); code != CodeInvalidParams {
				t.Errorf("%s as %q: code %d", method, subjectOf(c.ctx), code)
			}
		}
		if tasks := result(t, call(c.client, c.ctx, "tasks/list", nil))["tasks"].([]any); len(tasks) != 0 {
			t.Errorf("tasks/list as %q: %v", subjectOf(c.ctx), tasks)
		}
	}
	if got := result(t, call(alice, alice.ctx, "tasks/result", map[string]any{"taskId": id})); relatedTask(got) != id {
		t.Errorf("alice's tasks/result %v", got)
	}
}

// Without authentication, a legacy session is the user whose tasks
// [server] max_tasks_per_user bounds.
func TestTasksPerSessionAreBounded(t *testing.T) { forEachTaskStore(t, testTasksPerSessionAreBounded) }

func testTasksPerSessionAreBounded(t *testing.T, store taskStoreCase) {
	h, _ := taskHarness(t, store, Version20251125)
	h.srv.tasks.maxPerUser = 2
	h.startTask(t, 1, "quick", map[string]any{})
	h.startTask(t, 2, "quick", map[string]any{})
	refused := h.request(t, 3, "tools/call", map[string]any{"name": "quick", "task": map[string]any{}})
	if code := errCode(t, refused); code != CodeInternalError || !strings.Contains(fmt.Sprint(refused["error"]), "too many tasks") || !strings.Contains(fmt.Sprint(refused["error"]), "max_tasks_per_user") {
		t.Errorf("third task: %v", refused)
	}
	if res := result(t, h.request(t, 4, "tools/call", map[string]any{"name": "quick"})); res["content"] == nil {
		t.Errorf("a direct call at the task limit: %v", res)
	}
	other := h2(t, h.srv)
	other.init(t, Version20251125)
	other.startTask(t, 1, "quick", map[string]any{})
}

func TestClosingASessionCancelsItsTasks(t *testing.T) {
	forEachTaskStore(t, testClosingASessionCancelsItsTasks)
}

func testClosingASessionCancelsItsTasks(t *testing.T, store taskStoreCase) {
	h, tt := taskHarness(t, store, Version20251125)
	h.startTask(t, 1, "wait", map[string]any{})
	<-tt.started
	h.sess.Close()
	select {
	case err := <-tt.stopped:
		if err != context.Canceled {
			t.Errorf("plugin saw %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("closing the session did not interrupt its task")
	}
	waited := make(chan struct{})
	go func() { h.sess.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(5 * time.Second):
		t.Fatal("Wait did not return after the task ended")
	}
	if n := len(allTasks(h.srv, taskOwner{Session: h.sess.id})); n != 0 {
		t.Errorf("%d tasks kept after the session closed", n)
	}
}

func TestRelatedTaskKeepsTheOtherMeta(t *testing.T) {
	got, err := addRelatedTask(json.RawMessage(`{"content":[],"_meta":{"big":12345678901234567890,"x":"y"}}`), "T")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"_meta":{"big":12345678901234567890,"io.modelcontextprotocol/related-task":{"taskId":"T"},"x":"y"},"content":[]}`
	if string(got) != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	if got, _ := addRelatedTask(nil, "T"); string(got) != `{"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"T"}}}` {
		t.Errorf("no params: %s", got)
	}
}
