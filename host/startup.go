package host

import (
	"context"
	"sync"
	"time"
)

// Start-up: plugins load while the server already answers (package
// pluginhost loads them concurrently and adds each to the catalog once it
// is ready). A client's initialize waits for them while any is compiling
// (compiling is bounded by the module's size and structure, and a first
// start compiles everything) and a little longer, so that a start shows
// the client everything from its first list; a plugin that takes longer
// to start or list is announced with list_changed when it arrives, and the
// capabilities answered in the meantime allow for it.

// startup is the state of the server's initial load.
type startup struct {
	started  time.Time
	wait     time.Duration
	done     chan struct{} // closed when every plugin has loaded or failed
	compiled chan struct{} // closed when every plugin is compiled
	settleBy time.Time     // when initialize stops waiting; set before compiled closes

	mu   sync.Mutex
	left int // plugins still compiling
}

// Loading tells the server that n plugins are loading. Call compiled once
// for each plugin when its code is compiled, or when it failed before, and
// done when every plugin has loaded or failed. Meanwhile initialize waits
// for done: as long as a plugin is compiling, then until wait has passed
// since Loading, and at least half of wait after the last compile. It then
// answers with capabilities that allow for the plugins still loading:
// tools, prompts and resources, each with listChanged.
func (s *Server) Loading(n int, wait time.Duration) (compiled, done func()) {
	st := &startup{started: time.Now(), wait: wait, done: make(chan struct{}), compiled: make(chan struct{}), left: n}
	if n == 0 {
		st.settleBy = settleTime(st.started, st.started, wait)
		close(st.compiled)
	}
	s.startup.Store(st)
	return st.oneCompiled, sync.OnceFunc(func() { close(st.done) })
}

// oneCompiled records that one more plugin is compiled.
func (st *startup) oneCompiled() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.left == 0 {
		return
	}
	if st.left--; st.left == 0 {
		st.settleBy = settleTime(st.started, time.Now(), st.wait)
		close(st.compiled)
	}
}

// settleTime is when initialize stops waiting for plugins still loading
// that started loading at started and were all compiled at compiled:
// wait after started, and at least half of wait after compiled, which
// is what a plugin needs to start and list once compiled (tens of
// milliseconds for the examples, 140 at most with all of them loading on
// two cores).
func settleTime(started, compiled time.Time, wait time.Duration) time.Time {
	return later(started.Add(wait), compiled.Add(wait/2))
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// stillLoading reports whether plugins of the initial load are still
// loading, without waiting.
func (s *Server) stillLoading() bool {
	st := s.startup.Load()
	return st != nil && !closed(st.done)
}

// awaitStartup waits, within ctx, for the initial load as Loading says,
// and reports whether plugins are still loading.
func (s *Server) awaitStartup(ctx context.Context) (loading bool) {
	st := s.startup.Load()
	if st == nil {
		return false
	}
	select {
	case <-st.done:
		return false
	case <-ctx.Done():
		return !closed(st.done)
	case <-st.compiled:
	}
	timer := time.NewTimer(time.Until(st.settleBy))
	defer timer.Stop()
	select {
	case <-st.done:
	case <-timer.C:
	case <-ctx.Done():
	}
	return !closed(st.done)
}

// swapSignal wakes those waiting for the next catalog swap.
type swapSignal struct {
	mu sync.Mutex
	ch chan struct{}
}

// next returns a channel closed at the next swap. Take it before looking
// at the catalog, so that a swap in between is not missed.
func (w *swapSignal) next() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch == nil {
		w.ch = make(chan struct{})
	}
	return w.ch
}

// swapped wakes the waiters.
func (w *swapSignal) swapped() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch != nil {
		close(w.ch)
		w.ch = nil
	}
}

// find looks something up in the catalog with lookup. While plugins load
// at start-up, what is not found yet is looked up again at every catalog
// swap until the load is done or ctx ends: a client that names a tool,
// prompt or resource of a plugin that is a moment from being ready is not
// told that it does not exist.
func find[T any](ctx context.Context, s *Server, lookup func(*Catalog) (T, bool)) (T, bool) {
	for {
		swapped := s.swaps.next()
		v, ok := lookup(s.Catalog())
		st := s.startup.Load()
		if ok || st == nil || closed(st.done) {
			return v, ok
		}
		select {
		case <-swapped:
		case <-st.done:
		case <-ctx.Done():
			return v, false
		}
	}
}

// closed reports whether ch is closed.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
