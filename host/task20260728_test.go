package host

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/poll"
)

const tasksCaps = `{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`

// modernTaskPlugin has the tools of the tasks scenarios: greet (no tasks), slow
// (optional; sleeps ms, or until cancelled), fails (required; a tool
// error), crash (optional; a protocol error), multi (optional; asks two
// questions at once after a while) and intake (required; asks a name at
// once, then works a while). runs counts the calls of multi.
func modernTaskPlugin(srv *Server, runs *atomic.Int32) *Plugin {
	hf := srv.HostFunctions("p")
	tool := func(name, support string) abi.Tool {
		t := abi.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}
		if support != "" {
			t.Execution = &abi.ToolExecution{TaskSupport: support}
		}
		return t
	}
	text := func(s string) ([]byte, error) {
		return json.Marshal(abi.CallToolResult{Content: []abi.Content{{Type: "text", Text: s}}})
	}
	return NewPlugin("p", "", fakeRuntime{
		abi.ExportListTools: returns(abi.ListToolsResult{Tools: []abi.Tool{
			tool("greet", ""), tool("slow", abi.TaskOptional), tool("fails", abi.TaskRequired),
			tool("crash", abi.TaskOptional), tool("multi", abi.TaskOptional), tool("intake", abi.TaskRequired),
		}}),
		abi.ExportCallTool: func(ctx context.Context, in []byte) ([]byte, error) {
			var input struct {
				Request struct {
					Name      string `json:"name"`
					Arguments struct {
						MS int `json:"ms"`
					} `json:"arguments"`
				} `json:"request"`
			}
			_ = json.Unmarshal(in, &input)
			sleep := func(d time.Duration) error {
				select {
				case <-time.After(d):
					return nil
				case <-ctx.Done():
					return &CallError{Reason: "plugin call cancelled", Message: ctx.Err().Error(), Canceled: true}
				}
			}
			switch input.Request.Name {
			case "slow":
				if err := sleep(time.Duration(input.Request.Arguments.MS) * time.Millisecond); err != nil {
					return nil, err
				}
				return text("slept")
			case "fails":
				_ = sleep(DefaultTaskAfter + 100*time.Millisecond)
				return json.Marshal(abi.CallToolResult{Content: []abi.Content{{Type: "text", Text: "it broke"}}, IsError: true})
			case "crash":
				_ = sleep(DefaultTaskAfter + 100*time.Millisecond)
				return nil, &CallError{Own: true, Message: `{"code":-32603,"message":"the job crashed"}`}
			case "multi":
				runs.Add(1)
				_ = sleep(DefaultTaskAfter + 100*time.Millisecond)
				out, err := hf[abi.HostRequestInput](ctx, []byte(`{"inputRequests":{
					"first":{"method":"elicitation/create","params":{"message":"first?","requestedSchema":{"type":"object","properties":{"v":{"type":"string"}}}}},
					"second":{"method":"elicitation/create","params":{"message":"second?","requestedSchema":{"type":"object","properties":{"v":{"type":"string"}}}}}}}`))
				if err != nil {
					return nil, &CallError{Own: true, Message: err.Error()}
				}
				var r struct {
					InputResponses map[string]struct {
						Content map[string]string `json:"content"`
					} `json:"inputResponses"`
				}
				_ = json.Unmarshal(out, &r)
				return text(r.InputResponses["first"].Content["v"] + "+" + r.InputResponses["second"].Content["v"])
			case "intake":
				name, err := elicit(ctx, hf, "name")
				if err != nil {
					return nil, &CallError{Own: true, Message: err.Error()}
				}
				_ = sleep(DefaultTaskAfter + 100*time.Millisecond)
				return text("hello " + name)
			}
			return text("Hello!")
		},
	})
}

// modernTaskHarness serves modernTaskPlugin.
func modernTaskHarness(t *testing.T, store taskStoreCase, opts Options) (*harness, *atomic.Int32) {
	t.Helper()
	runs := new(atomic.Int32)
	srv := store.use(NewServer(opts, nil))
	srv.catalog.Store(BuildCatalog(context.Background(), []*Plugin{modernTaskPlugin(srv, runs)}, nil))
	return session(t, srv), runs
}

// modernRequest sends a 2026-07-28 request with these client capabilities
// in ctx and returns its response.
func modernRequest(t *testing.T, h *harness, ctx context.Context, id int, method, caps, params string) map[string]any {
	t.Helper()
	params = strings.TrimSuffix(strings.TrimSpace(params), "}")
	if params != "{" {
		params += ","
	}
	h.sess.Handle(ctx, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s"_meta":%s}}`, id, method, params, modernMeta(caps, ""))), h.out)
	for {
		if m := h.out.next(t); m["id"] != nil {
			return m
		}
	}
}

// pollTask polls tasks/get until the task has status want (or a terminal
// one) and returns the last answer.
func pollTask(t *testing.T, h *harness, ctx context.Context, id string, want string) map[string]any {
	t.Helper()
	var res map[string]any
	n := 999
	poll.Within(5*time.Second, func() bool {
		n++
		res = result(t, modernRequest(t, h, ctx, n, "tasks/get", tasksCaps, `{"taskId":"`+id+`"}`))
		s := res["status"]
		return s == want || s == taskCompleted || s == taskFailed || s == taskCancelled
	})
	return res
}

// requiredTasksExtension checks a -32021 naming the tasks extension.
func requiredTasksExtension(t *testing.T, what string, resp map[string]any) {
	t.Helper()
	if code := errCode(t, resp); code != CodeMissingClientCapability {
		t.Errorf("%s: code %d, want %d", what, code, CodeMissingClientCapability)
		return
	}
	data, _ := resp["error"].(map[string]any)["data"].(map[string]any)
	want := map[string]any{"extensions": map[string]any{extTasks: map[string]any{}}}
	if got := data["requiredCapabilities"]; !reflect.DeepEqual(got, want) {
		t.Errorf("%s: requiredCapabilities %v, want %v", what, got, want)
	}
}

// Tasks of 2026-07-28 are the io.modelcontextprotocol/tasks extension:
// discover advertises it (and no tasks capability); without it in the
// request's capabilities, tasks/get, tasks/update and tasks/cancel and a
// tool that requires a task are -32021 naming it, a tool that may run as
// a task runs directly (a legacy task param changes nothing), and
// tasks/result and tasks/list do not exist at all.
func TestModernTasksNeedTheExtension(t *testing.T) {
	forEachTaskStore(t, testModernTasksNeedTheExtension)
}

func testModernTasksNeedTheExtension(t *testing.T, store taskStoreCase) {
	h, _ := modernTaskHarness(t, store, Options{})
	caps := result(t, modernRequest(t, h, context.Background(), 1, "server/discover", `{}`, `{}`))["capabilities"].(map[string]any)
	if ext, _ := caps["extensions"].(map[string]any); ext[extTasks] == nil || caps["tasks"] != nil {
		t.Errorf("discover capabilities %v, want extensions[%s] and no tasks", caps, extTasks)
	}
	for i, m := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		requiredTasksExtension(t, m, modernRequest(t, h, context.Background(), 10+i, m, `{}`, `{"taskId":"gate-test","inputResponses":{}}`))
	}
	requiredTasksExtension(t, "a tool requiring a task", modernRequest(t, h, context.Background(), 20, "tools/call", `{}`, `{"name":"fails","arguments":{}}`))
	res := result(t, modernRequest(t, h, context.Background(), 21, "tools/call", `{}`, `{"name":"slow","arguments":{"ms":400},"task":{"ttl":60000}}`))
	if res["resultType"] != "complete" || res["taskId"] != nil || res["content"] == nil {
		t.Errorf("a tool that may run as a task, without the extension: %v, want a complete tool result", res)
	}
	for i, m := range []string{"tasks/result", "tasks/list"} {
		if code := errCode(t, modernRequest(t, h, context.Background(), 30+i, m, tasksCaps, `{"taskId":"x"}`)); code != CodeMethodNotFound {
			t.Errorf("%s: code %d, want %d", m, code, CodeMethodNotFound)
		}
	}
}

// With the extension, a task-supporting tool that is still running after
// DefaultTaskAfter becomes a task: a flat CreateTaskResult, which tasks/get sees
// at once; a terminal tasks/get inlines the result (a tool error is
// completed with isError, a protocol error failed with the error); a quick
// call answers directly; tasks/cancel is an empty ack, also for an ended
// task; an unknown task is -32602; a task is another user's "not found".
func TestModernTaskLifecycle(t *testing.T) { forEachTaskStore(t, testModernTaskLifecycle) }

func testModernTaskLifecycle(t *testing.T, store taskStoreCase) {
	h, _ := modernTaskHarness(t, store, Options{Subject: func(ctx context.Context) string { s, _ := ctx.Value(subjectKey{}).(string); return s }})
	alice := context.WithValue(context.Background(), subjectKey{}, "alice")
	bob := context.WithValue(context.Background(), subjectKey{}, "bob")

	if res := result(t, modernRequest(t, h, alice, 1, "tools/call", tasksCaps, `{"name":"slow","arguments":{"ms":0}}`)); res["resultType"] != "complete" {
		t.Errorf("a quick call: %v, want it answered directly", res)
	}
	created := result(t, modernRequest(t, h, alice, 2, "tools/call", tasksCaps, `{"name":"slow","arguments":{"ms":700}}`))
	id, _ := created["taskId"].(string)
	if created["resultType"] != "task" || id == "" || created["status"] != taskWorking || created["task"] != nil || created["requestState"] != nil ||
		created["createdAt"] == nil || created["lastUpdatedAt"] == nil || created["ttlMs"] == nil || created["ttl"] != nil || created["pollInterval"] != nil {
		t.Fatalf("CreateTaskResult %v, want a flat task with resultType task", created)
	}
	if res := result(t, modernRequest(t, h, alice, 3, "tasks/get", tasksCaps, `{"taskId":"`+id+`"}`)); res["status"] != taskWorking || res["result"] != nil || res["resultType"] != "complete" {
		t.Errorf("tasks/get at once: %v, want working without result", res)
	}
	if code := errCode(t, modernRequest(t, h, bob, 4, "tasks/get", tasksCaps, `{"taskId":"`+id+`"}`)); code != CodeInvalidParams {
		t.Errorf("another user's task: code %d, want %d", code, CodeInvalidParams)
	}
	done := pollTask(t, h, alice, id, taskCompleted)
	inlined, _ := done["result"].(map[string]any)
	if done["status"] != taskCompleted || inlined == nil || !strings.Contains(fmt.Sprint(inlined["content"]), "slept") {
		t.Errorf("the completed task %v, want its result inlined", done)
	}
	if meta, _ := inlined["_meta"].(map[string]any); meta[relatedTaskKey] != nil {
		t.Errorf("inlined result carries %s: %v", relatedTaskKey, inlined)
	}

	id = result(t, modernRequest(t, h, alice, 5, "tools/call", tasksCaps, `{"name":"fails","arguments":{}}`))["taskId"].(string)
	if res := pollTask(t, h, alice, id, taskCompleted); res["status"] != taskCompleted || res["result"].(map[string]any)["isError"] != true {
		t.Errorf("a tool error: %v, want completed with isError", res)
	}
	id = result(t, modernRequest(t, h, alice, 6, "tools/call", tasksCaps, `{"name":"crash","arguments":{}}`))["taskId"].(string)
	res := pollTask(t, h, alice, id, taskFailed)
	if e, _ := res["error"].(map[string]any); res["status"] != taskFailed || res["result"] != nil || e == nil || !strings.Contains(fmt.Sprint(e["message"]), "crashed") {
		t.Errorf("a protocol error: %v, want failed with the error", res)
	}

	id = result(t, modernRequest(t, h, alice, 7, "tools/call", tasksCaps, `{"name":"slow","arguments":{"ms":60000}}`))["taskId"].(string)
	for i := range 2 {
		ack := result(t, modernRequest(t, h, alice, 8+i, "tasks/cancel", tasksCaps, `{"taskId":"`+id+`"}`))
		if ack["resultType"] != "complete" || ack["taskId"] != nil || ack["status"] != nil {
			t.Errorf("tasks/cancel #%d: %v, want an empty ack", i+1, ack)
		}
	}
	if res := result(t, modernRequest(t, h, alice, 10, "tasks/get", tasksCaps, `{"taskId":"`+id+`"}`)); res["status"] != taskCancelled {
		t.Errorf("after tasks/cancel: %v, want cancelled", res)
	}
	for i, m := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
		if code := errCode(t, modernRequest(t, h, alice, 11+i, m, tasksCaps, `{"taskId":"no-such-task","inputResponses":{}}`)); code != CodeInvalidParams {
			t.Errorf("%s of an unknown task: code %d, want %d", m, code, CodeInvalidParams)
		}
	}
}

// A task whose run asks the client waits in input_required with the
// questions; tasks/update may answer them one at a time (an empty ack,
// the answered key leaves inputRequests); once all are answered the run
// is replayed with the answers and completes.
func TestModernTaskInputByUpdate(t *testing.T) { forEachTaskStore(t, testModernTaskInputByUpdate) }

func testModernTaskInputByUpdate(t *testing.T, store taskStoreCase) {
	h, runs := modernTaskHarness(t, store, Options{})
	id := result(t, modernRequest(t, h, context.Background(), 1, "tools/call", tasksCaps, `{"name":"multi","arguments":{}}`))["taskId"].(string)
	res := pollTask(t, h, context.Background(), id, taskInputRequired)
	if reqs, _ := res["inputRequests"].(map[string]any); res["status"] != taskInputRequired || len(reqs) != 2 || reqs["first"] == nil || reqs["second"] == nil {
		t.Fatalf("tasks/get %v, want input_required asking first and second", res)
	}
	ack := result(t, modernRequest(t, h, context.Background(), 2, "tasks/update", tasksCaps, `{"taskId":"`+id+`","inputResponses":{"first":{"action":"accept","content":{"v":"a"}}}}`))
	if ack["resultType"] != "complete" || ack["status"] != nil {
		t.Errorf("tasks/update: %v, want an empty ack", ack)
	}
	res = result(t, modernRequest(t, h, context.Background(), 3, "tasks/get", tasksCaps, `{"taskId":"`+id+`"}`))
	if reqs, _ := res["inputRequests"].(map[string]any); res["status"] != taskInputRequired || len(reqs) != 1 || reqs["second"] == nil {
		t.Errorf("after a partial update: %v, want input_required asking second only", res)
	}
	result(t, modernRequest(t, h, context.Background(), 4, "tasks/update", tasksCaps, `{"taskId":"`+id+`","inputResponses":{"second":{"action":"accept","content":{"v":"b"}}}}`))
	res = pollTask(t, h, context.Background(), id, taskCompleted)
	if res["status"] != taskCompleted || !strings.Contains(fmt.Sprint(res["result"]), "a+b") {
		t.Errorf("after the answers: %v, want completed with a+b", res)
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("the tool ran %d times, want 2 (asked, then replayed with the answers)", n)
	}
}

// A call that asks first and works after answers input_required on its
// first round, without a task, and becomes a task on the retry, whose
// result holds the answer and whose envelope no requestState.
func TestModernTaskAfterAnInputRound(t *testing.T) {
	forEachTaskStore(t, testModernTaskAfterAnInputRound)
}

func testModernTaskAfterAnInputRound(t *testing.T, store taskStoreCase) {
	h, _ := modernTaskHarness(t, store, Options{})
	resp := modernRequest(t, h, context.Background(), 1, "tools/call", tasksCaps, `{"name":"intake","arguments":{}}`)
	reqs, state := inputRequired(t, resp)
	if result(t, resp)["taskId"] != nil || reqs["elicitation-1"] == nil {
		t.Fatalf("round 1: %v, want input_required asking elicitation-1, no task", resp)
	}
	raw, _ := json.Marshal(state)
	created := result(t, modernRequest(t, h, context.Background(), 2, "tools/call", tasksCaps,
		`{"name":"intake","arguments":{},"inputResponses":{"elicitation-1":{"action":"accept","content":{"name":"Ada"}}},"requestState":`+string(raw)+`}`))
	id, _ := created["taskId"].(string)
	if created["resultType"] != "task" || id == "" || created["requestState"] != nil {
		t.Fatalf("round 2: %v, want a CreateTaskResult without requestState", created)
	}
	if res := pollTask(t, h, context.Background(), id, taskCompleted); !strings.Contains(fmt.Sprint(res["result"]), "hello Ada") {
		t.Errorf("the task's result %v, want hello Ada", res)
	}
}

// Options.TaskAfter sets how long a call of a task-supporting tool runs as
// a plain request before it becomes a task.
func TestTaskAfterIsConfigurable(t *testing.T) { forEachTaskStore(t, testTaskAfterIsConfigurable) }

func testTaskAfterIsConfigurable(t *testing.T, store taskStoreCase) {
	patient, _ := modernTaskHarness(t, store, Options{TaskAfter: 5 * time.Second})
	if res := result(t, modernRequest(t, patient, context.Background(), 1, "tools/call", tasksCaps, `{"name":"slow","arguments":{"ms":600}}`)); res["resultType"] != "complete" {
		t.Errorf("a 600ms call with task_after 5s: %v, want it answered directly", res)
	}
	eager, _ := modernTaskHarness(t, store, Options{TaskAfter: 20 * time.Millisecond})
	created := result(t, modernRequest(t, eager, context.Background(), 1, "tools/call", tasksCaps, `{"name":"slow","arguments":{"ms":200}}`))
	if created["resultType"] != "task" {
		t.Fatalf("a 200ms call with task_after 20ms: %v, want a task", created)
	}
	pollTask(t, eager, context.Background(), created["taskId"].(string), taskCompleted)
}

// Tasks are bounded per user (the authenticated subject) and in all: a
// task beyond either bound is refused, naming the setting to raise, and
// one user at its bound leaves the others theirs.
func TestTasksAreBoundedPerUserAndInAll(t *testing.T) {
	forEachTaskStore(t, testTasksAreBoundedPerUserAndInAll)
}

func testTasksAreBoundedPerUserAndInAll(t *testing.T, store taskStoreCase) {
	h, _ := modernTaskHarness(t, store, Options{
		Subject:         func(ctx context.Context) string { s, _ := ctx.Value(subjectKey{}).(string); return s },
		MaxTasksPerUser: 2,
		MaxTasks:        3,
	})
	as := func(subject string) context.Context {
		return context.WithValue(context.Background(), subjectKey{}, subject)
	}
	id := 0
	start := func(ctx context.Context) map[string]any {
		id++
		return modernRequest(t, h, ctx, id, "tools/call", tasksCaps, `{"name":"slow","arguments":{"ms":60000}}`)
	}
	var tasks []struct {
		ctx context.Context
		id  string
	}
	defer func() {
		for _, task := range tasks {
			id++
			modernRequest(t, h, task.ctx, id, "tasks/cancel", tasksCaps, `{"taskId":"`+task.id+`"}`)
		}
	}()
	started := func(ctx context.Context) {
		t.Helper()
		res := result(t, start(ctx))
		if res["resultType"] != "task" {
			t.Fatalf("want a task, got %v", res)
		}
		tasks = append(tasks, struct {
			ctx context.Context
			id  string
		}{ctx, res["taskId"].(string)})
	}
	refused := func(ctx context.Context, setting string) {
		t.Helper()
		resp := start(ctx)
		if code := errCode(t, resp); code != CodeInternalError || !strings.Contains(fmt.Sprint(resp["error"]), "[server] "+setting+" ") {
			t.Errorf("a task beyond the bound: %v, want an error naming [server] %s", resp, setting)
		}
	}
	started(as("alice"))
	started(as("alice"))
	refused(as("alice"), "max_tasks_per_user")
	started(as("bob"))
	refused(as("carol"), "max_tasks")
	if res := result(t, modernRequest(t, h, as("carol"), 99, "tools/call", tasksCaps, `{"name":"slow","arguments":{"ms":0}}`)); res["resultType"] != "complete" {
		t.Errorf("a quick call at the bound: %v, want it answered", res)
	}
}
