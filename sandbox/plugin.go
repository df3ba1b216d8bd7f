package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sandbox/internal/wasmpass"
	"github.com/tetratelabs/wazero"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Plugin is a loaded plugin: compiled once, run on a pool of instances.
// Its methods are safe for concurrent use.
type Plugin struct {
	name         string
	info         *Info
	limits       Limits
	logger       *slog.Logger
	timeout      error // the cause of a context ended by Limits.Timeout
	compiled     *extism.CompiledPlugin
	code         *codeCache // what compiled was compiled with
	moduleConfig wazero.ModuleConfig
	pool         *pool
	redact       *redactor // of the secret values; nil when none
	checkOutput  func(export string, output []byte) error
	engine       *Engine
	net          *netPolicy
	interpret    bool // on wazero's interpreter (Options.Interpret)
	observer     Observer

	// buildMu guards the build: the module as given (unless reread gives
	// it at each build) and the host functions it is compiled with, and
	// what the build made; and the unloading of an idle plugin (unload.go).
	built    atomic.Bool // compiled is set
	buildMu  sync.Mutex
	wasm     []byte                 // nil when reread gives it
	reread   func() ([]byte, error) // Options.Reread
	hostFns  []extism.HostFunction
	buildErr error
	idle     idleUnload
}

// instance is one instantiation of a plugin, used by one call at a time.
type instance struct {
	plugin *extism.Plugin
	log    *guestLog
	owner  string // whose calls it serves (CallAs); "" for anyone's
	mem    *memoryArena
	pool   *pool // whose budget it holds memory of
	// caller calls its exports after the first call (call.go), and holds
	// its kernel functions; called reports whether the first was made.
	caller *exportCaller
	called bool
	sleep  *sleeper
}

// Sizes set in the Extism manifest besides the memory limit. Extism applies
// its own defaults only when the manifest sets no memory section at all;
// leaving them zero would disable HTTP response bodies and variables.
const (
	maxHTTPResponseBytes = 16 << 20
	maxVarBytes          = 1 << 20
)

// sleepSlice bounds one guest sleep, so that a sleeping plugin looks at its
// countdown (internal/wasmpass/interrupt.go) at least that often.
const sleepSlice = 10 * time.Millisecond

// sleeper is the WASI sleep of one instance (poll_oneoff's clock, the only
// way a module waits without a host function of its own): at most
// sleepSlice at a time, and over as soon as the context of the call it
// serves ends, so that a sleeping call is stopped at once rather than at
// the end of its sleep.
type sleeper struct {
	// ctx is the running call's context, or nil between calls. wazero
	// sleeps on the goroutine of the call, which sets it. Its Done channel
	// is asked for only in a sleep: a context makes it when first asked,
	// and most calls never sleep.
	ctx context.Context
}

// sleep sleeps for ns nanoseconds, at most sleepSlice, or until the
// running call's context ends.
func (s *sleeper) sleep(ns int64) {
	var done <-chan struct{}
	if s.ctx != nil {
		done = s.ctx.Done()
	}
	t := time.NewTimer(min(time.Duration(ns), sleepSlice))
	defer t.Stop()
	select {
	case <-t.C:
	case <-done:
	}
}

// Load compiles wasm as the plugin name (Compile) and creates its first
// instance (Start), so that a plugin that cannot be linked or instantiated
// fails here.
func (e *Engine) Load(ctx context.Context, name string, wasm []byte, opts Options) (*Plugin, error) {
	p, err := e.Compile(ctx, name, wasm, opts)
	if err != nil {
		return nil, err
	}
	if err := p.Start(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// Compile compiles wasm as the plugin name, without running any of its
// code. Before compiling, it checks that every function the plugin imports
// from abi.HostModule is among opts.HostFunctions, caps its tables
// and moves its imports of the kernel functions the sandbox serves
// itself (prepare), and checks that its memory starts within
// Limits.MemoryMiB and that one instance fits in the Engine's memory budget
// (budget.go). Compiling cannot be interrupted: ctx does not bound it.
func (e *Engine) Compile(ctx context.Context, name string, wasm []byte, opts Options) (*Plugin, error) {
	p, err := e.Defer(ctx, name, wasm, opts)
	if err != nil {
		return nil, err
	}
	if err := p.build(ctx, true); err != nil {
		_ = p.Close(ctx)
		return nil, fmt.Errorf("sandbox: load %s: %w", name, err)
	}
	return p, nil
}

// Defer returns the plugin name of wasm with the checks that need no
// compiling done (its imports, limits and grants), and leaves the rest of
// what Compile does — validating and rewriting the module, its instance
// cost, compiling it — to the plugin's first call or Start, which fail
// with what Compile would have. It is for a module a previous load of the
// same bytes, limits and grants found sound (pluginhost's listing cache):
// an idle plugin then costs no compiled code and no instance, and, with
// Options.Reread, not its module's bytes either.
func (e *Engine) Defer(ctx context.Context, name string, wasm []byte, opts Options) (*Plugin, error) {
	p, err := e.newPlugin(name, wasm, opts)
	if err != nil {
		return nil, fmt.Errorf("sandbox: load %s: %w", name, err)
	}
	return p, nil
}

// newPlugin checks what needs no compiling and returns the plugin, not yet
// built.
func (e *Engine) newPlugin(name string, wasm []byte, opts Options) (*Plugin, error) {
	info, err := Inspect(wasm)
	if err != nil {
		return nil, err
	}
	limits, err := opts.Limits.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := opts.Grants.check(); err != nil {
		return nil, err
	}
	pol, err := newNetPolicy(name, opts.Grants, e.egress)
	if err != nil {
		return nil, err
	}
	redact := newRedactor(opts.Grants, opts.Redactions)
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if redact != nil {
		logger = slog.New(redactHandler{next: logger.Handler(), r: redact})
	}
	logger = logger.With(slog.String("plugin", name))
	hostFns, err := hostFunctions(info, opts.HostFunctions, logger, limits.MaxOutputBytes, opts.Observer)
	if err != nil {
		return nil, err
	}
	k := &kernel{net: pol, httpErrors: info.HasExport(abi.ExportHTTPErrors), config: configValues(opts.Grants), maxBlock: limits.MaxOutputBytes, observer: opts.Observer, redact: redact}
	hostFns = append(append(hostFns, k.functions()...), interruptFunction())
	p := &Plugin{
		name:         name,
		info:         info,
		limits:       limits,
		logger:       logger,
		timeout:      fmt.Errorf("exceeded the %s timeout", limits.Timeout),
		moduleConfig: moduleConfig(opts.Grants.Mounts),
		redact:       redact,
		checkOutput:  opts.CheckOutput,
		engine:       e,
		interpret:    opts.Interpret,
		wasm:         wasm,
		reread:       opts.Reread,
		hostFns:      hostFns,
		net:          pol,
		observer:     opts.Observer,
	}
	if p.reread != nil && e.code.releasable() {
		p.idle.unloadable = true
		p.idle.after = e.unloadIdleAfter
	}
	if p.reread != nil {
		p.wasm = nil
	}
	p.pool = newPool(name, e.budget, 0, limits.MaxInstances, limits.MaxQueue, p.newInstance, p.shutdown)
	return p, nil
}

// Start creates the plugin's first instance, which runs its wasm start
// function, within ctx and the call timeout, and keeps it for the first
// call; a plugin Defer returned is built first. A plugin that fails to
// start is closed: Start returns the error.
func (p *Plugin) Start(ctx context.Context) error {
	p.enter()
	defer p.leave()
	if err := p.build(ctx, true); err != nil {
		_ = p.Close(ctx) // the build error says more
		return fmt.Errorf("sandbox: load %s: %w", p.name, err)
	}
	// The first instance waits for room in the budget, within the call
	// timeout, even for a plugin whose calls may not queue: a load must not
	// fail for a moment's shortage.
	ctx, cancel := context.WithTimeoutCause(ctx, p.limits.Timeout, p.timeout)
	defer cancel()
	inst, err := p.pool.acquire(ctx, "", true)
	if err != nil {
		_ = p.Close(ctx) // the instantiation error says more
		return fmt.Errorf("sandbox: load %s: %w", p.name, err)
	}
	p.pool.release(inst, true)
	return nil
}

// build validates, rewrites and compiles the plugin's module, unless it is
// built, or its build failed: a failed build is not tried again, since its
// cause is in the module, unless the module could not be read again
// (Options.Reread), the budget had no room, or ctx ended. It sets the instance cost before any instance is made.
// The caller must be counted in the plugin's users (enter).
func (p *Plugin) build(ctx context.Context, mayWait bool) error {
	if p.built.Load() {
		return nil
	}
	p.buildMu.Lock()
	defer p.buildMu.Unlock()
	if p.compiled != nil || p.buildErr != nil {
		return p.buildErr
	}
	if p.pool.isClosed() { // its code would never be closed
		return ErrClosed
	}
	wasm := p.wasm
	if p.reread != nil {
		var err error
		if wasm, err = p.reread(); err != nil {
			return fmt.Errorf("reading the module again to compile it: %w", err)
		}
	}
	e, limits := p.engine, p.limits
	code, first, err := e.code.acquire(wasm)
	if err != nil {
		return err
	}
	config := extism.PluginConfig{
		RuntimeConfig: e.runtimeConfig(limits, p.interpret, code.cache),
		EnableWasi:    true,
	}
	var (
		compiled *extism.CompiledPlugin
		cost     uint64
		// codeShare is what this build reserves for the code: its cost
		// if the plugin is the first of its module, else 0.
		codeShare, codeBytes uint64 = 0, e.codeCost(len(wasm))
		reserved             bool
		budgetErr            error // not the module's fault: the next build tries again
	)
	if first {
		codeShare = codeBytes
	}
	// Validating and rewriting the module take a compile turn too: they
	// take a core, a tenth of the time compiling does.
	err = e.inCompileTurn(ctx, p.logger, len(wasm), func() (err error) {
		wasm, err := e.prepare(ctx, wasm, limits.MaxModuleMiB<<20)
		if err != nil {
			return err
		}
		if cost, err = e.instanceCost(wasm, limits, len(p.net.rules) > 0, codeBytes); err != nil {
			return err
		}
		// Room in the budget is waited for within the call timeout, as
		// for an instance, and only if mayWait.
		rctx, cancel := context.WithTimeoutCause(ctx, limits.Timeout, p.timeout)
		defer cancel()
		if budgetErr = e.budget.reserveBuild(rctx, p.name, codeShare, cost, mayWait); budgetErr != nil {
			return budgetErr
		}
		reserved = true
		manifest := extism.Manifest{
			Wasm: []extism.Wasm{extism.WasmData{Data: wasm}},
			Memory: &extism.ManifestMemory{
				MaxPages:             limits.MemoryMiB * 16, // 64 KiB pages
				MaxHttpResponseBytes: maxHTTPResponseBytes,
				MaxVarBytes:          maxVarBytes,
			},
			AllowedHosts: p.net.extismHosts(),
		}
		code.compileMu.Lock()
		defer code.compileMu.Unlock()
		compiled, err = guard(p, "compile", func() (*extism.CompiledPlugin, error) {
			return extism.NewCompiledPlugin(ctx, manifest, config, p.hostFns)
		})
		return err
	})
	if err != nil {
		if reserved {
			e.budget.release(p.name, codeShare+cost)
		}
		e.code.release(code)
		if err == budgetErr || ctx.Err() != nil {
			// Not the module's fault: a full budget, or a caller that
			// gave up or a server that stops; the next build tries again.
			return err
		}
		p.buildErr = err
		return err
	}
	e.code.hold(code, p.name, codeShare)
	p.pool.prereserve(cost)
	p.compiled, p.code = compiled, code
	if p.reread == nil { // built for good: what it was built from is not needed again
		p.wasm, p.hostFns = nil, nil
	}
	p.built.Store(true)
	p.happened(EventBuilt)
	// Only for an Observer, which is told; with no folder, or no compiler,
	// there is nothing to look in.
	if p.observer != nil && e.code.releasable() && !p.interpret {
		if e.code.wroteFiles() {
			p.happened(EventCompiled)
		} else {
			p.happened(EventLoadedFromCache)
		}
	}
	if p.idle.unloadable {
		// A build is a use: the budget unloads the plugins used longest
		// ago first, and one built but not called yet is not the first.
		p.idle.lastEnd.Store(int64(time.Since(epoch)))
		e.budget.built(p)
	}
	p.idle.arm(p.unloadIfIdle)
	return nil
}

// Build compiles the module of a plugin Defer returned, or of one unloaded
// for being idle, unless it is built, within ctx (but no call timeout:
// compiling is bounded by the module's size, as at Compile). Unlike Start,
// it makes no instance, and a failure closes nothing: the plugin's next
// call tries again, or fails with the same error if the module is at fault.
func (p *Plugin) Build(ctx context.Context) error {
	p.enter()
	defer p.leave()
	if err := p.build(ctx, true); err != nil {
		return fmt.Errorf("sandbox: plugin %s: %w", p.name, err)
	}
	p.pool.dropPrereserved() // no instance follows
	return nil
}

// Built reports whether the plugin's module is compiled: after Compile,
// after the first call or Start after Defer, until it is unloaded for
// being idle (EngineOptions.UnloadIdleAfter).
func (p *Plugin) Built() bool { return p.built.Load() }

// shutdown releases what the plugin holds beside its instances, once it is
// closed and no call uses it.
func (p *Plugin) shutdown(ctx context.Context) error {
	p.net.transport.CloseIdleConnections()
	p.buildMu.Lock()
	defer p.buildMu.Unlock()
	p.idle.stop()
	return p.closeCompiled(ctx)
}

// closeCompiled closes the plugin's compiled code, if built, and gives back
// its compilation cache (codecache.go). Its instances must be closed;
// buildMu must be held.
func (p *Plugin) closeCompiled(ctx context.Context) error {
	if p.compiled == nil {
		return nil
	}
	p.engine.budget.unbuilt(p)
	p.pool.dropPrereserved()
	err := p.compiled.Close(ctx)
	p.engine.code.release(p.code)
	p.compiled, p.code = nil, nil
	p.built.Store(false)
	return err
}

// runtimeConfig is the wazero configuration a plugin with limits is
// compiled with: the Engine's compilation cache, and wazero's own checks
// of the call's context only when Limits.WazeroChecks asks for them, since
// the module checks for the end of the call's context itself
// (internal/wasmpass/interrupt.go), at a fraction of the cost.
func (e *Engine) runtimeConfig(limits Limits, interpret bool, cache wazero.CompilationCache) wazero.RuntimeConfig {
	if interpret {
		return wazero.NewRuntimeConfigInterpreter().WithCloseOnContextDone(limits.WazeroChecks)
	}
	return wazero.NewRuntimeConfig().
		WithCompilationCache(cache).
		WithCloseOnContextDone(limits.WazeroChecks)
}

// instanceCost returns what an instance of the prepared module wasm, run
// with limits and allowed HTTP requests if http, reserves from the budget.
// It fails when the module's memory starts beyond limits.MemoryMiB or the
// instance and the module's code (code bytes of the budget) cannot fit in
// the budget together.
func (e *Engine) instanceCost(wasm []byte, limits Limits, http bool, code uint64) (uint64, error) {
	mem, err := wasmpass.ReadMemory(wasm)
	if err != nil {
		return 0, err
	}
	if limit := uint64(limits.MemoryMiB) << 20; mem.MinBytes > limit {
		return 0, fmt.Errorf("the module's memory starts at %s, more than memory_mib = %d allows: raise memory_mib", mib(mem.MinBytes), limits.MemoryMiB)
	}
	cost := newInstanceCost(limits, len(wasm), mem.TableElements, http)
	switch {
	case code == 0 && cost.total() > e.budget.limit:
		return 0, fmt.Errorf("one instance may need %s (%v), more than memory_budget_mib = %d: lower memory_mib or max_output_bytes, or raise memory_budget_mib",
			mib(cost.total()), cost, e.budget.mib())
	case cost.total()+code > e.budget.limit:
		return 0, fmt.Errorf("one instance and the compiled code may need %s (%s of code + %v), more than memory_budget_mib = %d: lower memory_mib or max_output_bytes, or raise memory_budget_mib",
			mib(cost.total()+code), mib(code), cost, e.budget.mib())
	}
	return cost.total(), nil
}

// codeCost is what the compiled code of a module of moduleBytes bytes
// reserves from the budget: codeCost, or 0 where code is never given
// back (no cache folder) and so not counted.
func (e *Engine) codeCost(moduleBytes int) uint64 {
	if !e.code.releasable() {
		return 0
	}
	return codeCost(moduleBytes)
}

// Reservation returns what a plugin built from wasm with opts reserves
// from the Engine's memory budget (memory_budget_mib): each instance's
// worst case, and the compiled code of its module, which the plugins
// built from the same bytes share (0 on an Engine without a cache folder,
// whose code is never given back and not counted). It fails as a build
// would on a module it cannot prepare or that cannot fit.
func (e *Engine) Reservation(ctx context.Context, wasm []byte, opts Options) (instance, code uint64, err error) {
	limits, err := opts.Limits.withDefaults()
	if err != nil {
		return 0, 0, err
	}
	prepared, err := e.prepare(ctx, wasm, limits.MaxModuleMiB<<20)
	if err != nil {
		return 0, 0, err
	}
	code = e.codeCost(len(wasm))
	instance, err = e.instanceCost(prepared, limits, len(opts.Grants.AllowedHosts) > 0, code)
	return instance, code, err
}

// prepare returns wasm as the sandbox compiles it (wasmpass.Instrument),
// once it is known to cost little enough to compile, with a size cap of
// maxBytes, and to be valid as it is (validate.go): with its tables
// capped, its imports of the kernel functions the sandbox serves itself
// moved (kernelRedirect), and the check that stops a call whose context
// ended compiled in.
func (e *Engine) prepare(ctx context.Context, wasm []byte, maxBytes int) ([]byte, error) {
	return wasmpass.Instrument(wasm, func(wasm []byte) error { return e.valid.validate(ctx, wasm) },
		wasmpass.Options{MaxBytes: maxBytes, Redirect: kernelRedirect})
}

// moduleConfig is the wazero configuration of every instance: real clocks,
// cryptographic randomness, the mounts and nothing else (wazero gives no
// environment, arguments, stdin or stdout unless asked). Each instance
// adds its output and its sleeper.
func moduleConfig(mounts []Mount) wazero.ModuleConfig {
	cfg := wazero.NewModuleConfig().
		WithSysWalltime().
		WithSysNanotime().
		WithRandSource(rand.Reader)
	if len(mounts) == 0 {
		return cfg
	}
	return cfg.WithFSConfig(fsConfig(mounts))
}

// newInstance instantiates the plugin, within the call timeout since
// instantiation runs the module's start function.
func (p *Plugin) newInstance(ctx context.Context) (*instance, error) {
	// Extism reads this variable on every instantiation and then sends the
	// plugin's output to the process stdout, which carries the MCP protocol.
	if _, ok := os.LookupEnv("EXTISM_ENABLE_WASI_OUTPUT"); ok {
		return nil, errors.New("EXTISM_ENABLE_WASI_OUTPUT is set; unset it: it would send plugin output to stdout")
	}
	ctx, cancel := context.WithTimeoutCause(ctx, p.limits.Timeout, p.timeout)
	defer cancel()
	log := newGuestLog(p.logger)
	ctx = withCallState(ctx, newCallState(log, p.limits.HostCallsPerSecond))
	mem := &memoryArena{}
	sleep := &sleeper{ctx: ctx} // the start function's
	defer func() { sleep.ctx = nil }()
	ep, err := guard(p, "instantiate", func() (*extism.Plugin, error) {
		return p.compiled.Instance(startContext(mem.context(ctx)), extism.PluginInstanceConfig{
			ModuleConfig: p.moduleConfig.WithStdout(&log.stdout).WithStderr(&log.stderr).WithNanosleep(sleep.sleep),
		})
	})
	if err != nil {
		mem.free()
		if ctx.Err() != nil {
			err = fmt.Errorf("%w: %w", context.Cause(ctx), err)
		}
		return nil, fmt.Errorf("instantiate: %s", p.redacted(err.Error()))
	}
	// Extism logs messages of its own only when the embedding program sets
	// its global log level; they go to the plugin's logger too, not to the
	// standard logger.
	ep.SetLogger(log.kernel)
	caller, err := newExportCaller(ep)
	if err != nil {
		_ = ep.Close(ctx)
		mem.free()
		return nil, err
	}
	p.happened(EventInstantiated)
	return &instance{plugin: ep, log: log, mem: mem, caller: caller, sleep: sleep}, nil
}

// close releases the instance's modules and memories, and gives back what
// it holds of the memory budget. It must not be running.
func (i *instance) close() {
	_ = i.plugin.Close(context.Background()) // closing an instance only frees memory

	i.mem.free()
	i.pool.budget.release(i.pool.name, i.pool.cost)
}

// Name returns the name the plugin was loaded as.
func (p *Plugin) Name() string { return p.name }

// Info returns what Inspect found in the plugin's binary. It must not be
// modified.
func (p *Plugin) Info() *Info { return p.info }

// HasExport reports whether the plugin exports a function called name.
func (p *Plugin) HasExport(name string) bool { return p.info.HasExport(name) }

// Call runs the export with input on an idle instance, creating one if
// fewer than Limits.MaxInstances exist, or else waiting for one in a queue
// of at most Limits.MaxQueue calls. It fails with a *CallError, or with
// ErrClosed or an instantiation error. ctx reaches the host functions the
// call makes. An instance that trapped, timed out or was canceled is
// discarded and replaced when next needed.
func (p *Plugin) Call(ctx context.Context, export string, input []byte) ([]byte, error) {
	return p.CallAs(ctx, "", export, input)
}

// CallAs is Call on behalf of owner: the call runs on an instance that has
// served only owner's calls, or on a new one, so that nothing one owner's
// calls leave in an instance's memory or vars reaches another's. An idle
// instance of another owner is closed when a new one would exceed
// MaxInstances. The owner "" is Call's: such calls share instances.
//
// With an Observer, the call is reported to it; under a recording span
// (OpenTelemetry's, in ctx) the span is given the call's wait and run.
func (p *Plugin) CallAs(ctx context.Context, owner, export string, input []byte) ([]byte, error) {
	span := trace.SpanFromContext(ctx)
	if p.observer == nil && !span.IsRecording() {
		return p.callAs(ctx, owner, export, input, nil)
	}
	t := callTimes{start: time.Now()}
	out, err := p.callAs(ctx, owner, export, input, &t)
	wait, run := t.waitAndRun()
	if p.observer != nil {
		p.observer.Called(ctx, CallReport{Export: export, Wait: wait, Run: run, Kind: KindOf(err)})
	}
	if span.IsRecording() {
		span.SetAttributes(attribute.Float64("mcphost.plugin.wait", wait.Seconds()), attribute.Float64("mcphost.plugin.run", run.Seconds()))
	}
	return out, err
}

// callTimes are what CallAs reports of a call's time: when it started,
// how long it ran on instances, and when it last stopped running (zero
// when it never ran).
type callTimes struct {
	start, lastEnd time.Time
	run            time.Duration
}

// waitAndRun returns how long the call waited and ran: the wait is what
// was not running up to the end of its last run, or to now when it never
// ran (which reads the clock only then).
func (t *callTimes) waitAndRun() (wait, run time.Duration) {
	end := t.lastEnd
	if end.IsZero() {
		end = time.Now()
	}
	return end.Sub(t.start) - t.run, t.run
}

// callAs is CallAs, which records in times (unless nil) how long the call
// ran on an instance and when it stopped.
func (p *Plugin) callAs(ctx context.Context, owner, export string, input []byte, times *callTimes) ([]byte, error) {
	if !p.info.HasExport(export) {
		return nil, p.callError(export, KindNoExport, "the plugin has no export "+export)
	}
	// Extism runs the plugin with an empty input when the input does not
	// fit in the kernel's memory.
	if limit := int(p.limits.MemoryMiB) << 20 / 2; len(input) > limit {
		return nil, p.callError(export, KindInputTooLarge, fmt.Sprintf(
			"input of %d bytes exceeds the limit of %d", len(input), limit))
	}
	// A deferred plugin is built first, outside the call's timeout, which
	// bounds what the plugin runs, as a load compiles outside its budget:
	// the call waits for the compile as long as its caller does.
	p.enter()
	defer p.leave()
	if err := p.build(ctx, p.pool.queue > 0); err != nil {
		var spent *budgetError
		if errors.As(err, &spent) {
			return nil, p.budgetError(export, spent)
		}
		return nil, fmt.Errorf("sandbox: plugin %s: %w", p.name, err)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, p.limits.Timeout, p.timeout)
	defer cancel()
	for {
		inst, err := p.acquire(ctx, owner, export)
		if err != nil {
			return nil, err
		}
		var started time.Time
		if times != nil {
			started = time.Now()
		}
		out, cerr := p.run(ctx, inst, export, input)
		if times != nil {
			times.lastEnd = time.Now()
			times.run += times.lastEnd.Sub(started)
		}
		// A call whose context ended may have closed the instance even if
		// it returned first.
		// An instance that wrote malformed output may be in any state: it
		// is discarded like one that trapped.
		healthy := ctx.Err() == nil && (cerr == nil || cerr.Kind == KindPlugin || cerr.Kind == KindOutputTooLarge)
		p.pool.release(inst, healthy)
		switch {
		case cerr == errExited:
			continue // inst exited during an earlier call; the next one is fresher
		case cerr != nil:
			return nil, cerr
		}
		return out, nil
	}
}

// acquire takes an instance of owner from the pool for a call of export.
func (p *Plugin) acquire(ctx context.Context, owner, export string) (*instance, error) {
	if ctx.Err() != nil {
		return nil, p.ctxError(export, ctx)
	}
	inst, err := p.pool.acquire(ctx, owner, p.pool.queue > 0)
	if err == nil {
		return inst, nil
	}
	var spent *budgetError // on the heap: not made for a call that got an instance
	switch {
	case errors.As(err, &spent):
		return nil, p.budgetError(export, spent)
	case errors.Is(err, errQueueFull):
		return nil, p.callError(export, KindBusy, fmt.Sprintf(
			"%d calls running and %d waiting", p.limits.MaxInstances, p.limits.MaxQueue))
	case ctx.Err() != nil:
		return nil, p.ctxError(export, ctx)
	}
	return nil, fmt.Errorf("sandbox: plugin %s: %w", p.name, err)
}

// errExited is what run returns when the instance had exited before the
// call: a plugin that exits with status 0 succeeds as far as Extism is
// concerned, and Extism only notices on the next call, before running any
// plugin code, with this message.
var errExited = &CallError{Kind: KindTrap, Message: "module is closed"}

// run calls export on inst and classifies the outcome.
func (p *Plugin) run(ctx context.Context, inst *instance, export string, input []byte) ([]byte, *CallError) {
	cc := newCallContext(ctx, inst.log, p.limits.HostCallsPerSecond)
	state := &cc.state
	state.kernel = &inst.caller.kernel
	ctx = cc
	inst.log.reset(ctx)
	inst.sleep.ctx = ctx
	defer func() { inst.sleep.ctx = nil }()
	// The plugin's code stops at its next look at ctx (internal/wasmpass/interrupt.go).
	// The output is empty: the sandbox serves output_set (kernel.go).
	rc, err := guard(p, export, func() (uint32, error) {
		if inst.called {
			return inst.caller.call(cc, export, input)
		}
		// The first call initializes the guest's runtime (call.go).
		inst.called = true
		rc, _, err := inst.plugin.CallWithContext(ctx, export, input)
		return rc, err
	})
	inst.log.flush()
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, p.ctxError(export, ctx)
	case err != nil && err.Error() == errExited.Message:
		return nil, errExited
	case err != nil && state.denied:
		return nil, p.callError(export, KindDenied, p.trapMessage(export, err))
	// The sandbox serves error_set, so Extism never sees an error the
	// plugin set: any error it reports comes from wazero, the instance
	// crashed.
	case err != nil:
		kind, msg := p.explainTrap(export, err, inst.log.said)
		return nil, p.callError(export, kind, msg)
	// As with Extism, an error fails the call whatever the export returned.
	case state.err != "":
		return nil, p.callError(export, KindPlugin, state.err)
	case rc != 0:
		return nil, p.callError(export, KindPlugin, fmt.Sprintf("%s returned %d without an error message", export, int32(rc)))
	case state.output.length > uint64(p.limits.MaxOutputBytes):
		return nil, p.callError(export, KindOutputTooLarge, fmt.Sprintf(
			"output of %d bytes exceeds the limit of %d", state.output.length, p.limits.MaxOutputBytes))
	}
	// As with Extism, an output outside the kernel memory is empty.
	view, _ := inst.caller.memory.Read(uint32(state.output.offset), uint32(state.output.length))
	out := bytes.Clone(view)
	if p.checkOutput != nil {
		if err := p.checkOutput(export, out); err != nil {
			return nil, p.callError(export, KindMalformedOutput, err.Error())
		}
	}
	if p.redact != nil {
		out = []byte(p.redact.Replace(string(out)))
	}
	return out, nil
}

// trapMessage is what a trap tells the caller: wazero's message without the
// wasm stack trace, which goes to the plugin's log at debug level for its
// author.
func (p *Plugin) trapMessage(export string, err error) string {
	msg, trace, traced := strings.Cut(err.Error(), "\nwasm stack trace:")
	msg = strings.TrimSuffix(msg, " (recovered by wazero)")
	if traced {
		p.logger.Debug("plugin trapped", "export", export, "err", msg, "wasm_stack_trace", strings.TrimSpace(trace))
	}
	return msg
}

// explainTrap says what a trap err of export was, with what the plugin
// said on stderr: running out of memory (KindOutOfMemory), exiting with a
// status, crashing, or a host function refusing it (a denied HTTP request,
// a block over its cap), whose message says it all.
func (p *Plugin) explainTrap(export string, err error, said string) (ErrorKind, string) {
	msg := p.trapMessage(export, err)
	if said != "" {
		said = "; the plugin said: " + said
	}
	var status int
	if _, scanErr := fmt.Sscanf(msg, "module closed with exit_code(%d)", &status); scanErr != nil {
		status = -1
	}
	switch {
	case strings.Contains(said, "out of memory") || strings.Contains(said, "memory allocation of"):
		return KindOutOfMemory, fmt.Sprintf("all %d MiB of its memory were in use%s", p.limits.MemoryMiB, said)
	case status >= 0:
		return KindTrap, fmt.Sprintf("exited with status %d%s", status, said)
	case strings.HasPrefix(msg, "wasm error: "):
		return KindTrap, msg + said
	}
	return KindTrap, msg
}

// callError returns a CallError of the plugin.
func (p *Plugin) callError(export string, kind ErrorKind, msg string) *CallError {
	return &CallError{Plugin: p.name, Export: export, Kind: kind, Message: p.redacted(msg)}
}

// happened tells the plugin's Observer, if any, of an event of its life.
func (p *Plugin) happened(event string) {
	if p.observer != nil {
		p.observer.Happened(event)
	}
}

// budgetError is the error of a call that found no room in the memory
// budget for a new instance.
func (p *Plugin) budgetError(export string, spent *budgetError) *CallError {
	ce := p.callError(export, KindBusy, spent.msg)
	ce.SpentBudget = true
	return ce
}

// ctxError is the error of a call whose context ended: a timeout when its
// deadline passed (Limits.Timeout or the caller's), else a cancellation.
func (p *Plugin) ctxError(export string, ctx context.Context) *CallError {
	kind := KindCanceled
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		kind = KindTimeout
	}
	return p.callError(export, kind, context.Cause(ctx).Error())
}

// Close closes the plugin. Idle instances are closed at once, instances in
// use when their call returns; Close does not wait for them. Calls waiting
// for an instance, and later calls, fail with ErrClosed.
func (p *Plugin) Close(ctx context.Context) error {
	return p.pool.close(ctx)
}
