package host

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/redistest"
)

// jsonTaskStore is a taskStore that sends every record through JSON on its
// way into and out of the in-memory store, as a shared backend would: a
// record field that does not survive JSON breaks the tests that run
// against it (forEachTaskStore).
type jsonTaskStore struct{ inner taskStore }

// roundTrip returns r as JSON brings it back. A record JSON cannot encode
// is a bug of the engine: it panics.
func roundTrip(r taskRecord) taskRecord {
	raw, err := json.Marshal(r)
	if err != nil {
		panic(fmt.Sprintf("a task record does not encode as JSON: %v", err))
	}
	var back taskRecord
	if err := json.Unmarshal(raw, &back); err != nil {
		panic(fmt.Sprintf("a task record does not decode from its JSON: %v", err))
	}
	return back
}

func (s jsonTaskStore) create(rec taskRecord, most, perOwner int) (taskRecord, error) {
	got, err := s.inner.create(roundTrip(rec), most, perOwner)
	return roundTrip(got), err
}

func (s jsonTaskStore) get(id string, owner taskOwner) (taskRecord, bool) {
	r, ok := s.inner.get(id, owner)
	return roundTrip(r), ok
}

func (s jsonTaskStore) list(owner taskOwner, after uint64, limit int, keep func(*taskRecord) bool) ([]taskRecord, bool) {
	page, more := s.inner.list(owner, after, limit, func(r *taskRecord) bool {
		back := roundTrip(*r)
		return keep(&back)
	})
	for i := range page {
		page[i] = roundTrip(page[i])
	}
	return page, more
}

func (s jsonTaskStore) update(id string, change func(*taskRecord) bool) (taskRecord, bool) {
	r, ok := s.inner.update(id, func(r *taskRecord) bool {
		back := roundTrip(*r)
		if !change(&back) {
			return false
		}
		*r = roundTrip(back)
		return true
	})
	return roundTrip(r), ok
}

func (s jsonTaskStore) remove(id string) { s.inner.remove(id) }

func (s jsonTaskStore) counts() map[string]int { return s.inner.counts() }

// taskStoreCase is a task store the task tests run against.
type taskStoreCase struct {
	name     string
	newStore func() taskStore
}

// use gives srv, which has no task yet, a new store of the case, and
// returns srv.
func (c taskStoreCase) use(srv *Server) *Server {
	srv.tasks.store = c.newStore()
	return srv
}

// forEachTaskStore runs test as a subtest against each task store: the
// in-memory one, and jsonTaskStore around it.
func forEachTaskStore(t *testing.T, test func(*testing.T, taskStoreCase)) {
	r := redistest.Start(t)
	stores := 0
	for _, c := range []taskStoreCase{
		{"memory", func() taskStore { return newMemoryTaskStore() }},
		{"json", func() taskStore { return jsonTaskStore{newMemoryTaskStore()} }},
		{"redis", func() taskStore { // a store of its own keys in a real Redis
			stores++
			return &sharedTasks{backend: r.Store(fmt.Sprintf("t%d:", stores)), seal: newRecordSeal(newStateKeys(nil)), logger: slog.New(slog.DiscardHandler)}
		}},
	} {
		t.Run(c.name, func(t *testing.T) { test(t, c) })
	}
}

// allTasks returns every record of owner's in the server's store.
func allTasks(srv *Server, owner taskOwner) []taskRecord {
	page, _ := srv.tasks.store.list(owner, 0, DefaultMaxTasks, func(*taskRecord) bool { return true })
	return page
}

// The store bounds the records of each owner and in all, finds a record
// only for its owner and until its ttl, lists an owner's records in pages
// in creation order, changes a record only when asked to, and forgets a
// removed record and its count.
func TestTaskStore(t *testing.T) { forEachTaskStore(t, testTaskStore) }

func testTaskStore(t *testing.T, store taskStoreCase) {
	s := store.newStore()
	alice, bob := taskOwner{Subject: "alice"}, taskOwner{Session: "7"}
	now := time.Now()
	create := func(id string, owner taskOwner, ttl time.Duration) error {
		_, err := s.create(taskRecord{ID: id, Owner: owner, Created: now, TTL: ttl, Status: taskWorking}, 3, 2)
		return err
	}
	for _, id := range []string{"a1", "a2"} {
		if err := create(id, alice, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if err := create("a3", alice, time.Hour); err == nil {
		t.Error("a third record of alice's, beyond 2 per owner: created")
	}
	if err := create("b1", bob, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := create("b2", bob, time.Hour); err == nil {
		t.Error("a fourth record, beyond 3 in all: created")
	}
	if _, ok := s.get("a1", bob); ok {
		t.Error("bob found alice's record")
	}
	s.remove("b1")
	if err := create("b3", bob, time.Nanosecond); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.get("b3", bob); ok {
		t.Error("bob found his expired record")
	}
	if page, more := s.list(alice, 0, 1, func(*taskRecord) bool { return true }); len(page) != 1 || page[0].ID != "a1" || !more {
		t.Errorf("alice's first page of 1: %v, more %v", page, more)
	}
	if page, more := s.list(alice, 1, 1, func(*taskRecord) bool { return true }); len(page) != 1 || page[0].ID != "a2" || more {
		t.Errorf("alice's second page of 1: %v, more %v", page, more)
	}
	if r, _ := s.update("a1", func(r *taskRecord) bool { r.Status = taskFailed; return false }); r.Status != taskWorking {
		t.Errorf("a change refused: status %s", r.Status)
	}
	if r, _ := s.update("a1", func(r *taskRecord) bool { r.Status = taskCompleted; return true }); r.Status != taskCompleted {
		t.Errorf("a change made: status %s", r.Status)
	}
	s.remove("a1")
	if _, ok := s.get("a1", alice); ok {
		t.Error("a removed record found")
	}
	if err := create("a4", alice, time.Hour); err != nil {
		t.Errorf("alice after a removal: %v", err)
	}
}

// A task record is plain data: exported fields that JSON encodes, of
// strings, numbers, times and JSON, and no func, channel or interface,
// which could not reach a shared backend. (jsonTaskStore catches a field
// that does not come back as it went.)
func TestTaskRecordIsPlainData(t *testing.T) {
	timeType := reflect.TypeFor[time.Time]()
	seen := map[reflect.Type]bool{}
	var check func(path string, typ reflect.Type)
	check = func(path string, typ reflect.Type) {
		if typ == timeType || seen[typ] {
			return
		}
		seen[typ] = true
		switch typ.Kind() {
		case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		case reflect.Pointer, reflect.Slice, reflect.Array:
			check(path+"[]", typ.Elem())
		case reflect.Map:
			check(path+"[key]", typ.Key())
			check(path+"[]", typ.Elem())
		case reflect.Struct:
			for f := range typ.Fields() {
				if tag := f.Tag.Get("json"); !f.IsExported() || tag == "-" || strings.HasPrefix(tag, "-,") {
					t.Errorf("%s.%s: not encoded as JSON", path, f.Name)
					continue
				}
				check(path+"."+f.Name, f.Type)
			}
		default:
			t.Errorf("%s: a %s is not data", path, typ.Kind())
		}
	}
	check("taskRecord", reflect.TypeFor[taskRecord]())
}

// The store counts its records by status, of every owner, leaving out
// those past their ttl.
func TestTaskStoreCountsByStatus(t *testing.T) {
	forEachTaskStore(t, func(t *testing.T, c taskStoreCase) {
		s := c.newStore()
		now := time.Now()
		for i, r := range []struct {
			owner  string
			status string
			ttl    time.Duration
		}{
			{"alice", taskWorking, time.Hour},
			{"bob", taskWorking, time.Hour},
			{"alice", taskCompleted, time.Hour},
			{"bob", taskFailed, time.Hour},
			{"bob", taskCompleted, -time.Minute}, // expired
		} {
			rec := taskRecord{ID: fmt.Sprint("t", i), Owner: taskOwner{Subject: r.owner}, Status: r.status, Created: now, TTL: r.ttl}
			if _, err := s.create(rec, 100, 100); err != nil {
				t.Fatal(err)
			}
		}
		want := map[string]int{taskWorking: 2, taskCompleted: 1, taskFailed: 1}
		if got := s.counts(); !reflect.DeepEqual(got, want) {
			t.Errorf("counts %v, want %v", got, want)
		}
	})
}
