// Package gopool runs functions on goroutines that outlive them, so that
// the next function reuses the stack the last one grew.
//
// A goroutine starts with a small stack and grows it by copying, twice
// over, when it runs out. A request that runs a plugin call goes deep (the
// server's handler, the plugin chain, wazero's call engine, a host
// function, wazero again): on a fresh goroutine it grows its stack three
// or four times, and the copies were a tenth of the server's CPU time per
// tools/call. A worker that waits for the next function after the last one
// keeps its grown stack (until the collector shrinks a stack that stays
// mostly unused).
package gopool

import (
	"sync/atomic"
	"time"
)

// Pool runs functions on its workers. The zero value is not ready: use
// New.
type Pool struct {
	// work hands a function to a worker waiting for one; unbuffered, so
	// that a send succeeds only when a worker is idle.
	work chan func()
	// idleFor is how long a worker waits for a function before it ends.
	idleFor time.Duration
	// maxIdle bounds the workers that wait: one more ends at once, as a
	// go statement's goroutine would, stack and all.
	maxIdle int64
	// idle counts the workers waiting for a function.
	idle atomic.Int64
	// maxRuns bounds the functions a worker runs before it ends, so that
	// a stack one deep function grew is not kept for long by a worker that
	// is never idle.
	maxRuns int
	// started counts the workers ever started (for tests).
	started atomic.Int64
}

// New returns a pool that keeps at most maxIdle workers waiting, each for
// up to idleFor, so that a burst of concurrent calls leaves few
// goroutines, and few stacks, behind, and none for long: a stack that a
// deep call grew to megabytes is given back with its worker.
func New(maxIdle int, idleFor time.Duration) *Pool {
	return &Pool{work: make(chan func()), idleFor: idleFor, maxIdle: int64(maxIdle), maxRuns: workerRuns}
}

// workerRuns is how many functions a worker runs before it ends: enough
// that growing a stack is rare, few enough that a stack grown to megabytes
// by a deep function (a hostile plugin's nested output) goes soon.
const workerRuns = 64

// Go runs f on an idle worker, or on a new one when none is idle. Like a
// go statement, it never waits for f, and functions run concurrently.
func (p *Pool) Go(f func()) {
	select {
	case p.work <- f:
	default:
		p.started.Add(1)
		go p.worker(f)
	}
}

// worker runs f, then the functions handed to it, until it has been idle
// for p.idleFor.
func (p *Pool) worker(f func()) {
	idle := time.NewTimer(p.idleFor)
	defer idle.Stop()
	for runs := 1; ; runs++ {
		f()
		f = nil // let the function and what it holds go while idle
		if runs >= p.maxRuns {
			return
		}
		if p.idle.Add(1) > p.maxIdle {
			p.idle.Add(-1)
			return
		}
		idle.Reset(p.idleFor)
		select {
		case f = <-p.work:
			p.idle.Add(-1)
		case <-idle.C:
			p.idle.Add(-1)
			return
		}
	}
}
