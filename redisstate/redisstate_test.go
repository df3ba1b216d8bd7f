package redisstate_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/redistest"
	"github.com/mcphost/mcphost/redisstate"
)

// TestRedissTrustsItsCAOnly connects to a Redis that takes only TLS: with
// the server's CA (as [state] ca_file gives it) records go in and out; with
// the system's roots the connection is refused, with an error naming the
// server and the certificate; a wrong password is refused, naming the
// server and never showing the password.
func TestRedissTrustsItsCAOnly(t *testing.T) {
	r := redistest.StartTLS(t)
	pem, err := os.ReadFile(r.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	store, err := redisstate.Open(redisstate.Options{URL: r.URL(), Password: r.Password, Prefix: "tls:", TLS: &tls.Config{RootCAs: roots}})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if err := store.Save(ctx, "s1", []byte("record"), time.Minute); err != nil {
		t.Fatalf("saving over rediss://: %v", err)
	}
	if got, ok, err := store.Load(ctx, "s1"); err != nil || !ok || string(got) != "record" {
		t.Errorf("loading over rediss://: %q, %v, %v", got, ok, err)
	}
	if ok, err := store.Touch(ctx, "s1", time.Minute); !ok || err != nil {
		t.Errorf("touching the record: %v, %v", ok, err)
	}
	if err := store.Delete(ctx, "s1"); err != nil {
		t.Errorf("deleting the record: %v", err)
	}
	if ok, err := store.Touch(ctx, "s1", time.Minute); ok || err != nil {
		t.Errorf("touching a deleted record: %v, %v; want false", ok, err)
	}

	for name, opts := range map[string]redisstate.Options{
		"the system's roots": {URL: r.URL(), Password: r.Password},
		"a wrong password":   {URL: r.URL(), Password: "not-" + r.Password, TLS: &tls.Config{RootCAs: roots}},
	} {
		s, err := redisstate.Open(opts)
		if err != nil {
			t.Fatal(err)
		}
		err = s.Ping(ctx)
		s.Close()
		switch {
		case err == nil:
			t.Errorf("with %s: connected", name)
		case !strings.Contains(err.Error(), "redis at "+r.Addr):
			t.Errorf("with %s: %v, want an error naming the server", name, err)
		case strings.Contains(err.Error(), r.Password):
			t.Errorf("with %s: the error shows the password: %v", name, err)
		}
	}
}

// TestShareSumsTheLiveReplicasDemands records demands of one limit from
// three replicas (three Stores, as three processes open them) as the ACL
// user: each sees the sum of the demands that count and how many replicas
// hold the limit; a demand past its TTL no longer counts, a replica past
// its presence no longer holds the limit, a second limit is apart, the
// hash expires, and a malformed field is dropped.
func TestShareSumsTheLiveReplicasDemands(t *testing.T) {
	r := redistest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a, b, c := r.Store("rates:"), r.Store("rates:"), r.Store("rates:")
	share := func(s *redisstate.Store, key string, demand float64, demandTTL, presenceTTL time.Duration, wantTotal float64, wantN int, what string) {
		t.Helper()
		if total, n, err := s.Share(ctx, key, demand, demandTTL, presenceTTL); err != nil || total != wantTotal || n != wantN {
			t.Errorf("%s: %v, %v, %v; want %v, %v", what, total, n, err, wantTotal, wantN)
		}
	}
	share(a, "echo", 2.5, time.Minute, time.Minute, 2.5, 1, "the first replica's demand")
	share(b, "echo", 7, time.Minute, time.Minute, 9.5, 2, "the second replica's demand")
	share(a, "echo", 0.5, time.Minute, time.Minute, 7.5, 2, "the first replica's demand again: its own replaced")
	share(c, "other", 1, time.Minute, time.Minute, 1, 1, "another limit's demand: apart")
	share(c, "echo", 3, 100*time.Millisecond, 300*time.Millisecond, 10.5, 3, "a third replica's short demand")
	time.Sleep(150 * time.Millisecond)
	share(a, "echo", 0.5, time.Minute, time.Minute, 7.5, 3, "after the third replica's demand ended: it still holds the limit")
	time.Sleep(200 * time.Millisecond)
	share(a, "echo", 0.5, time.Minute, time.Minute, 7.5, 2, "after the third replica's presence ended")
	ttl, err := r.Do("PTTL", "rates:rate:echo")
	if err != nil || ttl == "-1" || ttl == "-2" {
		t.Errorf("the demands' hash has no TTL: %q, %v", ttl, err)
	}
	if _, err := r.Do("HSET", "rates:rate:echo", "forged", "lots"); err != nil {
		t.Fatal(err)
	}
	share(b, "echo", 7, time.Minute, time.Minute, 7.5, 2, "with a malformed field in the hash: dropped")
}

// TestAnnounceListsTheOtherLiveReplicas announces three replicas' records
// as the ACL user: each sees the others' records, not its own; a record
// past its TTL is gone, as is a withdrawn one.
func TestAnnounceListsTheOtherLiveReplicas(t *testing.T) {
	r := redistest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a, b, c := r.Store("reps:"), r.Store("reps:"), r.Store("reps:")
	announce := func(s *redisstate.Store, record string, ttl time.Duration, want ...string) {
		t.Helper()
		got, err := s.Announce(ctx, []byte(record), ttl)
		var texts []string
		for _, g := range got {
			texts = append(texts, string(g))
		}
		slices.Sort(texts)
		if err != nil || !slices.Equal(texts, want) {
			t.Errorf("%s announced: %q, %v; want %q", record, texts, err, want)
		}
	}
	announce(a, "a1", time.Minute)
	announce(b, "b1", time.Minute, "a1")
	announce(c, "c1", 200*time.Millisecond, "a1", "b1")
	announce(a, "a2", time.Minute, "b1", "c1")
	time.Sleep(300 * time.Millisecond)
	announce(b, "b2", time.Minute, "a2")
	if err := a.Withdraw(ctx); err != nil {
		t.Fatal(err)
	}
	announce(b, "b3", time.Minute)
	if ttl, err := r.Do("PTTL", "reps:replicas"); err != nil || ttl == "-1" || ttl == "-2" {
		t.Errorf("the replicas' set has no TTL: %q, %v", ttl, err)
	}
}

// TestValuesAreCapped opens a store whose values may hold 64 bytes: a
// longer session or task record is refused as it is written, and one
// written to Redis behind the store's back is refused unread, by a load
// and by a listing, which leaves it out.
func TestValuesAreCapped(t *testing.T) {
	r := redistest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	store, err := redisstate.Open(redisstate.Options{URL: r.URL(), Password: r.Password, Prefix: "cap:", MaxValueBytes: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	fits, long := []byte(strings.Repeat("x", 64)), []byte(strings.Repeat("x", 65))
	if err := store.Save(ctx, "s1", fits, time.Minute); err != nil {
		t.Fatalf("a record of 64 bytes: %v", err)
	}
	if got, ok, err := store.Load(ctx, "s1"); err != nil || !ok || len(got) != 64 {
		t.Errorf("loading a record of 64 bytes: %d bytes, %v, %v", len(got), ok, err)
	}
	if err := store.Save(ctx, "s2", long, time.Minute); err == nil || !strings.Contains(err.Error(), "a session's record of 65 bytes is more than the 64 a value may hold") {
		t.Errorf("saving a record of 65 bytes: %v, want it refused", err)
	}
	if _, _, err := store.CreateTask(ctx, "t1", "o", long, time.Minute, 10, 10); err == nil || !strings.Contains(err.Error(), "a task's record of 65 bytes") {
		t.Errorf("creating a task of 65 bytes: %v, want it refused", err)
	}
	if _, _, err := store.CreateTask(ctx, "t2", "o", fits, time.Minute, 10, 10); err != nil {
		t.Fatal(err)
	}
	if ok, err := store.ReplaceTask(ctx, "t2", fits, long); ok || err == nil {
		t.Errorf("replacing a task's record by 65 bytes: %v, %v, want it refused", ok, err)
	}
	if _, _, err := store.CreateTask(ctx, "t3", "o", fits, time.Minute, 10, 10); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"cap:session:s1", "cap:task:t2"} {
		if _, err := r.Do("SET", key, strings.Repeat("y", 1<<20)); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok, err := store.Load(ctx, "s1"); ok || err == nil || !strings.Contains(err.Error(), "cap:session:s1 holds 1048576 bytes, more than the 64 a value may (refused unread)") {
		t.Errorf("loading a forged record of 1 MiB: %v, %v; want it refused unread", ok, err)
	}
	if _, ok, err := store.LoadTask(ctx, "t2"); ok || err == nil {
		t.Errorf("loading a forged task record of 1 MiB: %v, %v; want it refused", ok, err)
	}
	var listed []string
	if _, err := store.ListTasks(ctx, "o", 0, 10, func(id string, _ uint64, record []byte) { listed = append(listed, id) }); err != nil || !slices.Equal(listed, []string{"t3"}) {
		t.Errorf("listing with a forged record of 1 MiB: %v, %v; want only t3", listed, err)
	}
}

// TestAnInboxHoldsWhatWasSentBeforeItsReaderStarted sends two messages to
// a replica's inbox before the replica reads it, and one after: it
// receives all three, in order; another replica's inbox is apart.
func TestAnInboxHoldsWhatWasSentBeforeItsReaderStarted(t *testing.T) {
	r := redistest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sender, reader := r.Store("in:"), r.Store("in:")
	for _, msg := range []string{"one", "two"} {
		if err := sender.Send(ctx, "a", []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	if err := sender.Send(ctx, "b", []byte("not a's")); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 10)
	go func() { _ = reader.Receive(ctx, "a", func(msg []byte) { got <- string(msg) }) }()
	var seen []string
	for len(seen) < 2 {
		select {
		case m := <-got:
			seen = append(seen, m)
		case <-ctx.Done():
			t.Fatalf("received %q, want the two messages sent before the reader started", seen)
		}
	}
	if err := sender.Send(ctx, "a", []byte("three")); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-got:
		seen = append(seen, m)
	case <-ctx.Done():
	}
	if !slices.Equal(seen, []string{"one", "two", "three"}) {
		t.Errorf("received %q, want one, two, three", seen)
	}
}

// TestAURLElicitationIsTakenOnce holds a URL elicitation, and has many
// stores take it at once: one gets it, the others find none; a value
// over the cap is refused, and one forged over it in Redis is not read.
func TestAURLElicitationIsTakenOnce(t *testing.T) {
	r := redistest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	store, err := redisstate.Open(redisstate.Options{URL: r.URL(), Password: r.Password, Prefix: "el:", MaxValueBytes: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if err := store.Hold(ctx, "k", []byte("where"), time.Minute); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []string
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			v, ok, err := r.Store("el:").Take(ctx, "k")
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				got = append(got, string(v))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(got) != 1 || got[0] != "where" {
		t.Errorf("8 takes at once got %q, want one \"where\"", got)
	}
	if err := store.Hold(ctx, "k2", []byte(strings.Repeat("x", 65)), time.Minute); err == nil {
		t.Error("a value of 65 bytes was held, over the cap of 64")
	}
	if _, err := r.Do("SET", "el:elicitation:k3", strings.Repeat("x", 65)); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := store.Take(ctx, "k3"); ok || err == nil {
		t.Errorf("taking a value of 65 bytes forged in Redis: %v %v, want it refused unread", ok, err)
	}
}

// TestStreamLogReadsKeepToTheirOwnConnections starts more blocking reads
// of stream logs than they have connections, as a client's resumptions
// may: the other commands still get a connection at once.
func TestStreamLogReadsKeepToTheirOwnConnections(t *testing.T) {
	r := redistest.Start(t)
	store := r.Store("lr:")
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range 48 {
		wg.Go(func() { _ = store.Read(ctx, fmt.Sprint("log", i), func([]byte) {}) })
	}
	defer wg.Wait()
	defer cancel()
	time.Sleep(300 * time.Millisecond)
	for range 3 {
		began := time.Now()
		if err := store.Save(context.Background(), "s", []byte("rec"), time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := store.Load(context.Background(), "s"); !ok || err != nil {
			t.Fatalf("load: %v %v", ok, err)
		}
		if took := time.Since(began); took > 300*time.Millisecond {
			t.Errorf("a save and a load took %v while 48 logs were read", took)
		}
	}
}
