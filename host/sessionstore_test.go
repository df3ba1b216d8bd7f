package host

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
)

// jsonSessionStore stands in for a store shared by several replicas: it
// holds each record as JSON, so that only what survives encoding comes
// back, and nothing the engine holds aliases what it stores.
type jsonSessionStore struct {
	mu      sync.Mutex
	records map[string][]byte
}

func newJSONSessionStore() sessionStore {
	return &jsonSessionStore{records: map[string][]byte{}}
}

func (s *jsonSessionStore) get(id, owner string) (sessionRecord, bool, error) {
	s.mu.Lock()
	raw, ok := s.records[id]
	s.mu.Unlock()
	if !ok {
		return sessionRecord{}, false, nil
	}
	var rec sessionRecord
	if err := json.Unmarshal(raw, &rec); err != nil || rec.Owner != owner {
		return sessionRecord{}, false, err
	}
	return rec, true, nil
}

func (s *jsonSessionStore) put(rec sessionRecord) error {
	raw, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records[rec.ID] = raw
	return nil
}

func (s *jsonSessionStore) touch(id string, at time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	raw, ok := s.records[id]
	if !ok {
		return false, nil
	}
	var rec sessionRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		return true, err
	}
	rec.LastUsed = at
	raw, err := json.Marshal(rec)
	s.records[id] = raw
	return true, err
}

func (s *jsonSessionStore) delete(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.records, id)
	return nil
}

// sessionStores are the stores the session-level tests run on: the
// default, in memory, and jsonSessionStore.
var sessionStores = []struct {
	name string
	new  func() sessionStore
}{{"memory", newMemorySessionStore}, {"json", newJSONSessionStore}}

// eachStore runs test once per session store, as a subtest. newServer is
// NewServer, whose sessions keep their state in that store.
func eachStore(t *testing.T, test func(t *testing.T, newServer func(Options, *Catalog) *Server)) {
	for _, store := range sessionStores {
		t.Run(store.name, func(t *testing.T) {
			test(t, func(opts Options, c *Catalog) *Server {
				srv := NewServer(opts, c)
				srv.sessionStore = store.new()
				return srv
			})
		})
	}
}

// A store finds a record only for its owner, keeps none of the slices put
// passes it, takes touches and forgets a deleted record.
func TestSessionStoresBindARecordToItsOwner(t *testing.T) {
	for _, store := range sessionStores {
		t.Run(store.name, func(t *testing.T) {
			s := store.new()
			scopes := []string{"read"}
			rec := sessionRecord{ID: "1", Owner: "alice", Version: Version20251125, ClientCaps: json.RawMessage(`{"roots":{}}`), Scopes: scopes, LogLevel: defaultLogLevel}
			if err := s.put(rec); err != nil {
				t.Fatal(err)
			}
			scopes[0] = "write"
			for _, owner := range []string{"bob", ""} {
				if _, ok, err := s.get("1", owner); ok || err != nil {
					t.Errorf("%q found alice's record (err %v)", owner, err)
				}
			}
			at := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
			if ok, err := s.touch("1", at); !ok || err != nil {
				t.Fatalf("touching alice's record: %v, %v", ok, err)
			}
			if ok, err := s.touch("2", at); ok || err != nil {
				t.Fatalf("touching no record: %v, %v; want false", ok, err)
			}
			got, ok, err := s.get("1", "alice")
			if !ok || err != nil || !got.LastUsed.Equal(at) || !slices.Equal(got.Scopes, []string{"read"}) || string(got.ClientCaps) != `{"roots":{}}` {
				t.Fatalf("alice's record: %+v, %v, %v", got, ok, err)
			}
			if _, ok, _ := s.get("2", ""); ok {
				t.Error("touch created a record")
			}
			if err := s.delete("1"); err != nil {
				t.Fatal(err)
			}
			if _, ok, _ := s.get("1", "alice"); ok {
				t.Error("the deleted record is still found")
			}
		})
	}
}

// A session has a record from initialize until it closes, bound to the
// subject that initialized it, and used at every message; a session that
// is never initialized has none.
func TestASessionsRecordLivesFromInitializeToClose(t *testing.T) {
	eachStore(t, func(t *testing.T, newServer func(Options, *Catalog) *Server) {
		subject := func(context.Context) string { return "alice" }
		srv := newServer(Options{Subject: subject}, nil)
		h, idle := session(t, srv), session(t, srv)
		if _, ok, _ := srv.sessionStore.get(h.sess.id, "alice"); ok {
			t.Fatal("a record before initialize")
		}
		before := time.Now()
		initWithCaps(t, h, Version20250618, `{"sampling":{}}`)
		rec, ok, err := srv.sessionStore.get(h.sess.id, "alice")
		if !ok || err != nil || rec.Version != Version20250618 || !rec.Ready || rec.LastUsed.Before(before) || string(rec.ClientCaps) != `{"sampling":{}}` {
			t.Fatalf("after the handshake: %+v, %v, %v", rec, ok, err)
		}
		if _, ok, _ := srv.sessionStore.get(idle.sess.id, ""); ok {
			t.Error("a session never initialized has a record")
		}
		h.sess.Close()
		if _, ok, _ := srv.sessionStore.get(h.sess.id, "alice"); ok {
			t.Error("a closed session's record is still there")
		}
	})
}

// logging/setLevel chooses the least severe log message a session gets,
// info until it is called.
func TestSetLevelChoosesTheLogMessagesOfASession(t *testing.T) {
	eachStore(t, func(t *testing.T, newServer func(Options, *Catalog) *Server) {
		srv := newServer(Options{}, nil)
		logFn := serverFn(t, srv, "p", abi.HostNotifyLoggingMessage)
		srv.SetCatalog(BuildCatalog(t.Context(), []*Plugin{callerPlugin(func(ctx context.Context, in []byte) ([]byte, error) {
			return logFn(ctx, in)
		})}, nil))
		h := session(t, srv)
		initWithCaps(t, h, Version20251125, `{}`)
		for i, tc := range []struct {
			setLevel, level string
			logs            int
		}{{"", "debug", 0}, {"", "info", 1}, {"error", "warning", 0}, {"error", "critical", 1}, {"debug", "debug", 1}} {
			if tc.setLevel != "" {
				result(t, h.call(t, 100+i, "logging/setLevel", map[string]any{"level": tc.setLevel}))
			}
			h.send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"tools/call","params":{"name":"ask","arguments":{"level":"` + tc.level + `","data":"x"}}}`)
			if logs := h.logsBeforeResponse(t); logs != tc.logs {
				t.Errorf("level %q after setLevel %q: %d log messages, want %d", tc.level, tc.setLevel, logs, tc.logs)
			}
		}
	})
}

// logsBeforeResponse reads the messages sent to the client up to a
// response and returns how many were log messages.
func (h *harness) logsBeforeResponse(t *testing.T) int {
	t.Helper()
	logs := 0
	for m := h.out.next(t); m["method"] != nil || m["id"] == nil; m = h.out.next(t) {
		if m["method"] == "notifications/message" {
			logs++
		}
	}
	return logs
}

// A session with an id on its transport is recorded under the id's hash,
// the name any replica gives it, never under a name of this process's
// own; the raw id, the session's only credential without auth, is in
// neither the store nor the server's log.
func TestASessionIsRecordedUnderItsIdsHash(t *testing.T) {
	const id = "dGhlLXNlc3Npb24tY3JlZGVudGlhbA"
	store := newJSONSessionStore().(*jsonSessionStore)
	var logs strings.Builder
	srv := NewServer(Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))},
		BuildCatalog(t.Context(), []*Plugin{benchToolPlugin()}, nil))
	srv.sessionStore = store
	for _, sessionID := range []string{id, id + "-2"} {
		out := newRecorder()
		h := &harness{srv: srv, sess: srv.OpenSession(out, SessionOptions{Transport: TransportHTTP, ID: sessionID}), out: out}
		h.init(t, Version20251125)
	}
	store.mu.Lock()
	if len(store.records) != 2 {
		t.Errorf("%d records, want one a session", len(store.records))
	}
	for key, raw := range store.records {
		if (key != hashSession(id) && key != hashSession(id+"-2")) || strings.Contains(string(raw), id) {
			t.Errorf("the store holds %q: %s; want each record under its id's hash, without the id", key, raw)
		}
	}
	store.mu.Unlock()
	srv.sessions.all()[0].Close()
	if strings.Contains(logs.String(), id) {
		t.Errorf("the log holds a session id:\n%s", logs.String())
	}
}
