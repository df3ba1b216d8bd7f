package host

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"
)

// SharedTaskStore holds the records of tasks (of both eras) in a backend
// that the replicas of one service share (Options.TaskStore, [state]
// backend = "redis"), so that a task created on one replica is found,
// listed, cancelled and read on any. As SharedSessionStore, it holds
// records sealed by the server. It names an owner by a key the server
// derives from it (a hash), and numbers each task at creation: an owner's
// tasks are listed in that order.
type SharedTaskStore interface {
	// CreateTask stores record as task id of owner, kept for ttl, and
	// returns its number, after every task's before, unless owner holds
	// perOwner unexpired tasks or the store holds most: then it returns
	// the bound that refused it, TaskBoundOwner or TaskBoundStore.
	CreateTask(ctx context.Context, id, owner string, record []byte, ttl time.Duration, most, perOwner int) (seq uint64, refused string, err error)
	// LoadTask returns the record of task id; ok is false when there is
	// none (it expired, or never was).
	LoadTask(ctx context.Context, id string) (record []byte, ok bool, err error)
	// ReplaceTask replaces the record of task id, keeping its expiry, if
	// it is still old; replaced is false when it changed or went since.
	ReplaceTask(ctx context.Context, id string, old, record []byte) (replaced bool, err error)
	// ListTasks calls each with up to limit of owner's unexpired tasks
	// numbered after after, in order, and reports whether more follow.
	ListTasks(ctx context.Context, owner string, after uint64, limit int, each func(id string, seq uint64, record []byte)) (more bool, err error)
	// RemoveTask removes task id of owner.
	RemoveTask(ctx context.Context, id, owner string) error
}

// The bounds SharedTaskStore.CreateTask says refused a task.
const (
	TaskBoundOwner = "owner" // the owner's: max_tasks_per_user
	TaskBoundStore = "store" // the service's: max_tasks
)

// sharedTasks is the taskStore over a SharedTaskStore: records sealed
// (recordSeal, bound to their id and so to their owner), owners named by
// ownerKey. Its counts are of the tasks this process created, with the
// status it last saw: a metric summed over replicas counts each task once.
type sharedTasks struct {
	backend SharedTaskStore
	seal    recordSeal
	logger  *slog.Logger

	mu      sync.Mutex
	created map[string]createdTask // by id
}

// createdTask is what sharedTasks keeps of a task this process created.
type createdTask struct {
	owner   string // ownerKey
	status  string
	expires time.Time
}

// ownerKey names owner in the shared store (storeName).
func ownerKey(owner taskOwner) string {
	b, _ := json.Marshal(owner)
	return storeName(b)
}

// storeName names who b says (a task's owner, the client the session
// limits count) in the keys of a shared store: a hash, so that keys reveal
// no subject or address.
func storeName(b []byte) string {
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:18])
}

// storeCall runs f with a context bounded by sharedStoreTimeout.
func storeCall[T any](f func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(context.Background(), sharedStoreTimeout)
	defer cancel()
	return f(ctx)
}

func (s *sharedTasks) create(rec taskRecord, most, perOwner int) (taskRecord, error) {
	sealed, err := s.seal.sealedJSON("task", rec.ID, rec)
	if err != nil {
		return taskRecord{}, err
	}
	owner := ownerKey(rec.Owner)
	type created struct {
		seq     uint64
		refused string
	}
	c, err := storeCall(func(ctx context.Context) (created, error) {
		seq, refused, err := s.backend.CreateTask(ctx, rec.ID, owner, sealed, rec.TTL, most, perOwner)
		return created{seq, refused}, err
	})
	switch {
	case err != nil:
		return taskRecord{}, rpcErrorf(CodeInternalError, "internal error: recording the task: %v", err)
	case c.refused == TaskBoundOwner:
		return taskRecord{}, rpcErrorf(CodeInternalError, "too many tasks: %s, the most [server] max_tasks_per_user allows; wait for some to end and expire", rec.Owner.holds(perOwner))
	case c.refused != "":
		return taskRecord{}, rpcErrorf(CodeInternalError, "server busy: the service holds %d tasks, the most [server] max_tasks allows; retry once some end and expire", most)
	}
	rec.Seq = c.seq
	s.mu.Lock()
	if s.created == nil {
		s.created = map[string]createdTask{}
	}
	s.created[rec.ID] = createdTask{owner: owner, status: rec.Status, expires: rec.Created.Add(rec.TTL)}
	s.mu.Unlock()
	return rec, nil
}

// open returns the record sealed of task id, or false when its seal does
// not hold or it does not decode (logged: someone wrote to the store).
func (s *sharedTasks) open(id string, sealed []byte) (taskRecord, bool) {
	var rec taskRecord
	err := s.seal.openJSON("task", id, sealed, &rec)
	if err == nil && rec.ID != id {
		err = errRecordSeal
	}
	if err != nil {
		s.logger.Warn("a task's record in the shared store is refused", "err", err)
		return taskRecord{}, false
	}
	return rec, true
}

// load reads task id's record: as stored, decoded, and whether there is
// one that opens.
func (s *sharedTasks) load(id string) ([]byte, taskRecord, bool) {
	sealed, err := storeCall(func(ctx context.Context) ([]byte, error) {
		b, ok, err := s.backend.LoadTask(ctx, id)
		if !ok && err == nil {
			b = nil
		}
		return b, err
	})
	if err != nil {
		s.logger.Warn("reading a task from the shared store failed", "err", err)
		return nil, taskRecord{}, false
	}
	if sealed == nil {
		return nil, taskRecord{}, false
	}
	rec, ok := s.open(id, sealed)
	return sealed, rec, ok
}

func (s *sharedTasks) get(id string, owner taskOwner) (taskRecord, bool) {
	_, rec, ok := s.load(id)
	now := time.Now()
	if !ok || rec.Owner != owner || rec.expired(now) {
		return taskRecord{}, false
	}
	if rec.lapsed(now) {
		rec = s.failLapsed(rec, now)
	}
	s.saw(rec)
	return rec, true
}

func (s *sharedTasks) list(owner taskOwner, after uint64, limit int, keep func(*taskRecord) bool) ([]taskRecord, bool) {
	key := ownerKey(owner)
	var out []taskRecord
	now := time.Now()
	for {
		full := false // limit records kept, and one more found
		more, err := storeCall(func(ctx context.Context) (bool, error) {
			return s.backend.ListTasks(ctx, key, after, limit+1-len(out), func(id string, seq uint64, record []byte) {
				after = seq
				rec, ok := s.open(id, record)
				if full || !ok || rec.Owner != owner || rec.expired(now) {
					return
				}
				if rec.lapsed(now) {
					rec = s.failLapsed(rec, now)
				}
				if !keep(&rec) {
					return
				}
				if len(out) == limit {
					full = true
					return
				}
				rec.Seq = seq
				out = append(out, rec)
			})
		})
		switch {
		case err != nil:
			s.logger.Warn("listing tasks in the shared store failed", "err", err)
			return out, false
		case full:
			return out, true
		case !more:
			return out, false
		}
	}
}

func (s *sharedTasks) update(id string, change func(*taskRecord) bool) (taskRecord, bool) {
	for {
		sealed, rec, ok := s.load(id)
		if !ok {
			return taskRecord{}, false
		}
		next := rec
		if !change(&next) {
			s.saw(rec)
			return rec, true
		}
		replacement, err := s.seal.sealedJSON("task", id, next)
		if err != nil {
			return rec, true
		}
		replaced, err := storeCall(func(ctx context.Context) (bool, error) {
			return s.backend.ReplaceTask(ctx, id, sealed, replacement)
		})
		if err != nil {
			s.logger.Warn("changing a task in the shared store failed", "err", err)
			return rec, true
		}
		if replaced {
			s.saw(next)
			return next, true
		}
		// Changed by another replica meanwhile: change the new record.
	}
}

func (s *sharedTasks) remove(id string) {
	s.mu.Lock()
	c, ok := s.created[id]
	delete(s.created, id)
	s.mu.Unlock()
	if !ok {
		return // only the replica that created a task removes it; the others let it expire
	}
	if _, err := storeCall(func(ctx context.Context) (struct{}, error) {
		return struct{}{}, s.backend.RemoveTask(ctx, id, c.owner)
	}); err != nil {
		s.logger.Warn("removing a task from the shared store failed", "err", err)
	}
}

func (s *sharedTasks) counts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	now := time.Now()
	for id, c := range s.created {
		if !now.Before(c.expires) {
			delete(s.created, id)
			continue
		}
		out[c.status]++
	}
	return out
}

// saw notes the status of a task this process created, as last read or
// written, for counts.
func (s *sharedTasks) saw(rec taskRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.created[rec.ID]; ok {
		c.status = rec.Status
		s.created[rec.ID] = c
	}
}

// DefaultTaskLease is how long a replica vouches for a task it runs in a
// shared store, unless Options.TaskLease says.
const DefaultTaskLease = 15 * time.Second

// sharedTaskPoll is how often a replica reads the records of the tasks it
// runs, to see what other replicas did to them (watchShared), and a
// tasks/result for a task another replica runs reads its record
// (taskSet.awaitEnd).
const sharedTaskPoll = 250 * time.Millisecond

// shared reports whether the tasks' records are in a shared store.
func (s *taskSet) shared() bool {
	_, ok := s.store.(*sharedTasks)
	return ok
}

// watchShared starts, unless it runs, the watch of the records of the
// tasks this process runs in a shared store: every sharedTaskPoll, a task
// another replica cancelled is interrupted here, and one whose answers
// another replica completed (2026-07-28 tasks/update) is replayed here. It
// stops when this process runs no task.
func (s *taskSet) watchShared() {
	st, ok := s.store.(*sharedTasks)
	if !ok {
		return
	}
	s.live.mu.Lock()
	if s.live.watching {
		s.live.mu.Unlock()
		return
	}
	s.live.watching = true
	s.live.mu.Unlock()
	go func() {
		tick := time.NewTicker(sharedTaskPoll)
		defer tick.Stop()
		for range tick.C {
			s.live.mu.Lock()
			live := slices.Collect(maps.Values(s.live.byID))
			if len(live) == 0 {
				s.live.watching = false
				s.live.mu.Unlock()
				return
			}
			s.live.mu.Unlock()
			for _, l := range live {
				if _, rec, ok := st.load(l.id); ok {
					l.follow(rec)
				}
				s.renew(st, l)
			}
		}
	}()
}

// renew renews the lease of a task this replica runs (Options.TaskLease),
// a third of the way through it.
func (s *taskSet) renew(st *sharedTasks, l *liveTask) {
	now := time.Now()
	l.mu.Lock()
	due := s.lease > 0 && !l.ended() && now.Sub(l.renewed) >= s.lease/3
	if due {
		l.renewed = now
	}
	l.mu.Unlock()
	if !due {
		return
	}
	st.update(l.id, func(r *taskRecord) bool {
		if isTerminal(r.Status) {
			return false
		}
		r.Runner, r.Lease = s.replica, now.Add(s.lease)
		return true
	})
}

// failLapsed ends as failed, naming its replica, the task of rec, which
// its replica stopped vouching for before now (taskRecord.lapsed): that
// replica was lost (killed, cut off), and the call is not run again
// elsewhere, since a tool may have side effects. It returns the record as
// it is then.
func (s *sharedTasks) failLapsed(rec taskRecord, now time.Time) taskRecord {
	ended, ok := s.update(rec.ID, func(r *taskRecord) bool {
		if !r.lapsed(now) {
			return false
		}
		lost := rpcErrorf(CodeInternalError, "task failed: the replica that ran it (%s) was lost: it stopped renewing the task's lease, which ended %s; the call is not run again elsewhere, as a tool may have side effects",
			r.Runner, r.Lease.UTC().Format(time.RFC3339))
		failedOutcome(lost).apply(r)
		r.Pending = nil
		return true
	})
	if !ok {
		return rec
	}
	if ended.Status == taskFailed {
		s.logger.Warn("task failed: the replica that ran it was lost", "request", ended.What, "replica", ended.Runner, "subject", ended.Owner.Subject)
	}
	return ended
}

// follow takes what another replica did to the task's record, rec: a
// cancellation interrupts the run; answers completed replay it.
func (l *liveTask) follow(rec taskRecord) {
	switch {
	case rec.Status == taskCancelled:
		l.mu.Lock()
		if l.ended() {
			l.mu.Unlock()
			return
		}
		l.final = rec
		close(l.done)
		l.mu.Unlock()
		l.cancel()
		l.srv.logger.Info("task cancelled on another replica", "request", rec.What, "subject", rec.Owner.Subject)
	case rec.Status == taskWorking && len(rec.Pending) == 0 && rec.Answers != nil:
		l.replay(replayRound(maps.Clone(rec.Answers)))
	}
}
