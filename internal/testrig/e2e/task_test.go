package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/mcphost/mcphost/internal/testrig/testenv"
)

// These tests drive MCP tasks (2025-11-25) through a real server, over
// stdio and Streamable HTTP, with raw JSON-RPC: the hostile plugin's slow
// tool as a long task, the conformance plugin's elicitation tool for
// input_required.

const taskConfig = `
[plugins.hostile]
max_instances = 1
timeout = "60s"
task_support = { "*" = "optional", "ok" = "forbidden" }

[plugins.conformance]
host_functions = ["create_elicitation", "create_message", "notify_logging_message", "notify_progress", "notify_prompt_list_changed", "notify_tool_list_changed", "request_input"]
task_support = { "test_elicitation" = "required" }
`

var taskPlugins = []string{"internal/testrig/testplugins/hostile", "plugins/conformance"}

const relatedTask = "io.modelcontextprotocol/related-task"

// jsonrpc is a raw JSON-RPC peer: it sends messages and reads what the
// server sends, in order.
type jsonrpc interface {
	// request sends a request and returns the messages that answer it: its
	// response last (on stdio: every message read until it).
	request(t *testing.T, id int, method string, params any) []map[string]any
	// send sends a message that gets no response (a notification or a
	// response to the server).
	send(t *testing.T, msg string)
}

// response returns the last of msgs: the response.
func response(t *testing.T, msgs []map[string]any) map[string]any {
	t.Helper()
	if len(msgs) == 0 {
		t.Fatal("no response")
	}
	return msgs[len(msgs)-1]
}

func resultOf(t *testing.T, msgs []map[string]any) map[string]any {
	t.Helper()
	m := response(t, msgs)
	r, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("want a result, got %v", m)
	}
	return r
}

func codeOf(t *testing.T, msgs []map[string]any) int {
	t.Helper()
	m := response(t, msgs)
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("want an error, got %v", m)
	}
	return int(e["code"].(float64))
}

func metaTask(m map[string]any) any {
	meta, _ := m["_meta"].(map[string]any)
	rt, _ := meta[relatedTask].(map[string]any)
	return rt["taskId"]
}

// stdioPeer speaks JSON-RPC lines to a server process.
type stdioPeer struct {
	s     *rawSession
	lines chan map[string]any
}

func newStdioPeer(t *testing.T, f fixture) *stdioPeer {
	s := startRaw(t, f)
	p := &stdioPeer{s: s, lines: make(chan map[string]any, 100)}
	go func() {
		for s.out.Scan() {
			var m map[string]any
			if err := json.Unmarshal(s.out.Bytes(), &m); err != nil {
				m = map[string]any{"nonJSON": s.out.Text()}
			}
			p.lines <- m
		}
		close(p.lines)
	}()
	return p
}

func (p *stdioPeer) send(t *testing.T, msg string) {
	t.Helper()
	if _, err := io.WriteString(p.s.in, msg+"\n"); err != nil {
		t.Fatal(err)
	}
}

// read returns the next message, failing after 20 s.
func (p *stdioPeer) read(t *testing.T) map[string]any {
	t.Helper()
	select {
	case m, ok := <-p.lines:
		if !ok {
			t.Fatal("the server closed stdout")
		}
		if m["nonJSON"] != nil {
			t.Fatalf("stdout carried a non-JSON line %q", m["nonJSON"])
		}
		return m
	case <-time.After(20 * time.Second):
		t.Fatal("no message from the server within 20s")
	}
	return nil
}

func (p *stdioPeer) request(t *testing.T, id int, method string, params any) []map[string]any {
	t.Helper()
	raw, _ := json.Marshal(params)
	p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, raw))
	var msgs []map[string]any
	for {
		m := p.read(t)
		msgs = append(msgs, m)
		if _, isMessage := m["method"]; !isMessage && fmt.Sprint(m["id"]) == fmt.Sprint(id) {
			return msgs
		}
	}
}

// httpPeer speaks raw Streamable HTTP to a server: one POST per message.
type httpPeer struct {
	url, session, token string
}

func (p *httpPeer) post(t *testing.T, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, p.url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if p.session != "" {
		req.Header.Set("Mcp-Session-Id", p.session)
	}
	if p.token != "" {
		req.Header.Set("Authorization", "Bearer "+p.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func (p *httpPeer) send(t *testing.T, msg string) {
	t.Helper()
	resp := p.post(t, msg)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST %s: %s", msg, resp.Status)
	}
}

func (p *httpPeer) request(t *testing.T, id int, method string, params any) []map[string]any {
	t.Helper()
	return p.stream(t, id, method, params, nil)
}

// stream sends a request and reads its answer: one JSON body, or an SSE
// stream whose messages it hands to each (if not nil) as they come.
func (p *httpPeer) stream(t *testing.T, id int, method string, params any, each func(map[string]any)) []map[string]any {
	t.Helper()
	raw, _ := json.Marshal(params)
	resp := p.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, raw))
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s: %s %s", method, resp.Status, body)
	}
	if p.session == "" {
		p.session = resp.Header.Get("Mcp-Session-Id")
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatal(err)
		}
		return []map[string]any{m}
	}
	var msgs []map[string]any
	err := readSSE(resp.Body, func(m map[string]any) bool {
		msgs = append(msgs, m)
		if each != nil {
			each(m)
		}
		_, isMessage := m["method"]
		return !isMessage && fmt.Sprint(m["id"]) == fmt.Sprint(id)
	})
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return msgs
}

// readSSE hands the JSON-RPC messages of an SSE stream to each as they
// come, until each returns true (nil) or the stream ends (an error).
func readSSE(r io.Reader, each func(map[string]any) (done bool)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	var data bytes.Buffer
	for sc.Scan() {
		line := sc.Text()
		if d, ok := strings.CutPrefix(line, "data:"); ok {
			data.WriteString(strings.TrimPrefix(d, " "))
			continue
		}
		if line != "" || data.Len() == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(data.Bytes(), &m); err != nil {
			return fmt.Errorf("SSE data %q: %v", data.String(), err)
		}
		data.Reset()
		if each(m) {
			return nil
		}
	}
	return fmt.Errorf("the stream ended without the response: %v", sc.Err())
}

func initTasks(t *testing.T, p jsonrpc) map[string]any {
	t.Helper()
	res := resultOf(t, p.request(t, 0, "initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    map[string]any{"elicitation": map[string]any{"form": map[string]any{}}},
		"clientInfo":      map[string]any{"name": "raw-tasks", "version": "1"},
	}))
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return res
}

// ids numbers the requests of a test.
type ids struct{ n int }

func (i *ids) next() int { i.n++; return i.n }

// pollStatus polls tasks/get until the task has the status.
func pollStatus(t *testing.T, p jsonrpc, id *ids, taskID, status string) map[string]any {
	t.Helper()
	var got map[string]any
	if !poll.Within(20*time.Second, func() bool {
		got = resultOf(t, p.request(t, id.next(), "tasks/get", map[string]any{"taskId": taskID}))
		return got["status"] == status
	}) {
		t.Fatalf("task %v, want status %s", got, status)
	}
	return got
}

func createdTask(t *testing.T, msgs []map[string]any) string {
	t.Helper()
	res := resultOf(t, msgs)
	task, _ := res["task"].(map[string]any)
	id, _ := task["taskId"].(string)
	if id == "" || task["status"] != "working" {
		t.Fatalf("want a CreateTaskResult, got %v", res)
	}
	return id
}

// checkTasks runs the task scenarios shared by both transports.
func checkTasks(t *testing.T, p jsonrpc, elicit func(taskID string, id *ids) map[string]any) {
	id := &ids{}
	caps := initTasks(t, p)["capabilities"].(map[string]any)
	tasks, _ := caps["tasks"].(map[string]any)
	if tasks["list"] == nil || tasks["cancel"] == nil || tasks["requests"].(map[string]any)["tools"].(map[string]any)["call"] == nil {
		t.Fatalf("capabilities %v lack tasks", caps)
	}
	execution := map[string]any{}
	for cursor := ""; ; {
		page := resultOf(t, p.request(t, id.next(), "tools/list", map[string]any{"cursor": cursor}))
		for _, tl := range page["tools"].([]any) {
			tool := tl.(map[string]any)
			execution[tool["name"].(string)] = tool["execution"]
		}
		if cursor, _ = page["nextCursor"].(string); cursor == "" {
			break
		}
	}
	for name, want := range map[string]string{"slow": "optional", "ok": "", "test_elicitation": "required", "test_simple_text": ""} {
		x, _ := execution[name].(map[string]any)
		if got, _ := x["taskSupport"].(string); got != want {
			t.Errorf("%s: execution %v, want taskSupport %q", name, execution[name], want)
		}
	}

	// A task runs in the background; tasks/result waits for its outcome.
	start := time.Now()
	quick := createdTask(t, p.request(t, id.next(), "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"millis": 300}, "task": map[string]any{"ttl": 60000}}))
	if time.Since(start) > 250*time.Millisecond {
		t.Errorf("the CreateTaskResult took %v: not at once", time.Since(start))
	}
	done := resultOf(t, p.request(t, id.next(), "tasks/result", map[string]any{"taskId": quick}))
	if text := done["content"].([]any)[0].(map[string]any)["text"]; text != "done" || metaTask(done) != quick {
		t.Fatalf("tasks/result %v", done)
	}
	if got := pollStatus(t, p, id, quick, "completed"); got["ttl"] != float64(60000) || got["pollInterval"] == nil {
		t.Errorf("tasks/get %v", got)
	}

	// tasks/cancel interrupts the plugin: with one instance, the next call
	// would otherwise wait 50 s for it.
	slow := createdTask(t, p.request(t, id.next(), "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"millis": 50000}, "task": map[string]any{}}))
	pollStatus(t, p, id, slow, "working")
	listed := resultOf(t, p.request(t, id.next(), "tasks/list", nil))
	if n := len(listed["tasks"].([]any)); n != 2 {
		t.Errorf("tasks/list %v, want 2 tasks", listed)
	}
	cancelled := resultOf(t, p.request(t, id.next(), "tasks/cancel", map[string]any{"taskId": slow}))
	if cancelled["status"] != "cancelled" {
		t.Fatalf("tasks/cancel %v", cancelled)
	}
	start = time.Now()
	if res := resultOf(t, p.request(t, id.next(), "tools/call", map[string]any{"name": "ok", "arguments": map[string]any{}})); res["content"].([]any)[0].(map[string]any)["text"] != "ok" {
		t.Fatalf("ok after the cancel: %v", res)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("the call after tasks/cancel took %v: the plugin went on", d)
	}
	t.Logf("a call after tasks/cancel answered in %v", time.Since(start).Round(time.Millisecond))
	if code := codeOf(t, p.request(t, id.next(), "tasks/cancel", map[string]any{"taskId": slow})); code != -32602 {
		t.Errorf("cancelling a cancelled task: code %d", code)
	}

	// The spec's errors.
	for _, c := range []struct {
		method string
		params map[string]any
		code   int
	}{
		{"tools/call", map[string]any{"name": "ok", "task": map[string]any{}}, -32601},
		{"tools/call", map[string]any{"name": "test_elicitation", "arguments": map[string]any{"message": "x"}}, -32601},
		{"tasks/get", map[string]any{"taskId": "no-such-task"}, -32602},
		{"tasks/result", map[string]any{"taskId": "no-such-task"}, -32602},
		{"tasks/cancel", map[string]any{"taskId": quick}, -32602},
		{"tasks/list", map[string]any{"cursor": "bogus"}, -32602},
	} {
		if code := codeOf(t, p.request(t, id.next(), c.method, c.params)); code != c.code {
			t.Errorf("%s %v: code %d, want %d", c.method, c.params, code, c.code)
		}
	}

	// input_required while the plugin's elicitation waits for the client.
	asking := createdTask(t, p.request(t, id.next(), "tools/call", map[string]any{"name": "test_elicitation", "arguments": map[string]any{"message": "Who are you?"}, "task": map[string]any{}}))
	pollStatus(t, p, id, asking, "input_required")
	answer := elicit(asking, id)
	if text := answer["content"].([]any)[0].(map[string]any)["text"].(string); !strings.Contains(text, "action=accept") || !strings.Contains(text, "Ada") || metaTask(answer) != asking {
		t.Fatalf("tasks/result after the elicitation: %v", answer)
	}
	pollStatus(t, p, id, asking, "completed")

	// The ttl drops a task and its result.
	short := createdTask(t, p.request(t, id.next(), "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"millis": 1}, "task": map[string]any{"ttl": 300}}))
	var expired []map[string]any // once the ttl has passed
	if !poll.Within(20*time.Second, func() bool {
		expired = p.request(t, id.next(), "tasks/get", map[string]any{"taskId": short})
		return response(t, expired)["error"] != nil
	}) || codeOf(t, expired) != -32602 {
		t.Errorf("tasks/get after the ttl: %v", expired)
	}
}

// answerTaskElicitation calls tasks/result for the conformance plugin's
// elicitation task over Streamable HTTP: its SSE stream carries the
// elicitation, answered in a POST of its own, then the task's outcome,
// whose result it returns.
func answerTaskElicitation(t *testing.T, p *httpPeer, taskID string, id *ids) map[string]any {
	t.Helper()
	msgs := p.stream(t, id.next(), "tasks/result", map[string]any{"taskId": taskID}, func(m map[string]any) {
		answerElicitation(t, p, taskID, m)
	})
	return resultOf(t, msgs)
}

// answerElicitation answers m with elicitationAnswer through p when it is
// an elicitation/create, which must name the task taskID as its related
// task, and reports whether it was one.
func answerElicitation(t *testing.T, p jsonrpc, taskID string, m map[string]any) bool {
	t.Helper()
	if m["method"] != "elicitation/create" {
		return false
	}
	if metaTask(m["params"].(map[string]any)) != taskID {
		t.Errorf("elicitation without the related task: %v", m)
	}
	ask, _ := json.Marshal(m["id"])
	p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, ask, elicitationAnswer))
	return true
}

// elicitationAnswer is the client's answer to the conformance plugin's
// elicitation.
const elicitationAnswer = `{"action":"accept","content":{"username":"Ada","email":"ada@example.com"}}`

func TestTasksOverStdio(t *testing.T) {
	start := time.Now()
	p := newStdioPeer(t, newFixture(t, taskConfig, taskPlugins...))
	checkTasks(t, p, func(taskID string, id *ids) map[string]any {
		// The elicitation waits for tasks/result; it arrives before the
		// response, which waits for the answer.
		rid := id.next()
		p.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tasks/result","params":{"taskId":%q}}`, rid, taskID))
		for !answerElicitation(t, p, taskID, p.read(t)) {
		}
		for {
			if m := p.read(t); m["method"] == nil && fmt.Sprint(m["id"]) == fmt.Sprint(rid) {
				return m["result"].(map[string]any)
			}
		}
	})
	t.Logf("stdio task scenarios took %v", time.Since(start).Round(time.Millisecond))
}

func TestTasksOverStreamableHTTP(t *testing.T) {
	start := time.Now()
	url := newFixture(t, taskConfig, taskPlugins...).serveHTTP(t)
	p := &httpPeer{url: url}
	checkTasks(t, p, func(taskID string, id *ids) map[string]any { return answerTaskElicitation(t, p, taskID, id) })

	// tasks/get answers with JSON, not a stream.
	resp := p.post(t, `{"jsonrpc":"2.0","id":900,"method":"tasks/list"}`)
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("tasks/list answered with %s", ct)
	}

	// Without authentication a task is bound to its session.
	mine := createdTask(t, p.request(t, 901, "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"millis": 1}, "task": map[string]any{}}))
	other := &httpPeer{url: url}
	initTasks(t, other)
	for i, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		if code := codeOf(t, other.request(t, 10+i, method, map[string]any{"taskId": mine})); code != -32602 {
			t.Errorf("%s of another session's task: code %d", method, code)
		}
	}
	if tasks := resultOf(t, other.request(t, 20, "tasks/list", nil))["tasks"].([]any); len(tasks) != 0 {
		t.Errorf("another session lists %v", tasks)
	}
	t.Logf("HTTP task scenarios took %v", time.Since(start).Round(time.Millisecond))
}

func TestTasksFollowTheAuthenticatedSubject(t *testing.T) {
	const token = "e2e-task-token-0123456789"
	t.Setenv("MCPHOST_E2E_TOKEN", token)
	url := newFixture(t, taskConfig+"[auth]\nmode = \"bearer\"\ntoken_env = \"MCPHOST_E2E_TOKEN\"\n", taskPlugins...).serveHTTP(t)
	a, b := &httpPeer{url: url, token: token}, &httpPeer{url: url, token: token}
	initTasks(t, a)
	initTasks(t, b)
	id := createdTask(t, a.request(t, 1, "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"millis": 1}, "task": map[string]any{}}))
	// With authentication a task is bound to the subject: another session
	// of the same subject reaches it.
	if got := resultOf(t, b.request(t, 2, "tasks/result", map[string]any{"taskId": id})); metaTask(got) != id {
		t.Fatalf("tasks/result from another session of the subject: %v", got)
	}
	if tasks := resultOf(t, b.request(t, 3, "tasks/list", nil))["tasks"].([]any); len(tasks) != 1 {
		t.Errorf("tasks/list from another session of the subject: %v", tasks)
	}
}

func TestTypeScriptClientTasksInterop(t *testing.T) {
	node := nodeBinary()
	_, sdkErr := os.Stat(filepath.Join(tsClientDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json"))
	if node == "" || sdkErr != nil {
		testenv.Missing(t, "TypeScript SDK interop needs Node and the SDK (scripts/setup.sh installs them): node=%q sdk: %v", node, sdkErr)
	}
	url := newFixture(t, taskConfig, taskPlugins...).serveHTTP(t)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(tsClientDir, "tasks.mjs"), url)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("TypeScript client: %v\n%s", err, stderr.String())
	}
	var got struct {
		Slow      []string       `json:"slow"`
		SlowText  string         `json:"slowText"`
		Ask       []string       `json:"ask"`
		AskText   string         `json:"askText"`
		Elicited  map[string]any `json:"elicited"`
		Cancelled string         `json:"cancelled"`
		Listed    int            `json:"listed"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client output %q: %v", out, err)
	}
	if len(got.Slow) < 2 || got.Slow[0] != "taskCreated" || got.Slow[len(got.Slow)-1] != "result" || got.SlowText != "done" {
		t.Errorf("callToolStream(slow): %s", out)
	}
	if len(got.Ask) == 0 || got.Ask[len(got.Ask)-1] != "result" || !strings.Contains(got.AskText, "action=accept") || got.Elicited[relatedTask] == nil {
		t.Errorf("callToolStream(test_elicitation): %s", out)
	}
	if got.Cancelled != "cancelled" || got.Listed < 3 {
		t.Errorf("cancelTask/listTasks: %s", out)
	}
	t.Logf("TypeScript task scenarios took %v: %s", time.Since(start).Round(time.Millisecond), out)
}
