package pluginhost

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"
)

func TestRateLimiterIsATokenBucket(t *testing.T) {
	clock := &fakeClock{t: time.Unix(0, 0)}
	logger := slog.New(slog.DiscardHandler)
	b := newRateLimiter("p", 2, nil, logger, clock.now)
	if !b.take() || !b.take() || b.take() {
		t.Fatal("a bucket of 2 does not allow exactly 2 calls at once")
	}
	clock.add(500 * time.Millisecond)
	if !b.take() || b.take() {
		t.Fatal("half a second at 2/s does not refill exactly one call")
	}
	slow := newRateLimiter("p", 0.5, nil, logger, clock.now)
	if !slow.take() || slow.take() {
		t.Fatal("a rate below 1 still allows one call at once")
	}
	clock.add(2 * time.Second)
	if !slow.take() {
		t.Fatal("2 s at 0.5/s does not refill one call")
	}
}

// shareBoard is a RateShares backend in memory that several replicas
// share, on a fake clock; down makes it fail as a backend that does not
// answer.
type shareBoard struct {
	clock *fakeClock
	mu    sync.Mutex
	asked map[string]shareEntry // by replica
	down  bool
}

type shareEntry struct {
	demand            float64
	demandEnds, holds time.Time
}

// replicaShares is one replica's RateShares on a board.
type replicaShares struct {
	board   *shareBoard
	replica string
}

func (r replicaShares) Share(_ context.Context, _ string, demand float64, demandTTL, presenceTTL time.Duration) (float64, int, error) {
	b := r.board
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.down {
		return 0, 0, errors.New("redis at 127.0.0.1:1: connection refused")
	}
	now := b.clock.now()
	b.asked[r.replica] = shareEntry{demand, now.Add(demandTTL), now.Add(presenceTTL)}
	var total float64
	n := 0
	for _, e := range b.asked {
		if e.demandEnds.After(now) {
			total += e.demand
		}
		if e.holds.After(now) {
			n++
		}
	}
	return total, n, nil
}

// replicaLimits are the limiters of one plugin's limit on several
// replicas sharing a board.
type replicaLimits struct {
	clock    *fakeClock
	board    *shareBoard
	limiters []*rateLimiter
}

func newReplicaLimits(limit float64, replicas int) *replicaLimits {
	clock := &fakeClock{t: time.Unix(0, 0)}
	r := &replicaLimits{clock: clock, board: &shareBoard{clock: clock, asked: map[string]shareEntry{}}}
	for i := range replicas {
		r.limiters = append(r.limiters, newRateLimiter("p", limit,
			replicaShares{r.board, string(rune('a' + i))}, slog.New(slog.DiscardHandler), clock.now))
	}
	return r
}

// settle waits until no limiter exchanges demands.
func (r *replicaLimits) settle(t *testing.T) {
	t.Helper()
	for _, l := range r.limiters {
		for deadline := time.Now().Add(5 * time.Second); ; {
			l.mu.Lock()
			busy := l.sharing
			l.mu.Unlock()
			if !busy {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("an exchange of demands does not end")
			}
			time.Sleep(50 * time.Microsecond)
		}
	}
}

// run asks each replica for asked[i] calls a second during d, in steps of
// 10 ms, and returns the calls each admitted.
func (r *replicaLimits) run(t *testing.T, d time.Duration, asked []float64) []int {
	t.Helper()
	const step = 10 * time.Millisecond
	admitted := make([]int, len(r.limiters))
	owed := make([]float64, len(r.limiters))
	for elapsed := time.Duration(0); elapsed < d; elapsed += step {
		r.clock.add(step)
		for i, l := range r.limiters {
			for owed[i] += asked[i] * step.Seconds(); owed[i] >= 1; owed[i]-- {
				if l.take() {
					admitted[i]++
				}
			}
		}
		r.settle(t)
	}
	return admitted
}

func sum(ns []int) int {
	s := 0
	for _, n := range ns {
		s += n
	}
	return s
}

func TestRateSharesHoldTheLimitAcrossReplicas(t *testing.T) {
	r := newReplicaLimits(30, 3)
	r.run(t, time.Second, []float64{20, 20, 20}) // the shares settle
	got := r.run(t, 10*time.Second, []float64{20, 20, 20})
	// 60 calls a second asked, each replica's 20 below the limit of 30:
	// alone, each would admit them all (600).
	if total := sum(got); total < 285 || total > 315 {
		t.Errorf("three replicas asked 20/s each of a limit of 30/s admitted %d calls in 10 s (%v), want 300±15", total, got)
	}
	for i, n := range got {
		if n < 90 || n > 110 {
			t.Errorf("replica %d admitted %d calls in 10 s, want about a third of the limit (100)", i, n)
		}
	}
}

func TestRateSharesFollowDemand(t *testing.T) {
	r := newReplicaLimits(30, 3)
	r.run(t, time.Second, []float64{60, 1, 1})
	got := r.run(t, 10*time.Second, []float64{60, 1, 1})
	if total := sum(got); total > 315 {
		t.Errorf("replicas asked 60/s, 1/s and 1/s of 30/s admitted %d calls in 10 s (%v), more than the limit", total, got)
	}
	if got[0] < 250 {
		t.Errorf("the busy replica admitted %d calls in 10 s (%v): its share does not follow its demand", got[0], got)
	}
	if got[1] == 0 || got[2] == 0 {
		t.Errorf("a replica with little demand admitted nothing (%v)", got)
	}
}

func TestRateSharesOutageKeepsTheLastShare(t *testing.T) {
	r := newReplicaLimits(30, 3)
	r.run(t, time.Second, []float64{20, 20, 20})
	r.board.mu.Lock()
	r.board.down = true
	r.board.mu.Unlock()
	got := r.run(t, 10*time.Second, []float64{20, 20, 20})
	for i, n := range got {
		if n < 90 || n > 110 {
			t.Errorf("with the backend down, replica %d admitted %d calls in 10 s, want its last share (about 100): neither none nor the whole limit", i, n)
		}
	}
	r.board.mu.Lock()
	r.board.down = false
	r.board.mu.Unlock()
	r.run(t, time.Second, []float64{60, 0, 0})
	if got := r.run(t, 10*time.Second, []float64{60, 0, 0}); got[0] < 250 {
		t.Errorf("once the backend is back, the only busy replica admitted %d calls in 10 s: the shares are not renewed", got[0])
	}
}
