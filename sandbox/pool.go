package sandbox

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
)

// errQueueFull is returned by acquire when the wait queue is full.
var errQueueFull = errors.New("queue full")

// pool holds the instances of a plugin. At most cap(slots) instances exist
// at a time (a slot is taken for each instance in use), and at most queue
// callers wait for a slot. Each instance holds cost bytes of the memory
// budget from before it is created until it is closed; the budget knows
// the idle ones, and may take one back with evict.
type pool struct {
	name     string // the plugin's, for the budget
	budget   *memoryBudget
	cost     uint64
	create   func(context.Context) (*instance, error)
	shutdown func(context.Context) error // runs once closed and no instance is in use
	queue    int64
	slots    chan struct{}
	done     chan struct{} // closed by close
	waiting  atomic.Int64

	mu     sync.Mutex
	idle   []*instance // longest idle first
	inUse  int
	closed bool
	// prereserved reports whether the budget holds cost bytes for the
	// next instance already: reserved by the build (reserveBuild).
	prereserved bool
}

// newPool returns a pool of at most size instances made by create, each
// reserving cost bytes of budget, with a queue of queue callers.
func newPool(name string, budget *memoryBudget, cost uint64, size, queue int, create func(context.Context) (*instance, error), shutdown func(context.Context) error) *pool {
	return &pool{
		name:     name,
		budget:   budget,
		cost:     cost,
		create:   create,
		shutdown: shutdown,
		queue:    int64(queue),
		slots:    make(chan struct{}, size),
		done:     make(chan struct{}),
	}
}

// acquire returns an idle instance of owner, or a new one if none is idle,
// waiting for a slot if every slot is taken. A new instance that would
// make more instances than slots closes the idle instance of another owner
// that was idle longest. A new instance reserves its cost from the budget
// first (memoryBudget.reserve), waiting for it only if mayWait (callers
// may wait for a slot, or the plugin is loading). It fails with
// errQueueFull, ctx's error, ErrClosed, a *budgetError or the creation
// error.
func (p *pool) acquire(ctx context.Context, owner string, mayWait bool) (*instance, error) {
	if err := p.takeSlot(ctx); err != nil {
		return nil, err
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.slots
		return nil, ErrClosed
	}
	p.inUse++
	for i := len(p.idle) - 1; i >= 0; i-- {
		if inst := p.idle[i]; inst.owner == owner {
			p.idle = slices.Delete(p.idle, i, i+1) // clears the slot it frees
			p.budget.busy(inst)
			p.mu.Unlock()
			return inst, nil
		}
	}
	var evicted *instance
	if len(p.idle) > 0 && len(p.idle)+p.inUse > cap(p.slots) {
		evicted = p.idle[0]
		p.idle = slices.Delete(p.idle, 0, 1) // clears the slot it frees
		p.budget.busy(evicted)
	}
	prereserved := p.prereserved
	p.prereserved = false
	p.mu.Unlock()
	if evicted != nil {
		evicted.close()
	}
	if !prereserved {
		if err := p.budget.reserve(ctx, p.name, p.cost, mayWait); err != nil {
			p.release(nil, false)
			return nil, err
		}
	}
	inst, err := p.create(ctx)
	if err != nil {
		p.budget.release(p.name, p.cost)
		p.release(nil, false)
		return nil, err
	}
	inst.owner, inst.pool = owner, p
	return inst, nil
}

// prereserve sets the cost of an instance, which a build computes, and
// records that the build reserved it for the next instance.
func (p *pool) prereserve(cost uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cost, p.prereserved = cost, true
}

// dropPrereserved gives back to the budget what a build reserved for an
// instance that was not made.
func (p *pool) dropPrereserved() {
	p.mu.Lock()
	dropped := p.prereserved
	p.prereserved = false
	p.mu.Unlock()
	if dropped {
		p.budget.release(p.name, p.cost)
	}
}

// takeSlot takes a slot, waiting in the queue if there is room.
func (p *pool) takeSlot(ctx context.Context) error {
	select {
	case p.slots <- struct{}{}:
		return nil
	default:
	}
	if p.waiting.Add(1) > p.queue {
		p.waiting.Add(-1)
		return errQueueFull
	}
	defer p.waiting.Add(-1)
	select {
	case p.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-p.done:
		return ErrClosed
	}
}

// release gives back an instance acquire returned, or nil when creating it
// failed. A healthy instance becomes idle, unless the pool is closed; any
// other is closed.
func (p *pool) release(inst *instance, healthy bool) {
	p.mu.Lock()
	p.inUse--
	keep := inst != nil && healthy && !p.closed
	if keep {
		p.idle = append(p.idle, inst)
		p.budget.idled(inst)
	}
	last := p.closed && p.inUse == 0
	p.mu.Unlock()
	if inst != nil && !keep {
		inst.close()
		if !healthy {
			reclaimMemory()
		}
	}
	<-p.slots
	if last {
		_ = p.shutdown(context.Background()) // nobody is left to report to
	}
}

// close closes the idle instances and wakes the waiting callers. The
// shutdown function runs now if no instance is in use, else when the last
// one is released.
func (p *pool) close(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	idle := p.takeIdle()
	last := p.inUse == 0
	p.mu.Unlock()
	close(p.done)
	for _, inst := range idle {
		inst.close()
	}
	if last {
		return p.shutdown(ctx)
	}
	return nil
}

// takeIdle takes the idle instances out of the pool and out of the
// budget's reach, for the caller to close. p.mu must be held.
func (p *pool) takeIdle() []*instance {
	idle := p.idle
	p.idle = nil
	for _, inst := range idle {
		p.budget.busy(inst)
	}
	return idle
}

// closeIdle closes the idle instances and returns how many it closed.
func (p *pool) closeIdle() int {
	p.mu.Lock()
	idle := p.takeIdle()
	p.mu.Unlock()
	for _, inst := range idle {
		inst.close()
	}
	return len(idle)
}

// isClosed reports whether close was called.
func (p *pool) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// evict closes inst if it is still idle in the pool, for the budget.
func (p *pool) evict(inst *instance) {
	p.mu.Lock()
	i := slices.Index(p.idle, inst)
	if i >= 0 {
		p.idle = slices.Delete(p.idle, i, i+1)
	}
	p.mu.Unlock()
	if i >= 0 {
		inst.close()
	}
}
