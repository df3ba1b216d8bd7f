package sandbox

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// The memory budget: what the instances and the compiled code of all an
// Engine's plugins may make the process hold, together. Each instance
// reserves its worst case (instanceCost) from the budget before it is
// created, and gives it back when it is closed; each module's compiled
// code, where it can be given back (a cache folder: codecache.go),
// reserves codeCost before it is compiled and gives it back when it is
// closed. When the budget is spent, idle instances of any plugin are
// closed, longest idle first, to make room; then plugins without a call
// under way give back their compiled code and instances, the one whose
// last call ended longest ago first (unload.go); then the call waits,
// within its timeout, for memory to be given back; then it fails with an
// error that names memory_budget_mib and what holds the budget.
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
	// codeFactor bounds what a module's compiled code holds for each byte
	// of the module: loaded from the compilation cache, measured 4.7x for
	// a Go plugin (18 MiB of resident memory for 3.9 MiB of module), 4.6x
	// for Rust and 7.2x for TinyGo.
	codeFactor = 8
)

// codeCost is what the compiled code of a module of moduleBytes bytes may
// make the process hold.
func codeCost(moduleBytes int) uint64 { return codeFactor * uint64(moduleBytes) }

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
	// unloadable are the plugins built that can give back their compiled
	// code (idleUnload.unloadable).
	unloadable map[*Plugin]struct{}
	// waiting counts the reserves waiting, so that a plugin whose last
	// call ends (users down to 0) wakes them only when there are any.
	waiting atomic.Int32
	// changed is closed when memory is given back, an instance becomes
	// idle or a plugin's last call ends: what a waiting reserve waits for.
	// It is made by the first reserve to wait (waitChannel) and forgotten
	// once closed, so that the calls that make instances idle, when none
	// waits, make no channel.
	changed chan struct{}
}

// holding is what one plugin holds: its instances, and the compiled code
// of its module, unless another plugin built from the same bytes reserved
// it first.
type holding struct {
	instances int
	bytes     uint64 // of its instances and code
}

func newMemoryBudget(mib int) *memoryBudget {
	return &memoryBudget{limit: uint64(mib) << 20, held: map[string]*holding{}, unloadable: map[*Plugin]struct{}{}}
}

// mib is the budget in MiB, as configured.
func (b *memoryBudget) mib() uint64 { return b.limit >> 20 }

// budgetError is the error of a reserve that found no room.
type budgetError struct{ msg string }

func (e *budgetError) Error() string { return e.msg }

// reserve takes cost bytes from the budget for a new instance of plugin.
// While they do not fit, it makes room (victim); when it cannot, it
// waits for memory to be given back, if wait, until ctx ends. It fails
// with a *budgetError that says what holds the budget, or with ctx's error
// when ctx was canceled.
func (b *memoryBudget) reserve(ctx context.Context, plugin string, cost uint64, wait bool) error {
	return b.take(ctx, plugin, cost, "a new instance", wait)
}

// reserveBuild takes code+instance bytes from the budget, together, for a
// build of plugin: the compiled code of its module (0 when another build
// reserved it) and its next instance (pool.prereserve), as reserve does.
// Together, so that builds under way never each hold code while waiting
// for room for an instance that the others' code takes: the first has
// room for both, and its instance, once idle, and its code, once without a
// call, make room for the next.
func (b *memoryBudget) reserveBuild(ctx context.Context, plugin string, code, instance uint64, wait bool) error {
	what := "a new instance"
	if code > 0 {
		what = "the build (compiled code and a first instance)"
	}
	return b.take(ctx, plugin, code+instance, what, wait)
}

// take takes cost bytes for an instance of plugin (what it is for, in an
// error).
func (b *memoryBudget) take(ctx context.Context, plugin string, cost uint64, what string, wait bool) error {
	if cost > b.limit { // no room to make or wait for
		return b.spent(plugin, cost, what)
	}
	var tried map[*Plugin]bool // made when a plugin is first tried
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
		victim, unload := b.victim(tried)
		var changed <-chan struct{}
		if victim == nil && unload == nil && wait {
			changed = b.waitChannel()
			// Counted before b.mu is let go: a plugin whose last call
			// ends after the look for victims above then wakes it.
			b.waiting.Add(1)
		}
		b.mu.Unlock()
		switch {
		case victim != nil:
			victim.pool.evict(victim) // gives its memory back, unless it was taken meanwhile
			continue
		case unload != nil:
			if tried == nil {
				tried = map[*Plugin]bool{}
			}
			tried[unload] = true
			unload.unloadForRoom() // gives its memory back, unless a call came meanwhile
			continue
		case !wait:
			return b.spent(plugin, cost, what)
		}
		select {
		case <-changed:
			b.waiting.Add(-1)
			clear(tried) // what was busy may be idle now
		case <-ctx.Done():
			b.waiting.Add(-1)
			if errors.Is(ctx.Err(), context.Canceled) {
				return ctx.Err()
			}
			return b.spent(plugin, cost, what)
		}
	}
}

// victim returns what to close to make room: the instance idle longest,
// taken off the idle list, or else the plugin without a call under way
// whose last call ended longest ago, of those not tried yet. b.mu must be
// held.
func (b *memoryBudget) victim(tried map[*Plugin]bool) (*instance, *Plugin) {
	if len(b.idle) > 0 {
		// Delete, not reslice: a slice's array would keep the closed
		// instance, and its modules, past its start.
		inst := b.idle[0]
		b.idle = slices.Delete(b.idle, 0, 1)
		return inst, nil
	}
	var oldest *Plugin
	for p := range b.unloadable {
		if !tried[p] && p.idle.users.Load() == 0 && (oldest == nil || p.idle.lastEnd.Load() < oldest.idle.lastEnd.Load()) {
			oldest = p
		}
	}
	return nil, oldest
}

// built records that p holds compiled code it can give back, and
// unbuilt that it no longer does.
func (b *memoryBudget) built(p *Plugin) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.unloadable[p] = struct{}{}
}

func (b *memoryBudget) unbuilt(p *Plugin) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.unloadable, p)
}

// spent returns the error of a reserve of cost bytes for what of plugin
// that found no room: the budget, what is free and who holds the rest.
func (b *memoryBudget) spent(plugin string, cost uint64, what string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	var holders []string
	for _, name := range slices.Sorted(maps.Keys(b.held)) {
		h := b.held[name]
		holders = append(holders, fmt.Sprintf("%s %d (%s)", name, h.instances, mib(h.bytes)))
	}
	return &budgetError{fmt.Sprintf("memory_budget_mib = %d is spent: %s of %s needs %s, %d MiB are free, the rest is held by busy instances and by compiled code in use (plugin, instances, memory): %s",
		b.mib(), what, plugin, mib(cost), (b.limit-b.used)>>20, strings.Join(holders, ", "))}
}

// release gives back cost bytes that an instance of plugin reserved.
func (b *memoryBudget) release(plugin string, cost uint64) { b.give(plugin, cost, 1) }

// releaseCode gives back cost bytes that compiled code of plugin reserved.
func (b *memoryBudget) releaseCode(plugin string, cost uint64) { b.give(plugin, cost, 0) }

// give gives back cost bytes of plugin's, and counts instances fewer of
// its instances.
func (b *memoryBudget) give(plugin string, cost uint64, instances int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= cost
	if h := b.held[plugin]; h != nil {
		h.instances -= instances
		h.bytes -= cost
		if h.bytes == 0 {
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

// unused wakes the waiting reserves, if any, when a plugin's last call
// has ended: the plugin may be unloaded now.
func (b *memoryBudget) unused() {
	if b.waiting.Load() == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.notify()
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
