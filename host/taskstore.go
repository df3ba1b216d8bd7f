package host

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Where a task lives (RATIONALE.md, "One task store for both protocol
// eras"): its record, plain data, is in a taskStore, which a shared
// backend may hold for several processes; what only the process running
// it can hold (the run's cancel function, the requests to the client
// waiting for a tasks/result, the tasks/result waiting for its end) is a
// liveTask (task.go). The store is in memory unless a test says otherwise.

// taskOwner is whom a task belongs to, and counts against: the
// authenticated subject of the creating request or, without one, the
// 2025-11-25 session that created it; the tasks of 2026-07-28 requests
// without authentication share the zero owner, where the unguessable id
// is what grants access.
type taskOwner struct {
	Subject string `json:"subject,omitempty"`
	Session string `json:"session,omitempty"`
}

// holds says, in an error, that the owner holds n tasks.
func (o taskOwner) holds(n int) string {
	switch {
	case o.Subject != "":
		return fmt.Sprintf("user %q holds %d tasks", o.Subject, n)
	case o.Session != "":
		return fmt.Sprintf("this session holds %d tasks", n)
	}
	return fmt.Sprintf("the unauthenticated 2026-07-28 requests hold %d tasks together", n)
}

// taskRecord is a task as the store keeps it: plain data, that survives a
// trip through JSON.
type taskRecord struct {
	ID    string    `json:"id"`
	Seq   uint64    `json:"seq"` // creation order in the store, for tasks/list
	Era   string    `json:"era"` // the taskWire whose methods see it
	Owner taskOwner `json:"owner"`
	What  string    `json:"what"` // the request, for logs
	// Plugin runs the task, which only requests that see the plugin (with
	// the Scopes it required then) see.
	Plugin  string        `json:"plugin"`
	Scopes  []string      `json:"scopes,omitempty"`
	Created time.Time     `json:"created"`
	Updated time.Time     `json:"updated"`
	TTL     time.Duration `json:"ttl"` // from creation; then the record goes
	Poll    time.Duration `json:"poll"`
	Status  string        `json:"status"`
	Message string        `json:"message,omitempty"`
	// Result or Error is the outcome: exactly the response the call would
	// have had.
	Result json.RawMessage `json:"result,omitempty"`
	Error  *RPCError       `json:"error,omitempty"`
	// Pending are the questions a 2026-07-28 task waits for in
	// input_required, and Answers those answered so far, by key.
	Pending map[string]pendingQuestion `json:"pending,omitempty"`
	Answers map[string]recordedAnswer  `json:"answers,omitempty"`
	// Runner names the replica that runs the task, in a shared store, and
	// Lease is until when it vouches for it (Options.TaskLease): past it,
	// the task has failed with its replica.
	Runner string    `json:"runner,omitempty"`
	Lease  time.Time `json:"lease,omitzero"`
	// Origin is the process name of the replica that runs it (the inbox
	// its tasks/result requests elsewhere reach it by: sharedtaskwait.go).
	Origin string `json:"origin,omitempty"`
}

// lapsed reports whether the task still runs, as far as the record says,
// though its replica stopped renewing its lease before now.
func (r *taskRecord) lapsed(now time.Time) bool {
	return !isTerminal(r.Status) && !r.Lease.IsZero() && now.After(r.Lease)
}

// expired reports whether the record's ttl has elapsed at now.
func (r *taskRecord) expired(now time.Time) bool { return !now.Before(r.Created.Add(r.TTL)) }

// setStatus moves the record to status.
func (r *taskRecord) setStatus(status, message string) {
	r.Status, r.Message, r.Updated = status, message, time.Now()
}

// taskStore holds the records of a server's tasks, by id. Records go in and
// out by value: a record changes only through update, atomically, which is
// how a status change, an outcome or a cancellation (the cancelled status)
// is recorded.
type taskStore interface {
	// create takes a new record and returns it numbered after every
	// record before it, unless its owner holds perOwner records already
	// or the store most: the error says which.
	create(rec taskRecord, most, perOwner int) (taskRecord, error)
	// get returns the record id of owner's; a record of another owner, or
	// expired, is not found.
	get(id string, owner taskOwner) (taskRecord, bool)
	// list returns, oldest first, up to limit of owner's records numbered
	// after after that keep accepts, and whether more follow.
	list(owner taskOwner, after uint64, limit int, keep func(*taskRecord) bool) ([]taskRecord, bool)
	// update applies change to the record id, unless change reports
	// false, and returns the record as it is then; false when there is
	// none.
	update(id string, change func(*taskRecord) bool) (taskRecord, bool)
	// remove drops the record id, at the end of its ttl or of its owner.
	remove(id string)
	// counts returns how many records there are of each status, expired
	// ones left out.
	counts() map[string]int
}

// memoryTaskStore is the taskStore of one process.
type memoryTaskStore struct {
	mu       sync.Mutex
	records  map[string]*taskRecord
	perOwner map[taskOwner]int
	seq      uint64
}

// newMemoryTaskStore returns an empty store.
func newMemoryTaskStore() *memoryTaskStore {
	return &memoryTaskStore{records: map[string]*taskRecord{}, perOwner: map[taskOwner]int{}}
}

func (s *memoryTaskStore) create(rec taskRecord, most, perOwner int) (taskRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.perOwner[rec.Owner] >= perOwner {
		return taskRecord{}, rpcErrorf(CodeInternalError, "too many tasks: %s, the most [server] max_tasks_per_user allows; wait for some to end and expire", rec.Owner.holds(perOwner))
	}
	if len(s.records) >= most {
		return taskRecord{}, rpcErrorf(CodeInternalError, "server busy: the server holds %d tasks, the most [server] max_tasks allows; retry once some end and expire", most)
	}
	s.seq++
	rec.Seq = s.seq
	s.records[rec.ID] = &rec
	s.perOwner[rec.Owner]++
	return rec, nil
}

func (s *memoryTaskStore) get(id string, owner taskOwner) (taskRecord, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.records[id]
	if !ok || r.Owner != owner || r.expired(time.Now()) {
		return taskRecord{}, false
	}
	return *r, true
}

func (s *memoryTaskStore) list(owner taskOwner, after uint64, limit int, keep func(*taskRecord) bool) ([]taskRecord, bool) {
	s.mu.Lock()
	var out []taskRecord
	now := time.Now()
	for _, r := range s.records {
		if r.Seq > after && r.Owner == owner && !r.expired(now) && keep(r) {
			out = append(out, *r)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b taskRecord) int { return cmp.Compare(a.Seq, b.Seq) })
	if len(out) > limit {
		return out[:limit], true
	}
	return out, false
}

func (s *memoryTaskStore) update(id string, change func(*taskRecord) bool) (taskRecord, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.records[id]
	if !ok {
		return taskRecord{}, false
	}
	if next := *r; change(&next) {
		*r = next
	}
	return *r, true
}

func (s *memoryTaskStore) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.records[id]
	if !ok {
		return
	}
	delete(s.records, id)
	if s.perOwner[r.Owner]--; s.perOwner[r.Owner] <= 0 {
		delete(s.perOwner, r.Owner)
	}
}

func (s *memoryTaskStore) counts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	now := time.Now()
	for _, r := range s.records {
		if !r.expired(now) {
			out[r.Status]++
		}
	}
	return out
}
