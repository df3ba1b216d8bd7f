package sandbox

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// The memory budget: what the instances of all an Engine's plugins may make
// the process hold, together. Each instance reserves its worst case
// (instanceCost) from the budget before it is created, and gives it back
// when it is closed. When the budget is spent, idle instances of any
// plugin are closed, longest idle first, to make room; then the call
// waits, within its timeout, for instances to be closed; then it fails
// with an error that names memory_budget_mib and what holds the budget.
// RATIONALE.md ("What bounds the server's memory?") derives the figures.

// DefaultMemoryBudgetMiB is the budget of an Engine whose options set none:
// two thirds of the 24 GiB machines mcphost is sized for, the rest being
// for what the budget does not count (request bodies, responses being
// written, compiled code) and the system.
const DefaultMemoryBudgetMiB = 16 << 10

// Bounds of EngineOptions.MemoryBudgetMiB: from what holds one instance
// of a small plugin to 1 TiB.
const (
	MinMemoryBudgetMiB = 64
	MaxMemoryBudgetMiB = 1 << 20
)

// Factors of instanceCost.
const (
	// gcHeadroom: Go's collector (GOGC=100) lets the heap grow to twice
	// what was live after the last collection.
	gcHeadroom = 2
	// hostCopyFactor bounds what the host holds for each byte of a block a
	// call hands it (at most Limits.MaxOutputBytes): the copy out of the
	// kernel memory, its decoding, and its encoding for the client, where
	// JSON escapes a byte to as many as six ("<" is "\u003c") and encoders
	// grow their buffers by doubling. The worst measured is 15 to 20.
	hostCopyFactor = 24
	// tableElementBytes is what wazero keeps for a table element; growing a
	// table copies it, so it counts twice.
	tableElementBytes = 8
)

// instanceCost is what one instance of a plugin may make the process hold,
// in bytes, by part.
type instanceCost struct {
	// linear is its linear memories: the plugin's and the Extism kernel's,
	// each up to Limits.MemoryMiB (linearMemoryFactor times that where they
	// are on the Go heap).
	linear uint64
	// tables, structures and copies are on the Go heap: its tables at
	// their maximum, twice (growth copies); wazero's and Extism's
	// structures for it, counted as the module's size (measured: a third
	// of it), and its Extism variables; and the host's copies of the
	// blocks its call hands over and, for a plugin granted HTTP, of a
	// response body, twice (io.ReadAll grows its buffer by copying).
	tables, structures, copies uint64
}

// newInstanceCost returns the cost of an instance of a module of
// moduleBytes bytes, whose tables may hold tableElements elements in all,
// run with limits l, and allowed HTTP requests if http.
func newInstanceCost(l Limits, moduleBytes int, tableElements uint64, http bool) instanceCost {
	c := instanceCost{
		linear:     2 * uint64(l.MemoryMiB) << 20 * linearMemoryFactor,
		tables:     2 * tableElements * tableElementBytes,
		structures: uint64(moduleBytes) + maxVarBytes,
		copies:     hostCopyFactor * uint64(l.MaxOutputBytes),
	}
	if http {
		c.copies += 2 * maxHTTPResponseBytes
	}
	return c
}

// total is the cost in bytes: the Go heap's parts with the collector's
// headroom.
func (c instanceCost) total() uint64 {
	return c.linear + gcHeadroom*(c.tables+c.structures+c.copies)
}

// String itemizes the cost, in MiB.
func (c instanceCost) String() string {
	return fmt.Sprintf("%s of linear memory (the plugin's and the Extism kernel's, memory_mib each) + %d × (%s of tables + %s of instance structures and variables + %s of host copies of max_output_bytes and HTTP responses)",
		mib(c.linear), gcHeadroom, mib(c.tables), mib(c.structures), mib(c.copies))
}

// mib formats n bytes in MiB, rounded up.
func mib(n uint64) string {
	return fmt.Sprintf("%d MiB", (n+1<<20-1)>>20)
}

// memoryBudget is an Engine's memory budget.
type memoryBudget struct {
	limit uint64 // bytes

	mu   sync.Mutex
	used uint64
	// held is what each plugin's instances hold, by plugin name.
	held map[string]*holding
	// idle are the idle instances of every plugin, longest idle first.
	idle []*instance
	// changed is closed when memory is given back or an instance becomes
	// idle: what a waiting reserve waits for. It is made by the first
	// reserve to wait (waitChannel) and forgotten once closed, so that the calls
	// that make instances idle, when none waits, make no channel.
	changed chan struct{}
}

// holding is what the instances of one plugin hold.
type holding struct {
	instances int
	bytes     uint64
}

func newMemoryBudget(mib int) *memoryBudget {
	return &memoryBudget{limit: uint64(mib) << 20, held: map[string]*holding{}}
}

// mib is the budget in MiB, as configured.
func (b *memoryBudget) mib() uint64 { return b.limit >> 20 }

// budgetError is the error of a reserve that found no room.
type budgetError struct{ msg string }

func (e *budgetError) Error() string { return e.msg }

// reserve takes cost bytes from the budget for a new instance of plugin.
// While they do not fit, it closes the instance idle longest, of any
// plugin; when none is idle it waits for memory to be given back, if wait,
// until ctx ends. It fails with a *budgetError that says what holds the
// budget, or with ctx's error when ctx was canceled.
func (b *memoryBudget) reserve(ctx context.Context, plugin string, cost uint64, wait bool) error {
	for {
		b.mu.Lock()
		if b.used+cost <= b.limit {
			b.used += cost
			h := b.held[plugin]
			if h == nil {
				h = &holding{}
				b.held[plugin] = h
			}
			h.instances++
			h.bytes += cost
			b.mu.Unlock()
			return nil
		}
		var victim *instance
		if len(b.idle) > 0 {
			// Delete, not reslice: a slice's array would keep the closed
			// instance, and its modules, past its start.
			victim = b.idle[0]
			b.idle = slices.Delete(b.idle, 0, 1)
		}
		var changed <-chan struct{}
		if victim == nil && wait {
			changed = b.waitChannel()
		}
		b.mu.Unlock()
		if victim != nil {
			victim.pool.evict(victim) // gives its memory back, unless it was taken meanwhile
			continue
		}
		if !wait {
			return b.spent(plugin, cost)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.Canceled) {
				return ctx.Err()
			}
			return b.spent(plugin, cost)
		}
	}
}

// spent returns the error of a reserve of cost bytes for plugin that found
// no room: the budget, what is free and who holds the rest.
func (b *memoryBudget) spent(plugin string, cost uint64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	var holders []string
	for _, name := range slices.Sorted(maps.Keys(b.held)) {
		h := b.held[name]
		holders = append(holders, fmt.Sprintf("%s %d (%s)", name, h.instances, mib(h.bytes)))
	}
	return &budgetError{fmt.Sprintf("memory_budget_mib = %d is spent: a new instance of %s needs %s, %d MiB are free, the rest is held by busy instances (plugin, instances, memory): %s",
		b.mib(), plugin, mib(cost), (b.limit-b.used)>>20, strings.Join(holders, ", "))}
}

// release gives back cost bytes that an instance of plugin reserved.
func (b *memoryBudget) release(plugin string, cost uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= cost
	if h := b.held[plugin]; h != nil {
		h.instances--
		h.bytes -= cost
		if h.instances == 0 {
			delete(b.held, plugin)
		}
	}
	b.notify()
}

// idled records that inst became idle, so that reserve may close it.
func (b *memoryBudget) idled(inst *instance) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.idle = append(b.idle, inst)
	b.notify()
}

// busy records that inst is no longer idle: taken for a call, or about to
// be closed by its pool.
func (b *memoryBudget) busy(inst *instance) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if i := slices.Index(b.idle, inst); i >= 0 {
		b.idle = slices.Delete(b.idle, i, i+1)
	}
}

// waitChannel returns the channel notify closes. b.mu must be held.
func (b *memoryBudget) waitChannel() <-chan struct{} {
	if b.changed == nil {
		b.changed = make(chan struct{})
	}
	return b.changed
}

// notify wakes the waiting reserves. b.mu must be held.
func (b *memoryBudget) notify() {
	if b.changed != nil {
		close(b.changed)
		b.changed = nil
	}
}
