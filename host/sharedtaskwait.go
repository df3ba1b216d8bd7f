package host

import (
	"crypto/rand"
	"encoding/json"
	"sync"
)

// A 2025-11-25 task in input_required sends its requests to the client on
// the stream of a tasks/result. With replicas sharing a backend, that
// tasks/result may reach another replica than the one running the task:
// it tells the runner through its inbox that it waits (inboxTaskWait,
// with a token of its own), the runner's run then sends what it would
// send a waiting tasks/result to the waiter's inbox (inboxTaskMessage),
// and the waiter says when it stops waiting (inboxTaskDone). The client's
// answers reach the runner as any answer does (forward).
const (
	inboxTaskWait    = "taskwait"
	inboxTaskDone    = "taskdone"
	inboxTaskMessage = "taskmsg"
)

// taskWait is what a replica whose tasks/result waits for a task that
// another runs tells the runner.
type taskWait struct {
	Task  string `json:"task"`
	Token string `json:"token"` // names the waiter in inboxTaskMessage
	From  string `json:"from"`  // the waiting replica's origin
}

// remoteWaits are the tasks/result requests here that wait for tasks that
// other replicas run, by token: where their messages go.
type remoteWaits struct {
	mu      sync.Mutex
	byToken map[string]Outbound
}

func (r *remoteWaits) set(token string, out Outbound) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if out == nil {
		delete(r.byToken, token)
		return
	}
	if r.byToken == nil {
		r.byToken = map[string]Outbound{}
	}
	r.byToken[token] = out
}

func (r *remoteWaits) get(token string) Outbound {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byToken[token]
}

// waitRemotely has the replica running the task of rec, if another one,
// send its run's requests to the client to reply while a tasks/result here
// waits for it; stop ends that.
func (s *Server) waitRemotely(rec taskRecord, reply Outbound) (stop func()) {
	if s.opts.Inbox == nil || rec.Origin == "" || rec.Origin == s.origin {
		return func() {}
	}
	w := taskWait{Task: rec.ID, Token: rand.Text(), From: s.origin}
	payload, _ := json.Marshal(w)
	s.remoteWaits.set(w.Token, reply)
	if err := s.pass(rec.Origin, inboxTaskWait, w.Token, payload); err != nil {
		s.log().Warn("telling the replica that runs a task that a tasks/result waits here failed: its requests to the client stay there", "err", err)
	}
	return func() {
		s.remoteWaits.set(w.Token, nil)
		if err := s.pass(rec.Origin, inboxTaskDone, w.Token, payload); err != nil {
			s.log().Debug("telling the replica that runs a task that a tasks/result stopped waiting here failed", "err", err)
		}
	}
}

// receivedForTask takes a message of the inbox about a task's waiters
// (of kind, for id, with payload): it reports whether it was one.
func (s *Server) receivedForTask(kind, id string, payload []byte) bool {
	switch kind {
	case inboxTaskMessage:
		if out := s.remoteWaits.get(id); out != nil {
			_ = out.Send(payload)
		}
	case inboxTaskWait, inboxTaskDone:
		var w taskWait
		if json.Unmarshal(payload, &w) != nil || w.Token != id {
			return true
		}
		l := s.tasks.live.get(w.Task)
		if l == nil {
			return true
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		switch {
		case kind == inboxTaskDone:
			l.detachLocked(func(o *waiter) bool { return o.token == w.Token })
		case !l.ended():
			l.attachLocked(&waiter{reply: &streamRelay{srv: s, to: w.From, kind: inboxTaskMessage, id: w.Token}, token: w.Token})
		}
	default:
		return false
	}
	return true
}
