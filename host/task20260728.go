package host

import (
	"context"
	"encoding/json"
	"maps"
	"time"

	"github.com/mcphost/mcphost/abi"
)

// Tasks of 2026-07-28 are the io.modelcontextprotocol/tasks extension,
// served from the one task store (taskstore.go, task.go) with a wire form
// of their own (tasks20260728). A
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
// and tasks/update answer an empty result. A 2026-07-28 task belongs to no
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
	Request inputRequest `json:"request"`
	Digest  string       `json:"digest"` // of the question, as a requestState records it
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

// createTaskResult20260728 answers a call that became a task.
type createTaskResult20260728 struct {
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

// callTool20260728 applies the extension's rules to a tools/call of a
// 2026-07-28 request.
func callTool20260728(req *request, e *toolEntry, p abi.CallToolParams) (any, error) {
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

// tasks20260728 is the wire form of the extension's tasks.
type tasks20260728 struct{}

func (tasks20260728) era() string { return Version20260728 }

// allows refuses the extension's methods to a request that did not declare
// it.
func (tasks20260728) allows(req *request) error { return needTasksExtension(req, req.method) }

// owner is the authenticated subject; without one, every task shares the
// zero owner, and its unguessable id is what grants access.
func (tasks20260728) owner(req *request) taskOwner {
	return taskOwner{Subject: req.subject}
}

// session is none: a task of the extension belongs to no session (HTTP
// requests have none) and lasts its ttl.
func (tasks20260728) conn(*request) *conn { return nil }

// outcome is the tool's result, completed even with isError, or the
// protocol error, failed.
func (tasks20260728) outcome(_ string, res any, err error) taskOutcome {
	if err != nil {
		return failedOutcome(err)
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return failedOutcome(rpcErrorf(CodeInternalError, "internal error: encoding result: %v", err))
	}
	return taskOutcome{status: taskCompleted, result: raw}
}

// status is none: the extension has no status notifications; clients poll
// tasks/get.
func (tasks20260728) status(*taskRecord) []byte { return nil }

// runMaybeTask runs a call as the request for up to Options.TaskAfter, and then as
// a task of plugin's.
func runMaybeTask(req *request, plugin *Plugin, what string, call func(context.Context, *request) (any, error)) (any, error) {
	srv := req.srv
	ctx, cancel := context.WithCancel(context.WithoutCancel(req.ctx))
	run := req.forRun(ctx, cancel, req.reply, req.input)
	type outcome struct {
		res any
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		defer func() { done <- o }()
		defer srv.recoverPanic(req.method, &o.err)
		o.res, o.err = call(run.ctx, run)
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
	l, rec, err := srv.tasks.open(req, what, plugin, &taskParams{}, cancel, func(l *liveTask) {
		o := <-done
		l.settle(req.input, o.res, o.err)
	})
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.rerun = func(round *inputRound) {
		again := req.forRun(ctx, cancel, discardOutbound{}, round)
		_ = l.spawn(func() {
			res, err := call(again.ctx, again)
			l.settle(round, res, err)
		})
	}
	l.mu.Unlock()
	return createTaskResult20260728{ResultType: "task", detailedTask: rec.detailed()}, nil
}

// settle records the outcome of a run of the task: input_required with the
// questions it asked without answers, else its end.
func (l *liveTask) settle(round *inputRound, res any, err error) {
	round.mu.Lock()
	failure, asked, used, digests := round.failure, round.asked, round.used, round.digests
	round.mu.Unlock()
	if failure != nil {
		l.finish(nil, failure)
		return
	}
	if len(asked) == 0 {
		l.finish(res, err)
		return
	}
	waits := false
	rec, _ := l.srv.tasks.store.update(l.id, func(r *taskRecord) bool {
		if waits = !isTerminal(r.Status); !waits {
			return false
		}
		r.Answers = maps.Clone(used)
		r.Pending = map[string]pendingQuestion{}
		for key, q := range asked {
			r.Pending[key] = pendingQuestion{Request: q, Digest: digests[key]}
		}
		r.setStatus(taskInputRequired, "The task waits for the answers to its inputRequests: send them with tasks/update.")
		return true
	})
	if waits {
		l.mu.Lock()
		l.awaiting = true
		l.mu.Unlock()
		l.announce(rec)
	}
}

// replay replays the run of a task that awaited answers with round,
// unless it was replayed already: the answers may complete here or, with
// a shared store, on another replica (watchShared).
func (l *liveTask) replay(round *inputRound) {
	l.mu.Lock()
	rerun, awaiting := l.rerun, l.awaiting
	l.awaiting = false
	l.mu.Unlock()
	if awaiting && rerun != nil {
		rerun(round)
	}
}

// detailed returns the task as tasks/get shows it.
func (r *taskRecord) detailed() detailedTask {
	d := detailedTask{
		TaskID: r.ID, Status: r.Status, StatusMessage: r.Message,
		CreatedAt: timestamp(r.Created), LastUpdatedAt: timestamp(r.Updated),
		TTLMs: r.TTL.Milliseconds(), PollIntervalMs: r.Poll.Milliseconds(),
	}
	switch r.Status {
	case taskCompleted:
		d.Result = r.Result
	case taskFailed:
		d.Error = r.Error
	case taskInputRequired:
		d.InputRequests = map[string]inputRequest{}
		for key, q := range r.Pending {
			d.InputRequests[key] = q.Request
		}
	}
	return d
}

func handleGetTask20260728(ctx context.Context, req *request, p *taskIDParams) (any, error) {
	rec, _, err := lookupTask(ctx, req, p.TaskID)
	if err != nil {
		return nil, err
	}
	return rec.detailed(), nil
}

// handleCancelTask20260728 cancels a task that has not ended; one that has
// is left as it is. Either way the answer is empty.
func handleCancelTask20260728(ctx context.Context, req *request, p *taskIDParams) (any, error) {
	_, l, err := lookupTask(ctx, req, p.TaskID)
	if err != nil {
		return nil, err
	}
	req.srv.tasks.cancel(p.TaskID, l)
	return struct{}{}, nil
}

// handleUpdateTask takes answers to an input_required task's questions;
// answers to other keys are ignored. Once every question is answered, the
// run is replayed with the answers.
func handleUpdateTask(ctx context.Context, req *request, p *taskUpdateParams) (any, error) {
	_, l, err := lookupTask(ctx, req, p.TaskID)
	if err != nil {
		return nil, err
	}
	tasks := &req.srv.tasks
	var responses map[string]json.RawMessage
	if err := json.Unmarshal(p.InputResponses, &responses); err != nil || responses == nil {
		return nil, rpcErrorf(CodeInvalidParams, "invalid params: inputResponses must be an object of results by key")
	}
	var (
		invalid *RPCError
		round   *inputRound // the replay, once every question is answered
	)
	rec, _ := tasks.store.update(p.TaskID, func(r *taskRecord) bool {
		invalid, round = nil, nil
		if r.Status != taskInputRequired {
			return false
		}
		for key, raw := range responses {
			if q, ok := r.Pending[key]; ok {
				if err := checkAnswer(q.Request.Method, raw); err != nil {
					invalid = rpcErrorf(CodeInvalidParams, "invalid params: inputResponses[%q] is not a result of %s: %v", key, q.Request.Method, err)
					return false
				}
			}
		}
		pending, answers := maps.Clone(r.Pending), maps.Clone(r.Answers)
		if answers == nil {
			answers = map[string]recordedAnswer{}
		}
		for key, raw := range responses {
			if q, ok := pending[key]; ok {
				answers[key] = recordedAnswer{Question: q.Digest, Answer: raw}
				delete(pending, key)
			}
		}
		r.Pending, r.Answers = pending, answers
		if len(pending) == 0 {
			r.setStatus(taskWorking, "")
			round = replayRound(maps.Clone(answers))
		}
		return true
	})
	if invalid != nil {
		return nil, invalid
	}
	if round != nil && l != nil { // else the replica that runs it replays it (watchShared)
		l.announce(rec)
		l.replay(round)
	}
	return struct{}{}, nil
}
