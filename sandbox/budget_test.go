package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/mcphost/mcphost/internal/testrig/syncbuf"
	"github.com/mcphost/mcphost/internal/testrig/wasmtest"
	"github.com/mcphost/mcphost/sandbox/internal/wasmpass"
)

// guestInstanceMiB is what an instance of the guest plugin run with l
// reserves, by RATIONALE.md's formula: its two linear memories, and with
// the collector's headroom its table (Go's, which has no maximum, capped
// at 2^20 elements and counted twice), the module's size, its variables
// (1 MiB) and 24 times max_output_bytes.
func guestInstanceMiB(t *testing.T, l Limits) float64 {
	t.Helper()
	l, err := l.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	wasm, err := engine.prepare(context.Background(), testWasm(t, "guest"), DefaultMaxModuleMiB<<20)
	if err != nil {
		t.Fatal(err)
	}
	heap := 2*8*float64(1<<20) + float64(len(wasm)) + 1<<20 + 24*float64(l.MaxOutputBytes)
	return 2*float64(l.MemoryMiB) + 2*heap/(1<<20)
}

// budgetEngine returns an Engine with a memory budget of mib MiB, whose
// compilation cache all such engines share.
func budgetEngine(t *testing.T, mib int) *Engine {
	t.Helper()
	e, err := NewEngine(EngineOptions{CacheDir: filepath.Join(wasmDir, "budget-cache"), MemoryBudgetMiB: mib})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// loadIn loads the guest plugin into e as name, closing it when the test
// ends.
func loadIn(t *testing.T, e *Engine, name string, l Limits) *Plugin {
	t.Helper()
	p, err := e.Load(t.Context(), name, testWasm(t, "guest"), Options{Limits: l})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

// waitBusy waits until a call of p holds its instance, and with it the
// instance's share of the budget, which no other instance may then take.
func waitBusy(t *testing.T, p *Plugin) {
	t.Helper()
	poll.Until(t, 10*time.Second, "a call holds "+p.name+"'s instance", func() bool {
		p.pool.mu.Lock()
		defer p.pool.mu.Unlock()
		return p.pool.inUse > 0
	})
}

// TestBudgetClosesTheInstanceIdleLongest: when a new instance does not fit
// in the memory budget, the instance idle longest, of any plugin, is
// closed to make room, and the others keep their state.
func TestBudgetClosesTheInstanceIdleLongest(t *testing.T) {
	t.Parallel()
	l := Limits{MemoryMiB: 16, MaxOutputBytes: 1 << 20, MaxInstances: 1}
	// Room for two instances, not three.
	e := budgetEngine(t, int(2.5*guestInstanceMiB(t, l)))
	a := loadIn(t, e, "a", l)
	b := loadIn(t, e, "b", l)
	call(t, a, "setvar", "x=a")
	call(t, b, "setvar", "x=b")
	call(t, a, "getvar", "x") // b is now the one idle longest
	loadIn(t, e, "c", l)      // its first instance takes b's place
	if got := call(t, a, "getvar", "x"); got != "a" {
		t.Errorf("a lost its instance: var x = %q", got)
	}
	// b needs an instance again: c's, idle longest now, makes room.
	if out, err := b.Call(t.Context(), "getvar", []byte("x")); err == nil {
		t.Errorf("b kept its instance beyond the budget: var x = %q", out)
	}
}

// TestBudgetWaitsThenRefuses: a call that finds the budget held by busy
// instances waits for one to be closed, within its timeout; past it, or at
// once when its plugin has no queue, it fails with an error that names
// memory_budget_mib and what holds it.
func TestBudgetWaitsThenRefuses(t *testing.T) {
	t.Parallel()
	l := Limits{MemoryMiB: 16, MaxOutputBytes: 1 << 20, MaxInstances: 1, Timeout: 2 * time.Second}
	budget := int(1.5 * guestInstanceMiB(t, l)) // room for one instance
	e := budgetEngine(t, budget)
	sleeper := loadIn(t, e, "sleeper", l)
	l.Timeout = 5 * time.Second
	waiter := loadIn(t, e, "waiter", l) // its instance takes the sleeper's place
	l.MaxQueue = NoQueue
	impatient := loadIn(t, e, "impatient", l)

	// sleep starts a call that holds the budget until its timeout.
	sleep := func() chan error {
		done := make(chan error, 1)
		go func() { _, err := sleeper.Call(context.Background(), "sleep", nil); done <- err }()
		waitBusy(t, sleeper)
		return done
	}
	// The waiter gets an instance once the sleeper's is closed.
	slept := sleep()
	if got := call(t, waiter, "echo", "waited"); got != "waited" {
		t.Errorf("waiter: %q", got)
	}
	select {
	case err := <-slept:
		if !errors.Is(err, ErrTimeout) {
			t.Errorf("sleeper: %v", err)
		}
	default:
		t.Error("the waiter did not wait for the sleeper's instance to be closed")
		<-slept
	}

	// Past the waiter's own deadline, and at once without a queue.
	slept = sleep()
	short, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	_, err := waiter.Call(short, "echo", nil)
	start := time.Now()
	_, errNow := impatient.Call(t.Context(), "echo", nil)
	if d := time.Since(start); d > 250*time.Millisecond {
		t.Errorf("a plugin without a queue waited %v for the budget", d)
	}
	for _, err := range []error{err, errNow} {
		ce := wantKind(t, err, KindBusy)
		if !ce.SpentBudget {
			t.Error("a call refused for the budget is not told apart from a full queue: SpentBudget is false")
		}
		for _, want := range []string{fmt.Sprintf("memory_budget_mib = %d is spent", budget), "sleeper 1 ("} {
			if !strings.Contains(ce.Message, want) {
				t.Errorf("error %q lacks %q", ce.Message, want)
			}
		}
	}
	<-slept
}

// TestLoadRefusesWhatTheBudgetCannotHold: a plugin one instance of which
// does not fit in the budget, or whose memory starts beyond memory_mib, is
// refused at load with an error that names the keys to change.
func TestLoadRefusesWhatTheBudgetCannotHold(t *testing.T) {
	t.Parallel()
	_, err := budgetEngine(t, 64).Load(t.Context(), "big", testWasm(t, "guest"), Options{Limits: Limits{MemoryMiB: 64}})
	if err == nil || !strings.Contains(err.Error(), "more than memory_budget_mib = 64") || !strings.Contains(err.Error(), "memory_mib") {
		t.Errorf("got %v", err)
	}

	// A memory of at least 128 pages (8 MiB).
	wasm := wasmtest.Module(wasmtest.Section(5, wasmtest.Vec([]byte{0x00, 0x80, 0x01})))
	_, err = engine.Load(t.Context(), "wide", wasm, Options{Limits: Limits{MemoryMiB: 4}})
	if err == nil || !strings.Contains(err.Error(), "the module's memory starts at 8 MiB, more than memory_mib = 4 allows") {
		t.Errorf("got %v", err)
	}

	for _, mib := range []int{MinMemoryBudgetMiB - 1, MaxMemoryBudgetMiB + 1} {
		if _, err := NewEngine(EngineOptions{MemoryBudgetMiB: mib}); err == nil {
			t.Errorf("a budget of %d MiB accepted", mib)
		}
	}
}

// TestLinearMemoryIsOffTheGoHeap: a plugin's linear memory grows outside
// the Go heap, and goes back to the system when its instance is closed.
func TestLinearMemoryIsOffTheGoHeap(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("linear memories are mappings of their own on Linux only")
	}
	p, err := engine.Load(t.Context(), "grower", testWasm(t, "guest"), Options{Limits: Limits{MemoryMiB: 128, MaxInstances: 1}})
	if err != nil {
		t.Fatal(err)
	}
	// Freed memory (the compilation's garbage) goes back to the system
	// first: returned while the call runs, it hid part of what the call
	// grew (38 MiB of 64 seen once).
	debug.FreeOSMemory()
	heapBefore, rssBefore := heapInUse(), rssBytes(t)
	call(t, p, "grow", "64") // 64 MiB, written; the instance stays idle
	if grown := heapInUse() - heapBefore; grown > 16<<20 {
		t.Errorf("64 MiB of linear memory grew the Go heap by %d MiB", grown>>20)
	}
	if grown := rssBytes(t) - rssBefore; grown < 48<<20 {
		t.Errorf("64 MiB of written linear memory grew the process by %d MiB only", grown>>20)
	}
	if err := p.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if rss := rssBytes(t); rss > rssBefore+16<<20 {
		t.Errorf("the process holds %d MiB more after the instance was closed", (rss-rssBefore)>>20)
	}
}

// heapInUse returns the bytes in use on the Go heap after a collection.
func heapInUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}

// rssBytes returns the process's resident set size.
func rssBytes(t *testing.T) int64 {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kib << 10
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// TestInstanceReservesWhatTheHostMayCopy: an instance reserves RATIONALE.md's
// formula exactly, the Extism variable store included, and a plugin granted
// HTTP requests also twice (the collector's headroom) twice the largest
// response body the host reads before handing it over (io.ReadAll grows
// its buffer by copying).
func TestInstanceReservesWhatTheHostMayCopy(t *testing.T) {
	t.Parallel()
	l := Limits{MemoryMiB: 16, MaxOutputBytes: 1 << 20}
	wasm, err := engine.prepare(context.Background(), testWasm(t, "guest"), DefaultMaxModuleMiB<<20)
	if err != nil {
		t.Fatal(err)
	}
	heap := 2*8*uint64(wasmpass.MaxTableElements) + uint64(len(wasm)) + 24*uint64(l.MaxOutputBytes) + maxVarBytes
	want := 2*uint64(l.MemoryMiB)<<20 + 2*heap
	if got := load(t, "guest", Options{Limits: l}).pool.cost; got != want {
		t.Errorf("an instance reserves %d bytes, want %d", got, want)
	}
	want += 2 * 2 * maxHTTPResponseBytes
	if got := load(t, "guest", Options{Limits: l, Grants: Grants{AllowedHosts: []string{"example.com"}}}).pool.cost; got != want {
		t.Errorf("an instance of a plugin granted HTTP reserves %d bytes, want %d", got, want)
	}
}

// TestAFirstInstanceWaitsForTheBudgetWhateverTheQueue: a plugin's first
// instance, made at load, waits within its timeout for the budget that
// busy instances hold, even when the plugin's calls may not wait
// (max_queue = 0): a load must not fail for a moment's shortage.
func TestAFirstInstanceWaitsForTheBudgetWhateverTheQueue(t *testing.T) {
	t.Parallel()
	l := Limits{MemoryMiB: 16, MaxOutputBytes: 1 << 20, MaxInstances: 1, Timeout: 2 * time.Second}
	e := budgetEngine(t, int(1.5*guestInstanceMiB(t, l))) // room for one instance
	sleeper := loadIn(t, e, "sleeper", l)
	done := make(chan error, 1)
	go func() { _, err := sleeper.Call(context.Background(), "sleep", nil); done <- err }()
	waitBusy(t, sleeper)
	l.MaxQueue, l.Timeout = NoQueue, 5*time.Second
	p, err := e.Load(t.Context(), "impatient", testWasm(t, "guest"), Options{Limits: l})
	if err != nil {
		t.Fatalf("load while the budget was held for a moment: %v", err)
	}
	_ = p.Close(context.Background())
	<-done
}

// TestEvictedInstancesAreFreed: an instance the budget closes to make room
// is freed, not kept by the budget's or its pool's bookkeeping: a run of
// evictions over many plugins, as when more plugins are called than the
// budget holds, holds no more than the budget says.
func TestEvictedInstancesAreFreed(t *testing.T) {
	l := Limits{MemoryMiB: 16, MaxOutputBytes: 1 << 20, MaxInstances: 1}
	const room, plugins = 5, 12
	e := budgetEngine(t, int((room+0.5)*guestInstanceMiB(t, l)))
	var freed atomic.Int32
	for i := range plugins {
		p := loadIn(t, e, fmt.Sprintf("p%d", i), l)
		call(t, p, "echo", "x")
		p.pool.mu.Lock()
		for _, inst := range p.pool.idle {
			runtime.AddCleanup(inst, func(int) { freed.Add(1) }, 0)
		}
		p.pool.mu.Unlock()
	}
	// Each load beyond the room evicted the instance idle longest.
	want := int32(plugins - room)
	if !poll.Within(10*time.Second, func() bool { runtime.GC(); return freed.Load() >= want }) {
		t.Fatalf("%d of the %d evicted instances were freed", freed.Load(), want)
	}
}

// distinctGuests returns n distinct copies of the guest plugin (so that
// none shares another's code), padded so that their code costs about as
// much as an instance with l, and the budget a plugin of them takes with
// l: its code and an instance (Engine.Reservation).
func distinctGuests(t *testing.T, n int, l Limits) (copies [][]byte, perPluginMiB float64) {
	t.Helper()
	guest := testWasm(t, "guest")
	pad := make([]byte, 4<<20)
	for i := range n {
		copies = append(copies, append(slices.Clone(guest), wasmtest.Section(0, append(wasmtest.Name(fmt.Sprintf("copy%d", i)), pad...))...))
	}
	instance, code, err := budgetEngine(t, 4096).Reservation(t.Context(), copies[0], Options{Limits: l})
	if err != nil || code == 0 {
		t.Fatalf("Reservation: code %d, %v", code, err)
	}
	return copies, float64(instance+code) / (1 << 20)
}

// compileUnloadable compiles wasm into e as name, able to read its module
// again, and so to be unloaded.
func compileUnloadable(t *testing.T, e *Engine, name string, wasm []byte, opts Options) *Plugin {
	t.Helper()
	opts.Reread, _ = rereadCounter(wasm)
	p, err := e.Compile(t.Context(), name, wasm, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

// TestBudgetUnloadsThePluginCalledLongestAgoForRoom: compiled code counts
// against the memory budget, reserved with a first instance at each build.
// When a build or an instance finds no room and no instance is idle, a
// plugin without a call under way gives back its code and instances, the
// one used (called or built) longest ago first; and round-robin calls over
// more plugins than the budget holds all succeed.
func TestBudgetUnloadsThePluginCalledLongestAgoForRoom(t *testing.T) {
	t.Parallel()
	l := Limits{MemoryMiB: 8, MaxOutputBytes: 64 << 10, MaxInstances: 1}
	copies, perPlugin := distinctGuests(t, 3, l)
	e := budgetEngine(t, int(2.5*perPlugin)) // room for two plugins, not three
	var log syncbuf.Buffer
	logger := slog.New(slog.NewTextHandler(&log, nil))
	var plugins []*Plugin
	for i, wasm := range copies {
		plugins = append(plugins, compileUnloadable(t, e, fmt.Sprintf("p%d", i), wasm, Options{Limits: l, Logger: logger}))
	}
	if plugins[0].Built() || !plugins[1].Built() || !plugins[2].Built() {
		t.Fatalf("after the third build: built %v %v %v, want p0 unloaded for p2's build", plugins[0].Built(), plugins[1].Built(), plugins[2].Built())
	}
	if want := `msg="plugin unloaded to make room in memory_budget_mib: its compiled code and instances are given back until its next call" plugin=p0`; !strings.Contains(log.String(), want) {
		t.Errorf("log lacks %s:\n%s", want, log.String())
	}
	for round := range 2 {
		for _, p := range plugins {
			if got := call(t, p, "echo", p.name); got != p.name {
				t.Fatalf("round %d: %s answered %q", round, p.name, got)
			}
			if used, limit := budgetUsed(e), e.budget.limit; used > limit {
				t.Fatalf("round %d: %d bytes of the budget used, over its %d", round, used, limit)
			}
		}
	}
}

// TestBudgetNeverUnloadsAPluginUnderACall: a plugin with a call under way
// keeps its code and instance; a call that needs their room waits for the
// call to end.
func TestBudgetNeverUnloadsAPluginUnderACall(t *testing.T) {
	t.Parallel()
	l := Limits{MemoryMiB: 8, MaxOutputBytes: 64 << 10, MaxInstances: 1, Timeout: time.Second}
	copies, perPlugin := distinctGuests(t, 2, l)
	e := budgetEngine(t, int(1.5*perPlugin)) // room for one plugin
	sleeper := compileUnloadable(t, e, "sleeper", copies[0], Options{Limits: l})
	l.Timeout = 10 * time.Second
	waiter := compileUnloadable(t, e, "waiter", copies[1], Options{Limits: l})
	slept := make(chan error, 1)
	go func() { _, err := sleeper.Call(context.Background(), "sleep", nil); slept <- err }()
	waitBusy(t, sleeper)
	if got := call(t, waiter, "echo", "after"); got != "after" {
		t.Fatalf("waiter: %q", got)
	}
	select {
	case err := <-slept:
		wantKind(t, err, KindTimeout)
	default:
		t.Fatal("the waiter was served before the sleeper's call ended: the sleeper was unloaded under its call")
	}
}

// TestReservationIsWhatTheCodeAndAnInstanceTake: Engine.Reservation says
// what a plugin's build (its code, and its first instance, reserved
// together) and each of its instances take from the budget, as they take
// it.
func TestReservationIsWhatTheCodeAndAnInstanceTake(t *testing.T) {
	t.Parallel()
	e := budgetEngine(t, 4096)
	l := Limits{MemoryMiB: 16, MaxOutputBytes: 1 << 20}
	wasm := testWasm(t, "guest")
	instance, code, err := e.Reservation(t.Context(), wasm, Options{Limits: l})
	if err != nil || instance == 0 || code != codeCost(len(wasm)) {
		t.Fatalf("Reservation: instance %d, code %d, %v; want the code at %d", instance, code, err, codeCost(len(wasm)))
	}
	p, err := e.Compile(t.Context(), "guest", wasm, Options{Limits: l})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	if used := budgetUsed(e); used != code+instance {
		t.Errorf("built: %d bytes of the budget used, want the code's %d and the first instance's %d", used, code, instance)
	}
	call(t, p, "echo", "x")
	if used := budgetUsed(e); used != code+instance {
		t.Errorf("with its instance: %d bytes of the budget used, want %d + %d", used, code, instance)
	}
	call(t, p, "echo", "y")
	if used := budgetUsed(e); used != code+instance {
		t.Errorf("after a second call: %d bytes of the budget used, want %d + %d", used, code, instance)
	}
	_ = p.Close(t.Context())
	if used := budgetUsed(e); used != 0 {
		t.Errorf("closed: %d bytes of the budget still used", used)
	}
}
