package host

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mcphost/mcphost/abi"
)

// Tasks (MCP 2025-11-25, experimental): a tools/call whose params carry a
// task answers at once with a CreateTaskResult and runs in the background;
// the client polls tasks/get, takes the outcome with tasks/result, lists
// its tasks with tasks/list and stops one with tasks/cancel. Sessions on
// older versions never see tasks: their task params are ignored and the
// tasks/ methods do not exist for them.
//
// A task's run is the tool call as it would run directly, with a context
// detached from the tools/call request (notifications/cancelled naming that
// request does not stop it) but cancelled by tasks/cancel, by the end of its
// ttl and by the end of its session, and bounded by the plugin's timeout.
// Its outcome is kept for tasks/result: exactly the response the call would
// have had, a result with the related-task _meta added or a JSON-RPC error.
//
// What the run sends the client carries the related-task _meta. Its
// requests (elicitation, sampling, roots) put the task in input_required
// until answered; they are delivered on the stream of a tasks/result of the
// task: at once when one is waiting, else queued until one comes, as the
// spec's input_required flow has it (the client sees input_required with
// tasks/get and calls tasks/result). Its notifications (progress, logging)
// go to a waiting tasks/result too, else to the session's own stream (the
// standalone stream on HTTP). notifications/tasks/status announces each
// status change after creation, on the same way.
//
// Task ids are 192 random bits. A task is bound to the session that created
// it or, when the HTTP transport authenticates requests, to the subject of
// the token: a task of another session or subject is "not found". A task
// is as visible as the plugin that runs it (visibility.go): to a request
// that does not see the plugin, it is "not found" too.

const (
	// relatedTaskKey is the _meta key that ties a message to its task.
	relatedTaskKey = "io.modelcontextprotocol/related-task"

	taskWorking       = "working"
	taskInputRequired = "input_required"
	taskCompleted     = "completed"
	taskFailed        = "failed"
	taskCancelled     = "cancelled"

	// Defaults of the taskStore limits.
	defaultTaskTTL          = 10 * time.Minute
	defaultMaxTaskTTL       = time.Hour
	defaultTaskPollInterval = time.Second

	maxTaskQueue         = 64  // requests to the client queued for a tasks/result
	maxTaskStatusMessage = 256 // characters of a tool's error text in statusMessage
	taskIDBytes          = 24
)

// taskCapabilities is the server's tasks capability: tasks/list,
// tasks/cancel and task-augmented tools/call.
func taskCapabilities() map[string]any {
	return map[string]any{
		"list":     map[string]any{},
		"cancel":   map[string]any{},
		"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}},
	}
}

// taskSupport is the tool's execution.taskSupport as served: the config's
// task_support entry for the tool, else its "*" entry, else what the
// plugin declares, else forbidden. A value MCP does not define counts as
// forbidden.
func (e *toolEntry) taskSupport() string {
	if v, ok := e.plugin.taskSupport[e.original]; ok {
		return v
	}
	if v, ok := e.plugin.taskSupport["*"]; ok {
		return v
	}
	if x := e.tool.Execution; x != nil && (x.TaskSupport == abi.TaskOptional || x.TaskSupport == abi.TaskRequired) {
		return x.TaskSupport
	}
	return abi.TaskForbidden
}

// withTaskSupport returns the tool as listed: with execution.taskSupport
// when tasks are allowed, without execution when they are forbidden (the
// default).
func withTaskSupport(e *toolEntry) abi.Tool {
	t := e.tool
	t.Execution = nil
	if ts := e.taskSupport(); ts != abi.TaskForbidden {
		t.Execution = &abi.ToolExecution{TaskSupport: ts}
	}
	return t
}

// taskParams is the task a request asks for.
type taskParams struct {
	// TTL is the lifetime asked for, in milliseconds from creation.
	TTL *float64 `json:"ttl"`
}

// toolTask applies the task rules to a tools/call: it returns the task the
// call asks for, nil to run the call directly, or the error the spec names
// for a task the tool forbids or a call without one the tool requires.
func toolTask(req *request, e *toolEntry, task *taskParams) (*taskParams, error) {
	if !atLeast(req.version(), Version20251125) {
		// No tasks before 2025-11-25: any task params are ignored.
		return nil, nil
	}
	switch ts := e.taskSupport(); {
	case task != nil && ts == abi.TaskForbidden:
		return nil, rpcErrorf(CodeMethodNotFound, "tool %q does not support task-augmented calls (its execution.taskSupport is %q)", e.tool.Name, ts)
	case task == nil && ts == abi.TaskRequired:
		return nil, rpcErrorf(CodeMethodNotFound, "Task augmentation required for tools/call requests to tool %q (its execution.taskSupport is %q): add \"task\" to the params", e.tool.Name, ts)
	}
	return task, nil
}

// taskInfo is a task as the protocol shows it (Task).
type taskInfo struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           int64  `json:"ttl"` // milliseconds; mcphost never keeps a task without limit
	PollInterval  int64  `json:"pollInterval,omitempty"`
}

type createTaskResult struct {
	Task taskInfo `json:"task"`
}

type listTasksResult struct {
	Tasks      []taskInfo `json:"tasks"`
	NextCursor string     `json:"nextCursor,omitempty"`
}

// task is one task-augmented request.
type task struct {
	id      string
	seq     uint64  // creation order in the store, for tasks/list
	what    string  // the request, for logs
	plugin  *Plugin // runs it: only requests that see it see the task
	sess    *Session
	subject string // the authenticated subject of the creating request, if any
	created time.Time
	ttl     time.Duration
	poll    time.Duration
	cancel  context.CancelFunc // interrupts the run
	done    chan struct{}      // closed once the status is terminal

	mu          sync.Mutex
	expiry      *time.Timer // drops the task when its ttl has elapsed
	stopOnClose func() bool // stops dropping it when its session ends
	status      string
	message     string
	updated     time.Time
	result      json.RawMessage // the outcome: a result...
	err         *RPCError       // ...or an error
	clientCalls int             // requests to the client awaiting answers
	queue       []queuedRequest // requests to the client waiting for a tasks/result
	waiters     []*waiter       // the tasks/result requests waiting, oldest first

	// modern is set for a task of the 2026-07-28 tasks extension
	// (moderntask.go); the rest serves only those.
	modern  bool
	pending map[string]pendingQuestion // the questions of input_required, by key
	answers map[string]recordedAnswer  // the answers given so far, by key
	rerun   func(*inputRound)          // replays the run with the answers
}

// waiter is a tasks/result request waiting for its task.
type waiter struct{ reply Outbound }

type queuedRequest struct {
	id  string
	msg []byte
}

func isTerminal(status string) bool {
	return status == taskCompleted || status == taskFailed || status == taskCancelled
}

// visibleTo reports whether the requester, a session and an authenticated
// subject looking through v, may see the task: v must see the task's
// plugin and, with authentication, the task's subject must be the
// requester's; without, the session must be the task's.
func (t *task) visibleTo(c *conn, subject string, v view) bool {
	if !v.sees(t.plugin) {
		return false
	}
	if t.subject != "" || subject != "" || t.modern {
		return t.subject == subject
	}
	return t.sess.conn == c
}

func (t *task) info() taskInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.infoLocked()
}

func (t *task) infoLocked() taskInfo {
	return taskInfo{
		TaskID:        t.id,
		Status:        t.status,
		StatusMessage: t.message,
		CreatedAt:     timestamp(t.created),
		LastUpdatedAt: timestamp(t.updated),
		TTL:           t.ttl.Milliseconds(),
		PollInterval:  t.poll.Milliseconds(),
	}
}

func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// setStatusLocked moves the task to status and returns what to announce.
func (t *task) setStatusLocked(status, message string) taskInfo {
	t.status, t.message, t.updated = status, message, time.Now()
	return t.infoLocked()
}

// end moves the task to a terminal status with its outcome, announcing it
// when notify is set, unless it is terminal already. It reports whether it
// did, and the status the task has.
func (t *task) end(status, message string, result json.RawMessage, rpcErr *RPCError, notify bool) (bool, string) {
	t.mu.Lock()
	if isTerminal(t.status) {
		defer t.mu.Unlock()
		return false, t.status
	}
	info := t.setStatusLocked(status, message)
	t.result, t.err = result, rpcErr
	t.mu.Unlock()
	if notify {
		t.announce(info)
	}
	close(t.done)
	t.sess.srv.logger.Info("task ended", "request", t.what, "status", status, "subject", t.subject, "after", time.Since(t.created).Round(time.Millisecond))
	return true, status
}

// finish records the outcome of the task's run. A task cancelled or expired
// meanwhile keeps its status.
func (t *task) finish(res any, err error) {
	if t.modern {
		t.finishModern(res, err)
		return
	}
	if err != nil {
		rpcErr := toRPCError(err)
		t.end(taskFailed, rpcErr.Message, nil, rpcErr, true)
		return
	}
	raw, err := withRelatedTask(res, t.id)
	if err != nil {
		rpcErr := rpcErrorf(CodeInternalError, "internal error: encoding result: %v", err)
		t.end(taskFailed, rpcErr.Message, nil, rpcErr, true)
		return
	}
	if r, ok := res.(*abi.CallToolResult); ok && r.IsError {
		t.end(taskFailed, errorText(r), raw, nil, true)
		return
	}
	t.end(taskCompleted, "", raw, nil, true)
}

// errorText is the statusMessage of a failed tool call: the start of its
// first text content.
func errorText(r *abi.CallToolResult) string {
	for _, c := range r.Content {
		if c.Type != abi.ContentText {
			continue
		}
		s := c.Text
		if utf8.RuneCountInString(s) > maxTaskStatusMessage {
			s = string([]rune(s)[:maxTaskStatusMessage]) + "…"
		}
		return s
	}
	return "the tool reported an error"
}

// withRelatedTask encodes a result with the related-task _meta added.
func withRelatedTask(res any, id string) (json.RawMessage, error) {
	raw, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	return addRelatedTask(raw, id)
}

// addRelatedTask adds the related-task key to the _meta of a JSON object.
func addRelatedTask(obj json.RawMessage, id string) (json.RawMessage, error) {
	fields := map[string]json.RawMessage{}
	if len(obj) > 0 && string(obj) != "null" {
		if err := json.Unmarshal(obj, &fields); err != nil {
			return nil, err
		}
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := fields["_meta"]; ok {
		if err := json.Unmarshal(raw, &meta); err != nil || meta == nil {
			meta = map[string]json.RawMessage{}
		}
	}
	var err error
	if meta[relatedTaskKey], err = json.Marshal(map[string]string{"taskId": id}); err != nil {
		return nil, err
	}
	if fields["_meta"], err = json.Marshal(meta); err != nil {
		return nil, err
	}
	return json.Marshal(fields)
}

// announce sends notifications/tasks/status with the task as it is now.
// (The spec asks not to add the related-task _meta to it.)
func (t *task) announce(info taskInfo) {
	_ = t.route(encodeNotification("notifications/tasks/status", info))
}

// route sends a message about the task to the newest tasks/result waiting
// for it, else to the session's own stream.
func (t *task) route(msg []byte) error {
	t.mu.Lock()
	out := t.sess.out
	if n := len(t.waiters); n > 0 {
		out = t.waiters[n-1].reply
	}
	t.mu.Unlock()
	return out.Send(msg)
}

// taskOutbound carries what a task's run sends the client: it adds the
// related-task _meta and delivers requests through tasks/result.
type taskOutbound struct{ t *task }

// clientCallTracker is told when a request to the client starts, and
// (through the function returned) when it ends; callClient tells a reply
// that implements it.
type clientCallTracker interface {
	clientCallStarted(method string) func()
}

func (o *taskOutbound) Send(msg []byte) error {
	t := o.t
	var m message
	if err := json.Unmarshal(msg, &m); err != nil || m.Method == "" {
		return t.route(msg)
	}
	if m.Method == "notifications/cancelled" {
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(m.Params, &p) == nil && t.unqueue(p.RequestID) {
			return nil // the request never left: nothing to cancel
		}
	}
	params, err := addRelatedTask(m.Params, t.id)
	if err != nil {
		return err
	}
	m.Params = params
	if msg, err = json.Marshal(m); err != nil {
		return err
	}
	if m.ID == nil {
		return t.route(msg)
	}
	t.mu.Lock()
	if n := len(t.waiters); n > 0 {
		w := t.waiters[n-1]
		t.mu.Unlock()
		return w.reply.Send(msg)
	}
	defer t.mu.Unlock()
	switch {
	case isTerminal(t.status):
		return errors.New("the task has ended")
	case len(t.queue) >= maxTaskQueue:
		return fmt.Errorf("the task has %d requests to the client waiting for a tasks/result already", maxTaskQueue)
	}
	t.queue = append(t.queue, queuedRequest{id: string(m.ID), msg: msg})
	return nil
}

// cancellations routes the cancellation of a task's request to the client
// through the task: a request still queued is dropped instead.
func (o *taskOutbound) cancellations() Outbound { return o }

// unqueue drops a queued request, reporting whether it was queued.
func (t *task) unqueue(id json.RawMessage) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	i := slices.IndexFunc(t.queue, func(q queuedRequest) bool { return q.id == string(id) })
	if i < 0 {
		return false
	}
	t.queue = slices.Delete(t.queue, i, i+1)
	return true
}

// clientCallStarted puts the task in input_required while requests to the
// client await answers, and back to working once none does.
func (o *taskOutbound) clientCallStarted(method string) func() {
	t := o.t
	t.mu.Lock()
	t.clientCalls++
	var changed *taskInfo
	if t.clientCalls == 1 && t.status == taskWorking {
		info := t.setStatusLocked(taskInputRequired, "The task waits for the client's answer to "+method+": call tasks/result to receive the request.")
		changed = &info
	}
	t.mu.Unlock()
	if changed != nil {
		t.announce(*changed)
	}
	return func() {
		t.mu.Lock()
		t.clientCalls--
		var changed *taskInfo
		if t.clientCalls == 0 && t.status == taskInputRequired {
			info := t.setStatusLocked(taskWorking, "")
			changed = &info
		}
		t.mu.Unlock()
		if changed != nil {
			t.announce(*changed)
		}
	}
}

// The bounds of the tasks a server holds at once, unless Options say.
const (
	DefaultMaxTasks        = 1000 // of all users
	DefaultMaxTasksPerUser = 100  // of one user
)

// taskStore holds a server's tasks, by id.
type taskStore struct {
	// Limits; zero values take the defaults (Options and tests set them).
	defaultTTL, maxTTL, pollInterval time.Duration
	maxTasks, maxPerUser             int

	mu      sync.Mutex
	tasks   map[string]*task
	perUser map[taskUser]int
	seq     uint64
}

// taskUser is whom a task counts against: its authenticated subject, or
// without one its session (a legacy session, or the one owner of every
// 2026-07-28 task).
type taskUser struct {
	subject string
	sess    *Session
}

func (t *task) user() taskUser {
	if t.subject != "" {
		return taskUser{subject: t.subject}
	}
	return taskUser{sess: t.sess}
}

// userHolds says, in an error, that the user of t holds n tasks.
func (t *task) userHolds(n int) string {
	switch {
	case t.subject != "":
		return fmt.Sprintf("user %q holds %d tasks", t.subject, n)
	case t.modern:
		return fmt.Sprintf("the unauthenticated 2026-07-28 requests hold %d tasks together", n)
	}
	return fmt.Sprintf("this session holds %d tasks", n)
}

func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// ttl returns the lifetime of a task that asks for p: the one asked for,
// within the maximum, or the default.
func (s *taskStore) ttl(p *taskParams) time.Duration {
	def, limit := orDefault(s.defaultTTL, defaultTaskTTL), orDefault(s.maxTTL, defaultMaxTaskTTL)
	switch {
	case p.TTL == nil || *p.TTL <= 0:
		return min(def, limit)
	case *p.TTL >= float64(limit.Milliseconds()):
		return limit
	}
	return max(time.Duration(*p.TTL)*time.Millisecond, time.Millisecond)
}

// add takes a task, unless its user or the server holds the most tasks
// they may.
func (s *taskStore) add(t *task) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tasks == nil {
		s.tasks, s.perUser = map[string]*task{}, map[taskUser]int{}
	}
	user := t.user()
	if limit := orDefault(s.maxPerUser, DefaultMaxTasksPerUser); s.perUser[user] >= limit {
		return rpcErrorf(CodeInternalError, "too many tasks: %s, the most [server] max_tasks_per_user allows; wait for some to end and expire", t.userHolds(limit))
	}
	if limit := orDefault(s.maxTasks, DefaultMaxTasks); len(s.tasks) >= limit {
		return rpcErrorf(CodeInternalError, "server busy: the server holds %d tasks, the most [server] max_tasks allows; retry once some end and expire", limit)
	}
	s.seq++
	t.seq = s.seq
	s.tasks[t.id] = t
	s.perUser[user]++
	return nil
}

// remove drops a task and its outcome; the task stays cancelled if it ran.
func (s *taskStore) remove(t *task) {
	s.mu.Lock()
	if s.tasks[t.id] != t {
		s.mu.Unlock()
		return
	}
	delete(s.tasks, t.id)
	user := t.user()
	if s.perUser[user]--; s.perUser[user] <= 0 {
		delete(s.perUser, user)
	}
	s.mu.Unlock()
	t.mu.Lock()
	expiry, stop := t.expiry, t.stopOnClose
	t.mu.Unlock()
	if expiry != nil {
		expiry.Stop()
	}
	if stop != nil {
		stop()
	}
}

func (s *taskStore) get(id string) *task {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tasks[id]
}

// visible returns the tasks the requester may see created after seq, in
// order of creation.
func (s *taskStore) visible(c *conn, subject string, v view, after uint64) []*task {
	s.mu.Lock()
	var out []*task
	for _, t := range s.tasks {
		if t.seq > after && t.visibleTo(c, subject, v) {
			out = append(out, t)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b *task) int { return cmp.Compare(a.seq, b.seq) })
	return out
}

// newTaskID returns an unguessable task id.
func newTaskID() string {
	b := make([]byte, taskIDBytes)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// startTask creates the task a request asks for, of plugin's, starts run
// in the background with a request of its own, and returns the
// CreateTaskResult.
func startTask(req *request, plugin *Plugin, p *taskParams, what string, run func(context.Context, *request) (any, error)) (any, error) {
	sess := req.session()
	// The run's request keeps the call's id and _meta (its progressToken
	// stays valid), but its context outlives the call and its messages go
	// through the task.
	ctx, cancel := context.WithCancel(context.WithoutCancel(req.ctx))
	t, err := sess.srv.tasks.open(sess, sess.srv.subject(req.ctx), what, plugin, p, cancel, false)
	if err != nil {
		return nil, err
	}
	run1 := &request{srv: req.srv, conn: req.conn, era: req.era, id: req.id, method: req.method, meta: req.meta, reply: &taskOutbound{t}, cancel: cancel}
	run1.ctx = context.WithValue(ctx, requestKey{}, run1)
	info := t.info()
	go func() {
		defer sess.wg.Done()
		defer cancel()
		// Nothing about the task goes out before the CreateTaskResult: the
		// creating request ends once its response is sent. A client that
		// cancelled that request never learns of the task: it is dropped.
		<-req.ctx.Done()
		if req.cancelled.Load() {
			sess.srv.tasks.remove(t)
			t.end(taskCancelled, "The request that created the task was cancelled.", nil, rpcErrorf(CodeInternalError, "the request that created the task was cancelled"), false)
			return
		}
		res, err := run(run1.ctx, run1)
		run1.mu.Lock()
		run1.done = true // no progress after the end
		run1.mu.Unlock()
		t.finish(res, err)
	}()
	return createTaskResult{Task: info}, nil
}

// open creates a task of owner's for subject, working, run by plugin,
// whose run cancel interrupts: it takes it into the store, arms its ttl
// and ties it to the end of owner, whose Wait then waits for the run (the
// caller owes owner.wg.Done when the run ends).
func (store *taskStore) open(owner *Session, subject, what string, plugin *Plugin, p *taskParams, cancel context.CancelFunc, modern bool) (*task, error) {
	now := time.Now()
	t := &task{
		id: newTaskID(), what: what, plugin: plugin, sess: owner, subject: subject,
		created: now, updated: now, ttl: store.ttl(p), poll: orDefault(store.pollInterval, defaultTaskPollInterval),
		status: taskWorking, done: make(chan struct{}), cancel: cancel, modern: modern,
	}
	if err := store.add(t); err != nil {
		cancel()
		return nil, err
	}
	owner.mu.Lock()
	if owner.closed {
		owner.mu.Unlock()
		store.remove(t)
		cancel()
		return nil, rpcErrorf(CodeInternalError, "session is closed")
	}
	owner.wg.Add(1) // the session waits for the run, as for a request
	owner.mu.Unlock()
	// The ttl and the end of the session drop the task, interrupting its
	// run. Set under the lock, which remove takes to stop them.
	t.mu.Lock()
	t.expiry = time.AfterFunc(t.ttl, func() {
		store.remove(t)
		if ended, _ := t.end(taskCancelled, "The task's ttl elapsed before it ended.", nil, rpcErrorf(CodeInvalidParams, "Failed to retrieve task: Task has expired"), true); ended {
			cancel()
		}
	})
	t.stopOnClose = context.AfterFunc(owner.closeCtx, func() {
		store.remove(t)
		t.end(taskCancelled, "The session ended.", nil, rpcErrorf(CodeInternalError, "the session ended"), false)
		cancel()
	})
	t.mu.Unlock()
	owner.srv.logger.Info("task started", "request", what, "ttl", t.ttl, "subject", subject)
	return t, nil
}

// tasksAllowed refuses the tasks/ methods to sessions before 2025-11-25,
// which do not have them.
func tasksAllowed(req *request) error {
	if !atLeast(req.version(), Version20251125) {
		return rpcErrorf(CodeMethodNotFound, "method not found: %s (tasks need protocol version %s)", req.method, Version20251125)
	}
	return nil
}

// lookupTask finds the task a tasks/get, tasks/result or tasks/cancel
// names, among those the requester may see.
func lookupTask(ctx context.Context, req *request, p *taskIDParams) (*task, error) {
	if err := tasksAllowed(req); err != nil {
		return nil, err
	}
	if p.TaskID == "" {
		return nil, rpcErrorf(CodeInvalidParams, "invalid params: taskId is required")
	}
	t := req.srv.tasks.get(p.TaskID)
	if t == nil {
		return nil, rpcErrorf(CodeInvalidParams, "Failed to retrieve task: Task not found")
	}
	if subject := req.srv.subject(ctx); !t.visibleTo(req.conn, subject, req.view()) || t.modern != isEra20260728(req.era) {
		req.srv.logger.Warn("task access refused: the task belongs to another session or subject, or its plugin is hidden from the request", "method", req.method, "subject", subject)
		return nil, rpcErrorf(CodeInvalidParams, "Failed to retrieve task: Task not found")
	}
	return t, nil
}

func handleGetTask(ctx context.Context, req *request, params *taskIDParams) (any, error) {
	t, err := lookupTask(ctx, req, params)
	if err != nil {
		return nil, err
	}
	return t.info(), nil
}

// handleTaskResult answers with the task's outcome, waiting for it while
// the task runs. Meanwhile the task's requests to the client go out on this
// request's reply.
func handleTaskResult(ctx context.Context, req *request, params *taskIDParams) (any, error) {
	t, err := lookupTask(ctx, req, params)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	if !isTerminal(t.status) {
		w := &waiter{reply: req.reply}
		t.waiters = append(t.waiters, w)
		for _, q := range t.queue { // under the lock, so they go out in order
			_ = req.reply.Send(q.msg)
		}
		t.queue = nil
		t.mu.Unlock()
		var gone bool
		select {
		case <-t.done:
		case <-ctx.Done():
			gone = true
		}
		t.mu.Lock()
		if i := slices.Index(t.waiters, w); i >= 0 {
			t.waiters = slices.Delete(t.waiters, i, i+1)
		}
		if gone {
			t.mu.Unlock()
			return nil, ctx.Err()
		}
	}
	result, rpcErr := t.result, t.err
	t.mu.Unlock()
	if rpcErr != nil {
		return nil, rpcErr
	}
	return result, nil
}

func handleListTasks(ctx context.Context, req *request, p *listParams) (any, error) {
	if err := tasksAllowed(req); err != nil {
		return nil, err
	}
	var after uint64
	if p.Cursor != "" {
		raw, decErr := base64.RawURLEncoding.DecodeString(p.Cursor)
		name, seq, ok := strings.Cut(string(raw), ":")
		n, convErr := strconv.ParseUint(seq, 10, 64)
		if decErr != nil || !ok || name != "tasks" || convErr != nil {
			return nil, rpcErrorf(CodeInvalidParams, "invalid params: invalid cursor %q", p.Cursor)
		}
		after = n
	}
	tasks := req.srv.tasks.visible(req.conn, req.srv.subject(ctx), req.view(), after)
	res := listTasksResult{Tasks: []taskInfo{}}
	size := req.srv.opts.PageSize
	if len(tasks) > size {
		tasks = tasks[:size]
		res.NextCursor = encodeCursor("tasks", int(tasks[size-1].seq))
	}
	for _, t := range tasks {
		res.Tasks = append(res.Tasks, t.info())
	}
	return res, nil
}

// handleCancelTask cancels a task that has not ended: its status is
// cancelled before the answer, and its run is interrupted.
func handleCancelTask(ctx context.Context, req *request, params *taskIDParams) (any, error) {
	t, err := lookupTask(ctx, req, params)
	if err != nil {
		return nil, err
	}
	const msg = "The task was cancelled by request."
	if ended, status := t.end(taskCancelled, msg, nil, rpcErrorf(CodeInternalError, "task cancelled: %s", msg), true); !ended {
		return nil, rpcErrorf(CodeInvalidParams, "Cannot cancel task: already in terminal status '%s'", status)
	}
	t.cancel()
	return t.info(), nil
}

// isEra20260728 reports whether a request is served at 2026-07-28, whose
// tasks are the extension's.
func isEra20260728(e era) bool {
	_, ok := e.(*era20260728)
	return ok
}
