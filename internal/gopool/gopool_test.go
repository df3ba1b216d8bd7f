package gopool

import (
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// A function handed to the pool runs, and sequential functions reuse a
// worker until it has run workerRuns of them: the pool starts no goroutine
// while one is idle.
func TestSequentialFunctionsReuseOneWorker(t *testing.T) {
	p := New(2, time.Minute)
	runs := 0
	for i := range 100 {
		if runs%workerRuns != 0 {
			waitParked(t, p) // its worker is waiting for the next function: Go hands it over
		}
		done := make(chan int)
		p.Go(func() { done <- i })
		if got := <-done; got != i {
			t.Fatalf("function %d ran as %d", i, got)
		}
		runs++
		if runs%workerRuns == 0 {
			continue // that was its worker's last: the next one starts another
		}
		waitIdle(t, p)
		runs++
	}
	if n, want := p.started.Load(), int64((runs+workerRuns-1)/workerRuns); n != want {
		t.Errorf("%d workers started for %d sequential functions, want %d (one for each %d)", n, runs, want, workerRuns)
	}
}

// Functions run concurrently, as with a go statement: a function that
// waits for a later one does not hold it up.
func TestFunctionsRunConcurrently(t *testing.T) {
	p := New(2, time.Minute)
	const n = 20
	var wg sync.WaitGroup
	release := make(chan struct{})
	wg.Add(n)
	for range n {
		p.Go(func() { defer wg.Done(); <-release })
	}
	p.Go(func() { close(release) })
	waited := make(chan struct{})
	go func() { wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		t.Fatal("functions waiting for a later one never ended: the pool ran them one after another")
	}
}

// A burst leaves at most maxIdle workers waiting, and those end after the
// idle period: then no goroutine is left.
func TestABurstLeavesAtMostMaxIdleWorkersThenNone(t *testing.T) {
	before := runtime.NumGoroutine()
	p := New(3, 500*time.Millisecond)
	var wg sync.WaitGroup
	release := make(chan struct{})
	wg.Add(50)
	for range 50 {
		p.Go(func() { defer wg.Done(); <-release })
	}
	close(release)
	wg.Wait()
	poll := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before+3 {
		if time.Now().After(poll) {
			t.Fatalf("%d goroutines after a burst of 50, %d before it: more than 3 workers kept", runtime.NumGoroutine(), before)
		}
		time.Sleep(time.Millisecond)
	}
	if n := p.idle.Load(); n > 3 {
		t.Errorf("%d workers waiting, more than the 3 allowed", n)
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines 10s after the burst, %d before it", runtime.NumGoroutine(), before)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitIdle waits until a send to the pool finds the idle worker, which
// it does once the last function returned (unless that was the worker's
// last, which the caller knows), and runs one function on it. The wait is
// long: a loaded machine may take a while to schedule the worker again,
// and a wait that gave up early would start a worker the test counts.
func waitIdle(t *testing.T, p *Pool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ran := make(chan struct{})
		select {
		case p.work <- func() { close(ran) }:
			<-ran
			return
		default:
		}
		runtime.Gosched()
	}
	t.Fatal("no worker became idle within 30s")
}

// waitParked waits until every worker is parked waiting for a function,
// where Go's send reaches it, and p counts one idle: a worker counts
// itself idle just before it parks, and one that has just run a function
// may not have got there yet.
func waitParked(t *testing.T, p *Pool) {
	t.Helper()
	buf := make([]byte, 1<<20)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if p.idle.Load() > 0 && workersParked(string(buf[:runtime.Stack(buf, true)])) {
			return
		}
		runtime.Gosched()
	}
	t.Fatal("no worker parked within 30s")
}

// workersParked reports whether every goroutine of stacks (runtime.Stack's
// of all) that runs a pool's worker is blocked in a select: the worker's
// wait for a function, its only select.
func workersParked(stacks string) bool {
	for _, g := range strings.Split(stacks, "\n\n") {
		if !strings.Contains(g, "gopool.(*Pool).worker(") {
			continue
		}
		header, _, _ := strings.Cut(g, "\n") // goroutine 7 [select, 2 minutes]:
		if _, state, _ := strings.Cut(header, "["); !strings.HasPrefix(state, "select") {
			return false
		}
	}
	return true
}

// deep uses about depth KiB of stack.
func deep(depth int) byte {
	var buf [1024]byte
	buf[depth%len(buf)] = byte(depth)
	if depth == 0 {
		return buf[0]
	}
	return deep(depth-1) + buf[depth%len(buf)]
}

// BenchmarkDeepFunction runs a function that needs 48 KiB of stack with a
// go statement (each grows a fresh stack) and with a Pool (the worker's
// stack is grown once); compare the two with benchstat, or read ns/op.
func BenchmarkDeepFunction(b *testing.B) {
	run := func(b *testing.B, start func(func())) {
		done := make(chan byte)
		for b.Loop() {
			start(func() { done <- deep(48) })
			<-done
		}
	}
	b.Run("go", func(b *testing.B) { run(b, func(f func()) { go f() }) })
	p := New(1, time.Minute)
	b.Run("pool", func(b *testing.B) { run(b, p.Go) })
}
