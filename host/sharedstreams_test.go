package host

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// nopStreamLog is a SharedStreamLog that keeps nothing.
type nopStreamLog struct{}

func (nopStreamLog) Append(context.Context, []string, [][]byte) error { return nil }
func (nopStreamLog) Read(ctx context.Context, _ string, _ func([]byte)) error {
	<-ctx.Done()
	return nil
}

// TestStreamNamesCarryTheirReplicaAndRequestIDs checks the names of
// logged streams: another replica finds in one the ids of the requests it
// answers (unless too long to carry), its own and standalone streams are
// not taken for another's logged one, and a name from a client that is
// not one is refused, whatever it holds.
func TestStreamNamesCarryTheirReplicaAndRequestIDs(t *testing.T) {
	opts := Options{StreamLog: nopStreamLog{}, SessionStore: nil}
	a, b := NewServer(opts, nil).NewSession(nil), NewServer(opts, nil).NewSession(nil)
	for _, ids := range []string{`7`, `"x-1"`, `[1,"two"]`, `"` + strings.Repeat("y", 200) + `"`} {
		name := a.StreamName(3, json.RawMessage(ids))
		got, standalone, ok := b.OtherReplicasStream(name)
		want := ids
		if len(ids) > 90 {
			want = "" // too long to carry
		}
		if !ok || standalone || string(got) != want {
			t.Errorf("ids %s: another replica reads %q %v (standalone %v) from %q, want %s", ids, got, ok, standalone, name, want)
		}
		if _, _, ok := a.OtherReplicasStream(name); ok {
			t.Errorf("%q: its own replica takes it for another's", name)
		}
	}
	standalone := a.StreamName(0, nil)
	_, isStandalone, elsewhere := b.OtherReplicasStream(standalone)
	_, _, ownElsewhere := a.OtherReplicasStream(standalone)
	if !elsewhere || !isStandalone || ownElsewhere {
		t.Errorf("standalone %q: to another replica, another's %v and standalone %v; to its own, another's %v", standalone, elsewhere, isStandalone, ownElsewhere)
	}
	for _, bad := range []string{"", "1", "1.abc.", "1.abcdefghijkl", "x.abcdefghijkl.", "1.abcdefghijk!.", "1.abcdefghijkl.!!", "1234567890.abcdefghijkl.", "1.abcdefghijkl." + strings.Repeat("A", 129)} {
		if _, _, ok := b.OtherReplicasStream(bad); ok {
			t.Errorf("%q is taken for a logged stream", bad)
		}
	}
	if plain := NewServer(Options{}, nil).NewSession(nil); plain.StreamName(3, json.RawMessage(`7`)) != "3" {
		t.Errorf("without a stream log a stream is named %q, want its number alone", plain.StreamName(3, nil))
	}
}

// FuzzOtherReplicasStream checks that any name a client sends is read
// without panic, and that the ids taken from one are valid JSON.
func FuzzOtherReplicasStream(f *testing.F) {
	sess := NewServer(Options{StreamLog: nopStreamLog{}}, nil).NewSession(nil)
	f.Add("1.abcdefghijkl.Nw")
	f.Add("0.abcdefghijkl.")
	f.Fuzz(func(t *testing.T, name string) {
		if ids, _, ok := sess.OtherReplicasStream(name); ok && len(ids) > 0 && !json.Valid(ids) {
			t.Errorf("%q gives ids %q, not JSON", name, ids)
		}
	})
}

// FuzzInboxMessage hands this replica's inbox any bytes, as whoever can
// write to Redis may: none is delivered to the session it names, whatever
// its kind (an answer, a stream message, a task's waiter), without the
// replicas' seal, and none panics.
func FuzzInboxMessage(f *testing.F) {
	srv := NewServer(Options{Inbox: fakeInbox{}}, nil)
	out := newRecorder()
	sess := srv.OpenSession(out, SessionOptions{Transport: TransportHTTP, ID: "fuzzed", Endpoint: "/mcp"})
	sess.stream = srv.origin // it holds its legacy stream here
	// What the replicas seal does reach it.
	srv.received(append([]byte(inboxMessage+" "+sess.id+"\n"), srv.seal.sealed(inboxMessage, sess.id, []byte(`{"jsonrpc":"2.0","method":"sealed"}`))...))
	select {
	case m := <-out.ch:
		if m["method"] != "sealed" {
			f.Fatalf("a sealed stream message: %v", m)
		}
	case <-time.After(5 * time.Second):
		f.Fatal("a sealed stream message did not reach the session")
	}
	out.mu.Lock()
	out.msgs = nil
	out.mu.Unlock()
	sealed := srv.seal.sealed(inboxMessage, "x", []byte(`{}`))
	for _, kind := range []string{inboxAnswer, inboxMessage, inboxTaskWait, inboxTaskDone, inboxTaskMessage} {
		f.Add([]byte(kind + " " + sess.id + "\nr1.k.bm90LWEtbWFj." + `{"jsonrpc":"2.0","method":"x"}`))
		f.Add(append([]byte(kind+" "+sess.id+"\n"), sealed...))
		f.Add([]byte(kind + " " + sess.id + "\n" + `{"jsonrpc":"2.0","method":"x"}`))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		srv.received(b)
		out.mu.Lock()
		n := len(out.msgs)
		out.mu.Unlock()
		if n > 0 {
			t.Fatalf("%q reached the session", b)
		}
	})
}
