package host

import (
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
//
// The tasks of both eras are one kind of task, a record in the server's
// taskStore and a liveTask in this process (taskstore.go); the era shapes
// only their wire form, a taskWire: this file has the 2025-11-25 one,
// tasks20251125, and what both share.

const (
	// relatedTaskKey is the _meta key that ties a message to its task.
	relatedTaskKey = "io.modelcontextprotocol/related-task"

	taskWorking       = "working"
	taskInputRequired = "input_required"
	taskCompleted     = "completed"
	taskFailed        = "failed"
	taskCancelled     = "cancelled"

	// Defaults of the taskSet limits.
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

// toolTask applies the task rules to a tools/call before 2026-07-28: it returns the task the
// call asks for, nil to run the call directly, or the error the spec names
// for a task the tool forbids or a call without one the tool requires.
func toolTask(req *request, e *toolEntry, task *taskParams) (*taskParams, error) {
	if !atLeast(req.version(), Version20251125) {
		return nil, nil // no tasks before 2025-11-25: any task params are ignored
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

func (r *taskRecord) info() taskInfo {
	return taskInfo{
		TaskID:        r.ID,
		Status:        r.Status,
		StatusMessage: r.Message,
		CreatedAt:     timestamp(r.Created),
		LastUpdatedAt: timestamp(r.Updated),
		TTL:           r.TTL.Milliseconds(),
		PollInterval:  r.Poll.Milliseconds(),
	}
}

func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

func isTerminal(status string) bool {
	return status == taskCompleted || status == taskFailed || status == taskCancelled
}

// taskWire is the wire form of the tasks of one protocol era: which tasks/
// methods a request has, whom its tasks belong to, how a run's outcome is
// recorded and which status notifications go out. The tasks themselves,
// their records and live parts, are the same in both eras.
type taskWire interface {
	// era names the wire form in its tasks' records: the methods of one
	// era do not find the tasks of the other.
	era() string
	// allows refuses a tasks/ method to a request that does not have it.
	allows(req *request) error
	// owner is whom the task a request creates belongs to, and whose
	// tasks it finds.
	owner(req *request) taskOwner
	// conn is the conn (a session) whose end ends the task a request
	// creates, and whose Wait waits for its runs; nil for none.
	conn(req *request) *conn
	// outcome is how the end of a task's run is recorded.
	outcome(id string, res any, err error) taskOutcome
	// status is the notification of the task's status, nil for none.
	status(rec *taskRecord) []byte
}

// tasks20251125 is the wire form of the tasks of 2025-11-25, described at
// the top of this file.
type tasks20251125 struct{}

func (tasks20251125) era() string { return Version20251125 }

// allows refuses the tasks/ methods to sessions before 2025-11-25, which do
// not have them.
func (tasks20251125) allows(req *request) error {
	if !atLeast(req.version(), Version20251125) {
		return rpcErrorf(CodeMethodNotFound, "method not found: %s (tasks need protocol version %s)", req.method, Version20251125)
	}
	return nil
}

// owner is the authenticated subject, or without one the session.
func (tasks20251125) owner(req *request) taskOwner {
	if subject := req.subject; subject != "" {
		return taskOwner{Subject: subject}
	}
	return taskOwner{Session: req.conn.id}
}

func (tasks20251125) conn(req *request) *conn { return req.conn }

// outcome is the result with the related-task _meta added, failed when the
// tool reports an error, or the JSON-RPC error, failed.
func (tasks20251125) outcome(id string, res any, err error) taskOutcome {
	if err != nil {
		return failedOutcome(err)
	}
	raw, err := withRelatedTask(res, id)
	if err != nil {
		return failedOutcome(rpcErrorf(CodeInternalError, "internal error: encoding result: %v", err))
	}
	if r, ok := res.(*abi.CallToolResult); ok && r.IsError {
		return taskOutcome{status: taskFailed, message: errorText(r), result: raw}
	}
	return taskOutcome{status: taskCompleted, result: raw}
}

// status is notifications/tasks/status with the task as it is now. (The
// spec asks not to add the related-task _meta to it.)
func (tasks20251125) status(rec *taskRecord) []byte {
	return encodeNotification("notifications/tasks/status", rec.info())
}

// taskOutcome is how a task ends: its terminal status and message, and a
// result or an error.
type taskOutcome struct {
	status, message string
	result          json.RawMessage
	err             *RPCError
}

// failedOutcome is the outcome of a run that failed with err.
func failedOutcome(err error) taskOutcome {
	rpcErr := toRPCError(err)
	return taskOutcome{status: taskFailed, message: rpcErr.Message, err: rpcErr}
}

// cancelledOutcome is the outcome of a task cancelled for the reason told
// in message, whose tasks/result answers err.
func cancelledOutcome(message string, err *RPCError) taskOutcome {
	return taskOutcome{status: taskCancelled, message: message, err: err}
}

// apply records the outcome in r.
func (o taskOutcome) apply(r *taskRecord) {
	r.setStatus(o.status, o.message)
	r.Result, r.Error = o.result, o.err
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

// The bounds of the tasks a server holds at once, unless Options say.
const (
	DefaultMaxTasks        = 1000 // of all users
	DefaultMaxTasksPerUser = 100  // of one user
)

// taskSet is a server's tasks: their records in the store, the bounds on
// them, and the live parts of those this process runs.
type taskSet struct {
	store taskStore
	// Limits; zero values take the defaults (Options and tests set them).
	defaultTTL, maxTTL, pollInterval time.Duration
	maxTasks, maxPerUser             int
	live                             liveTasks
	// lease is how long this replica vouches for a task it runs in a
	// shared store, and replica its name there (Options.TaskLease,
	// Options.Replica); zero without a shared store.
	lease   time.Duration
	replica string
}

// liveTasks are the live parts of the tasks this process runs, by id.
type liveTasks struct {
	mu       sync.Mutex
	byID     map[string]*liveTask
	watching bool // taskSet.watchShared runs
}

func (r *liveTasks) add(l *liveTask) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byID == nil {
		r.byID = map[string]*liveTask{}
	}
	r.byID[l.id] = l
}

// get returns the live part of task id, nil when this process does not
// run it.
func (r *liveTasks) get(id string) *liveTask {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byID[id]
}

func (r *liveTasks) remove(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.byID, id)
}

// liveTask is the part of a task that only the process running it holds:
// what interrupts its run, where its messages go and who waits for its end.
type liveTask struct {
	id     string
	srv    *Server
	wire   taskWire
	conn   *conn              // whose end ends the task; nil: none (taskWire.conn)
	cancel context.CancelFunc // interrupts the run
	done   chan struct{}      // closed once the task ended

	mu          sync.Mutex
	final       taskRecord        // the record as the task ended, once done is closed
	expiry      *time.Timer       // ends and drops the task when its ttl has elapsed
	stopOnClose func() bool       // stops ending it with its session
	clientCalls int               // requests to the client awaiting answers
	queue       []queuedRequest   // requests to the client waiting for a tasks/result
	waiters     []*waiter         // the tasks/result requests waiting, oldest first
	rerun       func(*inputRound) // replays the run with the answers (2026-07-28)
	awaiting    bool              // in input_required, not yet replayed
	renewed     time.Time         // when this replica last renewed its lease (shared store)
}

// waiter is a tasks/result request waiting for its task, here or on
// another replica (token names it there: sharedtaskwait.go).
type waiter struct {
	reply Outbound
	token string
}

type queuedRequest struct {
	id  string
	msg []byte
}

func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// ttl returns the lifetime of a task that asks for p: the one asked for,
// within the maximum, or the default.
func (s *taskSet) ttl(p *taskParams) time.Duration {
	def, limit := orDefault(s.defaultTTL, defaultTaskTTL), orDefault(s.maxTTL, defaultMaxTaskTTL)
	switch {
	case p.TTL == nil || *p.TTL <= 0:
		return min(def, limit)
	case *p.TTL >= float64(limit.Milliseconds()):
		return limit
	}
	return max(time.Duration(*p.TTL)*time.Millisecond, time.Millisecond)
}

// newTaskID returns an unguessable task id.
func newTaskID() string {
	b := make([]byte, taskIDBytes)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// open creates the task req asks for, working, run by plugin, whose run
// cancel interrupts, unless its owner or the server holds the most tasks
// they may: it records it in the store, starts run in the background
// (spawn), and arms the end of its ttl and of its session.
func (s *taskSet) open(req *request, what string, plugin *Plugin, p *taskParams, cancel context.CancelFunc, run func(*liveTask)) (*liveTask, taskRecord, error) {
	wire := req.era.tasks()
	l := &liveTask{id: newTaskID(), srv: req.srv, wire: wire, conn: wire.conn(req), cancel: cancel, done: make(chan struct{})}
	// The live part comes first and goes last (drop): whoever finds the
	// record finds it.
	s.live.add(l)
	now := time.Now()
	rec := taskRecord{
		ID: l.id, Era: wire.era(), Owner: wire.owner(req), What: what, Plugin: plugin.Name, Scopes: plugin.scopes,
		Created: now, Updated: now, TTL: s.ttl(p), Poll: orDefault(s.pollInterval, defaultTaskPollInterval), Status: taskWorking,
	}
	if s.lease > 0 {
		rec.Runner, rec.Lease, rec.Origin = s.replica, now.Add(s.lease), req.srv.origin
		l.mu.Lock()
		l.renewed = now
		l.mu.Unlock()
	}
	rec, err := s.store.create(rec, orDefault(s.maxTasks, DefaultMaxTasks), orDefault(s.maxPerUser, DefaultMaxTasksPerUser))
	if err == nil {
		err = l.spawn(func() { run(l) })
	}
	if err != nil {
		s.drop(l)
		cancel()
		return nil, taskRecord{}, err
	}
	// The ttl and the end of the session end the task, interrupting its
	// run, and drop it. Set under the lock, which drop takes to stop them.
	l.mu.Lock()
	l.expiry = time.AfterFunc(rec.TTL, func() {
		if _, ended := l.end(cancelledOutcome("The task's ttl elapsed before it ended.", rpcErrorf(CodeInvalidParams, "Failed to retrieve task: Task has expired")), true); ended {
			cancel()
		}
		s.drop(l)
	})
	if l.conn != nil {
		l.stopOnClose = context.AfterFunc(l.conn.endCtx, func() {
			l.end(cancelledOutcome("The session ended.", rpcErrorf(CodeInternalError, "the session ended")), false)
			// Dropped before the run is cancelled: once the run ends,
			// Session.Wait returns, and the task must be gone by then.
			s.drop(l)
			cancel()
		})
	}
	l.mu.Unlock()
	s.watchShared()
	l.srv.logger.Info("task started", "request", what, "ttl", rec.TTL, "subject", rec.Owner.Subject)
	return l, rec, nil
}

// drop removes the task's record and live part, and stops its timers; the
// task stays cancelled if it ran.
func (s *taskSet) drop(l *liveTask) {
	s.store.remove(l.id)
	s.live.remove(l.id)
	l.mu.Lock()
	expiry, stop := l.expiry, l.stopOnClose
	l.mu.Unlock()
	if expiry != nil {
		expiry.Stop()
	}
	if stop != nil {
		stop()
	}
}

// spawn runs run in the background. The run of a session's task counts in
// the session's wait group, as a request does, so that Session.Wait waits
// for it; a closed session starts no run.
// A run that panics fails the task with an internal error (panics.go).
func (l *liveTask) spawn(run func()) error {
	sess := l.conn
	if sess != nil {
		sess.mu.Lock()
		if sess.closed {
			sess.mu.Unlock()
			return rpcErrorf(CodeInternalError, "session is closed")
		}
		sess.wg.Add(1)
		sess.mu.Unlock()
	}
	go func() {
		if sess != nil {
			defer sess.wg.Done()
		}
		var err error
		defer func() {
			if err != nil {
				l.end(failedOutcome(err), true)
			}
		}()
		defer l.srv.recoverPanic("a task's run", &err)
		run()
	}()
	return nil
}

// ended reports whether the task ended.
func (l *liveTask) ended() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

// end records the outcome of the task, announcing it when notify is set,
// unless the task ended already. It returns the record as the task ended,
// and whether it ended now.
func (l *liveTask) end(o taskOutcome, notify bool) (taskRecord, bool) {
	l.mu.Lock()
	if l.ended() {
		defer l.mu.Unlock()
		return l.final, false
	}
	// A task that ended meanwhile in the store (cancelled, or failed by
	// another replica that found this one's lease lapsed) keeps its end.
	rec, found := l.srv.tasks.store.update(l.id, func(r *taskRecord) bool {
		if isTerminal(r.Status) {
			return false
		}
		o.apply(r)
		return true
	})
	if !found { // expired from a shared store: the outcome is still the waiters'
		rec = taskRecord{ID: l.id}
		o.apply(&rec)
	}
	l.final = rec
	close(l.done)
	l.mu.Unlock()
	if notify && found {
		l.announce(rec)
	}
	l.srv.logger.Info("task ended", "request", rec.What, "status", o.status, "subject", rec.Owner.Subject, "after", time.Since(rec.Created).Round(time.Millisecond))
	return rec, true
}

// finish records the outcome of the task's run. A task cancelled or
// expired meanwhile keeps its status.
func (l *liveTask) finish(res any, err error) { l.end(l.wire.outcome(l.id, res, err), true) }

// wait waits for the end of the task, while the task's requests to the
// client go out on reply, and returns the record as the task ended.
func (l *liveTask) wait(ctx context.Context, reply Outbound) (taskRecord, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended() {
		return l.final, nil
	}
	w := &waiter{reply: reply}
	l.attachLocked(w)
	l.mu.Unlock()
	var err error
	select {
	case <-l.done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	l.mu.Lock()
	l.detachLocked(func(o *waiter) bool { return o == w })
	return l.final, err
}

// attachLocked makes w the newest waiter of the task, which takes its
// requests to the client, those queued first. l.mu is held.
func (l *liveTask) attachLocked(w *waiter) {
	l.waiters = append(l.waiters, w)
	for _, q := range l.queue { // under the lock, so they go out in order
		_ = w.reply.Send(q.msg)
	}
	l.queue = nil
}

// detachLocked removes the waiters that match. l.mu is held.
func (l *liveTask) detachLocked(match func(*waiter) bool) {
	l.waiters = slices.DeleteFunc(l.waiters, match)
}

// announce sends the status notification of the task as rec has it, if
// its wire form has one.
func (l *liveTask) announce(rec taskRecord) {
	if msg := l.wire.status(&rec); msg != nil {
		_ = l.route(msg)
	}
}

// route sends a message about a session's task to the newest tasks/result
// waiting for it, else to the session's own stream.
func (l *liveTask) route(msg []byte) error {
	l.mu.Lock()
	out := l.conn.out
	if n := len(l.waiters); n > 0 {
		out = l.waiters[n-1].reply
	}
	l.mu.Unlock()
	return out.Send(msg)
}

// taskOutbound carries what a task's run sends the client: it adds the
// related-task _meta and delivers requests through tasks/result.
type taskOutbound struct{ l *liveTask }

// clientCallTracker is told when a request to the client starts, and
// (through the function returned) when it ends; callClient tells a reply
// that implements it.
type clientCallTracker interface {
	clientCallStarted(method string) func()
}

func (o *taskOutbound) Send(msg []byte) error {
	l := o.l
	var m message
	if err := json.Unmarshal(msg, &m); err != nil || m.Method == "" {
		return l.route(msg)
	}
	if m.Method == "notifications/cancelled" {
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(m.Params, &p) == nil && l.unqueue(p.RequestID) {
			return nil // the request never left: nothing to cancel
		}
	}
	params, err := addRelatedTask(m.Params, l.id)
	if err != nil {
		return err
	}
	m.Params = params
	if msg, err = json.Marshal(m); err != nil {
		return err
	}
	if m.ID == nil {
		return l.route(msg)
	}
	l.mu.Lock()
	if n := len(l.waiters); n > 0 {
		w := l.waiters[n-1]
		l.mu.Unlock()
		return w.reply.Send(msg)
	}
	defer l.mu.Unlock()
	switch {
	case l.ended():
		return errors.New("the task has ended")
	case len(l.queue) >= maxTaskQueue:
		return fmt.Errorf("the task has %d requests to the client waiting for a tasks/result already", maxTaskQueue)
	}
	l.queue = append(l.queue, queuedRequest{id: string(m.ID), msg: msg})
	return nil
}

// cancellations routes the cancellation of a task's request to the client
// through the task: a request still queued is dropped instead.
func (o *taskOutbound) cancellations() Outbound { return o }

// unqueue drops a queued request, reporting whether it was queued.
func (l *liveTask) unqueue(id json.RawMessage) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := slices.IndexFunc(l.queue, func(q queuedRequest) bool { return q.id == string(id) })
	if i < 0 {
		return false
	}
	l.queue = slices.Delete(l.queue, i, i+1)
	return true
}

// clientCallStarted puts the task in input_required while requests to the
// client await answers, and back to working once none does.
func (o *taskOutbound) clientCallStarted(method string) func() {
	l := o.l
	l.clientCall(+1, taskWorking, taskInputRequired, "The task waits for the client's answer to "+method+": call tasks/result to receive the request.")
	return func() { l.clientCall(-1, taskInputRequired, taskWorking, "") }
}

// clientCall counts a request to the client starting (delta +1) or ending
// (-1). The first to start, and the last to end, move the task from status
// from to status to, announcing it; a task in another status stays.
func (l *liveTask) clientCall(delta int, from, to, message string) {
	l.mu.Lock()
	l.clientCalls += delta
	moved := false
	var rec taskRecord
	if l.clientCalls == max(delta, 0) {
		rec, _ = l.srv.tasks.store.update(l.id, func(r *taskRecord) bool {
			if moved = r.Status == from; moved {
				r.setStatus(to, message)
			}
			return moved
		})
	}
	l.mu.Unlock()
	if moved {
		l.announce(rec)
	}
}

// forRun returns a request like r for a run of its task: with a context of
// its own, derived from ctx and ended by cancel, its messages going to
// reply and, in 2026-07-28, the client's answers in input.
func (r *request) forRun(ctx context.Context, cancel context.CancelFunc, reply Outbound, input *inputRound) *request {
	run := &request{srv: r.srv, conn: r.conn, era: r.era, input: input, id: r.id, method: r.method, meta: r.meta, reply: reply, cancel: cancel}
	run.ctx = context.WithValue(ctx, requestKey{}, run)
	return run
}

// startTask creates the task a request asks for, of plugin's, starts run
// in the background with a request of its own, and returns the
// CreateTaskResult.
func startTask(req *request, plugin *Plugin, p *taskParams, what string, run func(context.Context, *request) (any, error)) (any, error) {
	// The run's request keeps the call's id and _meta (its progressToken
	// stays valid), but its context outlives the call and its messages go
	// through the task.
	ctx, cancel := context.WithCancel(context.WithoutCancel(req.ctx))
	tasks := &req.srv.tasks
	_, rec, err := tasks.open(req, what, plugin, p, cancel, func(l *liveTask) {
		defer cancel()
		// Nothing about the task goes out before the CreateTaskResult: the
		// creating request ends once its response is sent. A client that
		// cancelled that request never learns of the task: it is dropped.
		<-req.ctx.Done()
		if req.cancelled.Load() {
			l.end(cancelledOutcome("The request that created the task was cancelled.", rpcErrorf(CodeInternalError, "the request that created the task was cancelled")), false)
			tasks.drop(l)
			return
		}
		run1 := req.forRun(ctx, cancel, &taskOutbound{l}, nil)
		res, err := run(run1.ctx, run1)
		run1.mu.Lock()
		run1.done = true // no progress after the end
		run1.mu.Unlock()
		l.finish(res, err)
	})
	if err != nil {
		return nil, err
	}
	return createTaskResult{Task: rec.info()}, nil
}

// lookupTask finds the task a tasks/ method names, among those the
// requester may see: its record and its live part, which only the process
// that runs it has. With a store in memory, that is this process; with a
// shared one (Options.TaskStore), it may be another replica's, and the
// live part is nil.
func lookupTask(ctx context.Context, req *request, id string) (taskRecord, *liveTask, error) {
	wire := req.era.tasks()
	if err := wire.allows(req); err != nil {
		return taskRecord{}, nil, err
	}
	if id == "" {
		return taskRecord{}, nil, rpcErrorf(CodeInvalidParams, "invalid params: taskId is required")
	}
	tasks := &req.srv.tasks
	rec, found := tasks.store.get(id, wire.owner(req))
	l := tasks.live.get(id)
	if found && (rec.Era != wire.era() || !req.view().seesPlugin(rec.Plugin, rec.Scopes)) {
		req.srv.logger.Warn("task access refused: the task is of the other protocol era, or its plugin is hidden from the request", "method", req.method, "subject", rec.Owner.Subject)
		found = false
	}
	if !found || (l == nil && !tasks.shared()) {
		return taskRecord{}, nil, rpcErrorf(CodeInvalidParams, "Failed to retrieve task: Task not found")
	}
	return rec, l, nil
}

func handleGetTask(ctx context.Context, req *request, params *taskIDParams) (any, error) {
	rec, _, err := lookupTask(ctx, req, params.TaskID)
	if err != nil {
		return nil, err
	}
	return rec.info(), nil
}

// handleTaskResult answers with the task's outcome, waiting for it while
// the task runs. Meanwhile the task's requests to the client go out on this
// request's reply.
func handleTaskResult(ctx context.Context, req *request, params *taskIDParams) (any, error) {
	rec, l, err := lookupTask(ctx, req, params.TaskID)
	if err != nil {
		return nil, err
	}
	switch {
	case isTerminal(rec.Status):
	case l != nil:
		if rec, err = l.wait(ctx, req.reply); err != nil {
			return nil, err
		}
	default: // run by another replica, which sends its requests to the client here
		stop := req.srv.waitRemotely(rec, req.reply)
		rec, err = req.srv.tasks.awaitEnd(ctx, rec, req.era.tasks().owner(req))
		stop()
		if err != nil {
			return nil, err
		}
	}
	if rec.Error != nil {
		return nil, rec.Error
	}
	return rec.Result, nil
}

func handleListTasks(ctx context.Context, req *request, p *listParams) (any, error) {
	wire := req.era.tasks()
	if err := wire.allows(req); err != nil {
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
	v := req.view()
	tasks, more := req.srv.tasks.store.list(wire.owner(req), after, req.srv.opts.PageSize, func(r *taskRecord) bool {
		return r.Era == wire.era() && v.seesPlugin(r.Plugin, r.Scopes)
	})
	res := listTasksResult{Tasks: []taskInfo{}}
	for _, r := range tasks {
		res.Tasks = append(res.Tasks, r.info())
	}
	if more {
		res.NextCursor = encodeCursor("tasks", int(tasks[len(tasks)-1].Seq))
	}
	return res, nil
}

// handleCancelTask cancels a task that has not ended: its status is
// cancelled before the answer, and its run is interrupted.
func handleCancelTask(ctx context.Context, req *request, params *taskIDParams) (any, error) {
	_, l, err := lookupTask(ctx, req, params.TaskID)
	if err != nil {
		return nil, err
	}
	rec, ended := req.srv.tasks.cancel(params.TaskID, l)
	if !ended {
		return nil, rpcErrorf(CodeInvalidParams, "Cannot cancel task: already in terminal status '%s'", rec.Status)
	}
	return rec.info(), nil
}

// cancel cancels task id, whose live part is l: nil when another replica
// runs it, which then interrupts its run when it sees the record
// cancelled (watchShared). It returns the record, and whether the task
// ended now.
func (s *taskSet) cancel(id string, l *liveTask) (taskRecord, bool) {
	if l != nil {
		rec, ended := l.end(cancelledByRequest(), true)
		if ended {
			l.cancel()
		}
		return rec, ended
	}
	ended := false
	rec, _ := s.store.update(id, func(r *taskRecord) bool {
		if ended = !isTerminal(r.Status); ended {
			cancelledByRequest().apply(r)
		}
		return ended
	})
	return rec, ended
}

// awaitEnd waits, within ctx, for the end of a task that another replica
// runs, reading its record every poll interval, and returns the record as
// the task ended. (The requests to the client of a task in input_required
// come meanwhile from that replica: Server.waitRemotely.)
func (s *taskSet) awaitEnd(ctx context.Context, rec taskRecord, owner taskOwner) (taskRecord, error) {
	tick := time.NewTicker(sharedTaskPoll)
	defer tick.Stop()
	for !isTerminal(rec.Status) {
		select {
		case <-ctx.Done():
			return rec, ctx.Err()
		case <-tick.C:
		}
		var found bool
		if rec, found = s.store.get(rec.ID, owner); !found {
			return rec, rpcErrorf(CodeInvalidParams, "Failed to retrieve task: Task not found")
		}
	}
	return rec, nil
}

// cancelledByRequest is the outcome of tasks/cancel.
func cancelledByRequest() taskOutcome {
	const msg = "The task was cancelled by request."
	return cancelledOutcome(msg, rpcErrorf(CodeInternalError, "task cancelled: %s", msg))
}
