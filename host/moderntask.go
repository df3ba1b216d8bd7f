package host

import (
	"context"
	"encoding/json"
	"maps"
	"sync"
	"time"

	"github.com/mcphost/mcphost/abi"
)

// Tasks of 2026-07-28 are the io.modelcontextprotocol/tasks extension,
// served from the one task store (task.go) with envelopes of their own. A
// request declares the extension in its _meta clientCapabilities; without
// it the tasks methods and tools that require a task are -32021 naming it,
// and tools that may run as tasks run directly. With it, the server
// decides: a tools/call of a task-supporting tool runs as an ordinary
// request for up to Options.TaskAfter; answered by then (a result, an error, or
// input_required on a multi round-trip), it is answered directly;
// otherwise it becomes a task, answered with a flat CreateTaskResult
// (resultType "task"), and runs on. tasks/get inlines the outcome: a tool
// result as "result" (a tool error is completed with isError), a protocol
// error as "error" (failed). When the run asks the client, the task waits
// in input_required with the questions; tasks/update answers them, any
// number at a time, and once all are answered the run is replayed with the
// answers, as a multi round-trip request would be (mrtr.go). tasks/cancel
// and tasks/update answer an empty result. A modern task belongs to no
// session (HTTP requests have none): it is bound to the authenticated
// subject, and without authentication its unguessable id is what grants
// access; it lasts its ttl.

// extTasks names the tasks extension.
const extTasks = "io.modelcontextprotocol/tasks"

// DefaultTaskAfter is how long a call of a task-supporting tool runs as a
// plain request before it becomes a task, unless Options.TaskAfter says.
const DefaultTaskAfter = 250 * time.Millisecond

// taskAfter is how long a call of a task-supporting tool runs as a plain
// request before it becomes a task.
func (s *Server) taskAfter() time.Duration { return orDefault(s.opts.TaskAfter, DefaultTaskAfter) }

// pendingQuestion is a question an input_required task waits for.
type pendingQuestion struct {
	request inputRequest
	digest  string
}

// detailedTask is a task of the extension as tasks/get shows it.
type detailedTask struct {
	TaskID         string                  `json:"taskId"`
	Status         string                  `json:"status"`
	StatusMessage  string                  `json:"statusMessage,omitempty"`
	CreatedAt      string                  `json:"createdAt"`
	LastUpdatedAt  string                  `json:"lastUpdatedAt"`
	TTLMs          int64                   `json:"ttlMs"`
	PollIntervalMs int64                   `json:"pollIntervalMs,omitempty"`
	Result         json.RawMessage         `json:"result,omitempty"`
	Error          *RPCError               `json:"error,omitempty"`
	InputRequests  map[string]inputRequest `json:"inputRequests,omitempty"`
}

// modernCreateTaskResult answers a call that became a task.
type modernCreateTaskResult struct {
	ResultType string `json:"resultType"`
	detailedTask
}

// taskUpdateParams are the params of tasks/update.
type taskUpdateParams struct {
	meta
	TaskID         string          `json:"taskId"`
	InputResponses json.RawMessage `json:"inputResponses"`
}

// discardOutbound drops what it is sent.
type discardOutbound struct{}

func (discardOutbound) Send([]byte) error { return nil }

// taskOwner is the session the tasks of the extension belong to: one per
// server, never initialized nor closed, that no client talks to.
func (s *Server) taskOwner() *Session {
	s.ownerOnce.Do(func() {
		s.owner = &Session{conn: s.newConn(discardOutbound{}, nil), pending: map[string]chan *message{}}
	})
	return s.owner
}

// hasExtension reports whether the client declared an extension.
func (c clientCapabilities) hasExtension(name string) bool {
	_, ok := c.Extensions[name]
	return ok
}

// needTasksExtension refuses a request that did not declare the extension:
// -32021 naming it.
func needTasksExtension(req *request, why string) error {
	if req.capabilities().hasExtension(extTasks) {
		return nil
	}
	return req.lacks(why+" needs the "+extTasks+" extension", "extensions", extTasks)
}

// callToolModern applies the extension's rules to a tools/call of a
// 2026-07-28 request.
func callToolModern(req *request, e *toolEntry, p abi.CallToolParams) (any, error) {
	support := e.taskSupport()
	if support == abi.TaskForbidden || !req.capabilities().hasExtension(extTasks) {
		if support == abi.TaskRequired {
			return nil, needTasksExtension(req, "tool "+e.tool.Name+", which runs only as a task,")
		}
		return runToolCall(req.ctx, req, e, p)
	}
	return runMaybeTask(req, e.plugin, "tools/call "+p.Name, func(ctx context.Context, run *request) (any, error) {
		return runToolCall(ctx, run, e, p)
	})
}

// runMaybeTask runs a call as the request for up to Options.TaskAfter, and then as
// a task of plugin's.
func runMaybeTask(req *request, plugin *Plugin, what string, call func(context.Context, *request) (any, error)) (any, error) {
	srv := req.srv
	ctx, cancel := context.WithCancel(context.WithoutCancel(req.ctx))
	run := &request{srv: srv, conn: req.conn, era: req.era, input: req.input, id: req.id, method: req.method, meta: req.meta, reply: req.reply, cancel: cancel}
	run.ctx = context.WithValue(ctx, requestKey{}, run)
	type outcome struct {
		res any
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := call(run.ctx, run)
		done <- outcome{res, err}
	}()
	timer := time.NewTimer(srv.taskAfter())
	defer timer.Stop()
	select {
	case o := <-done:
		cancel()
		return o.res, o.err
	case <-req.ctx.Done():
		cancel()
		return nil, req.ctx.Err()
	case <-timer.C:
	}
	if !req.input.detach() { // the run asked the client: a multi round-trip
		o := <-done
		cancel()
		return o.res, o.err
	}
	owner := srv.taskOwner()
	t, err := srv.tasks.open(owner, srv.subject(req.ctx), what, plugin, &taskParams{}, cancel, true)
	if err != nil {
		return nil, err
	}
	t.rerun = func(round *inputRound) {
		again := &request{srv: srv, conn: owner.conn, era: req.era, input: round, id: req.id, method: req.method, meta: req.meta, reply: discardOutbound{}, cancel: cancel}
		again.ctx = context.WithValue(ctx, requestKey{}, again)
		owner.wg.Add(1)
		go func() {
			defer owner.wg.Done()
			res, err := call(again.ctx, again)
			t.settle(round, res, err)
		}()
	}
	info := t.detailed()
	go func() {
		defer owner.wg.Done()
		o := <-done
		t.settle(req.input, o.res, o.err)
	}()
	return modernCreateTaskResult{ResultType: "task", detailedTask: info}, nil
}

// settle records the outcome of a run of the task: input_required with the
// questions it asked without answers, else its end.
func (t *task) settle(round *inputRound, res any, err error) {
	round.mu.Lock()
	failure, asked, used, digests := round.failure, round.asked, round.used, round.digests
	round.mu.Unlock()
	if failure != nil {
		t.finish(nil, failure)
		return
	}
	if len(asked) == 0 {
		t.finish(res, err)
		return
	}
	t.mu.Lock()
	if isTerminal(t.status) {
		t.mu.Unlock()
		return
	}
	t.answers = maps.Clone(used)
	t.pending = map[string]pendingQuestion{}
	for key, q := range asked {
		t.pending[key] = pendingQuestion{request: q, digest: digests[key]}
	}
	info := t.setStatusLocked(taskInputRequired, "The task waits for the answers to its inputRequests: send them with tasks/update.")
	t.mu.Unlock()
	t.announce(info)
}

// finishModern ends the task with the outcome of its run: a tool result is
// completed, even a tool error; a protocol error is failed.
func (t *task) finishModern(res any, err error) {
	if err != nil {
		rpcErr := toRPCError(err)
		t.end(taskFailed, rpcErr.Message, nil, rpcErr, true)
		return
	}
	raw, err := json.Marshal(res)
	if err != nil {
		rpcErr := rpcErrorf(CodeInternalError, "internal error: encoding result: %v", err)
		t.end(taskFailed, rpcErr.Message, nil, rpcErr, true)
		return
	}
	t.end(taskCompleted, "", raw, nil, true)
}

// detailed returns the task as tasks/get shows it.
func (t *task) detailed() detailedTask {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := detailedTask{
		TaskID: t.id, Status: t.status, StatusMessage: t.message,
		CreatedAt: timestamp(t.created), LastUpdatedAt: timestamp(t.updated),
		TTLMs: t.ttl.Milliseconds(), PollIntervalMs: t.poll.Milliseconds(),
	}
	switch t.status {
	case taskCompleted:
		d.Result = t.result
	case taskFailed:
		d.Error = t.err
	case taskInputRequired:
		d.InputRequests = map[string]inputRequest{}
		for key, q := range t.pending {
			d.InputRequests[key] = q.request
		}
	}
	return d
}

// lookupModernTask finds the task a tasks/ method of the extension names.
func lookupModernTask(ctx context.Context, req *request, id string) (*task, error) {
	if err := needTasksExtension(req, req.method); err != nil {
		return nil, err
	}
	return lookupTask(ctx, req, &taskIDParams{TaskID: id})
}

func handleGetModernTask(ctx context.Context, req *request, p *taskIDParams) (any, error) {
	t, err := lookupModernTask(ctx, req, p.TaskID)
	if err != nil {
		return nil, err
	}
	return t.detailed(), nil
}

// handleCancelModernTask cancels a task that has not ended; one that has
// is left as it is. Either way the answer is empty.
func handleCancelModernTask(ctx context.Context, req *request, p *taskIDParams) (any, error) {
	t, err := lookupModernTask(ctx, req, p.TaskID)
	if err != nil {
		return nil, err
	}
	const msg = "The task was cancelled by request."
	if ended, _ := t.end(taskCancelled, msg, nil, rpcErrorf(CodeInternalError, "task cancelled: %s", msg), true); ended {
		t.cancel()
	}
	return struct{}{}, nil
}

// handleUpdateTask takes answers to an input_required task's questions;
// answers to other keys are ignored. Once every question is answered, the
// run is replayed with the answers.
func handleUpdateTask(ctx context.Context, req *request, p *taskUpdateParams) (any, error) {
	t, err := lookupModernTask(ctx, req, p.TaskID)
	if err != nil {
		return nil, err
	}
	var responses map[string]json.RawMessage
	if err := json.Unmarshal(p.InputResponses, &responses); err != nil || responses == nil {
		return nil, rpcErrorf(CodeInvalidParams, "invalid params: inputResponses must be an object of results by key")
	}
	t.mu.Lock()
	if t.status != taskInputRequired {
		t.mu.Unlock()
		return struct{}{}, nil
	}
	for key, raw := range responses {
		if q, ok := t.pending[key]; ok {
			if err := checkAnswer(q.request.Method, raw); err != nil {
				t.mu.Unlock()
				return nil, rpcErrorf(CodeInvalidParams, "invalid params: inputResponses[%q] is not a result of %s: %v", key, q.request.Method, err)
			}
		}
	}
	for key, raw := range responses {
		if q, ok := t.pending[key]; ok {
			t.answers[key] = recordedAnswer{Question: q.digest, Answer: raw}
			delete(t.pending, key)
		}
	}
	if len(t.pending) > 0 {
		t.mu.Unlock()
		return struct{}{}, nil
	}
	info := t.setStatusLocked(taskWorking, "")
	round := replayRound(maps.Clone(t.answers))
	t.mu.Unlock()
	t.announce(info)
	t.rerun(round)
	return struct{}{}, nil
}

// ownerState is the part of Server that holds the owner of the
// extension's tasks.
type ownerState struct {
	ownerOnce sync.Once
	owner     *Session
}
