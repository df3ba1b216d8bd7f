package sandbox

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"time"
)

// EngineOptions configures an Engine.
type EngineOptions struct {
	// CacheDir is the directory of the persistent compilation cache, created
	// when missing. Empty means an in-memory cache only.
	CacheDir string
	// MemoryBudgetMiB is the memory the instances of all the Engine's
	// plugins may hold together, in MiB, from 64 to 1048576: each instance
	// reserves its worst case from it (budget.go). Zero means
	// DefaultMemoryBudgetMiB.
	MemoryBudgetMiB int
	// MaxCompiles is how many modules the Engine compiles at once; more
	// loads wait for a turn (within their context), so that loading
	// plugins concurrently neither takes more cores than there are nor
	// multiplies the memory compiling takes. Zero or less means
	// GOMAXPROCS.
	MaxCompiles int
	// Egress is how plugins' granted HTTP requests leave the machine.
	Egress Egress
	// UnloadIdleAfter is how long a plugin that can read its module again
	// (Options.Reread) may go without calls before it gives back its
	// compiled code and instances (unload.go), when there is a CacheDir to
	// load the code from again (codecache.go). Zero or less keeps them.
	UnloadIdleAfter time.Duration
}

// Engine compiles plugins and shares their compiled code: loading a module
// that was compiled before (by this Engine, or by any Engine using the same
// CacheDir) skips compilation. Its plugins share its memory budget.
type Engine struct {
	code     *codeCaches
	budget   *memoryBudget
	compiles chan struct{} // a token for each compile under way
	egress   Egress
	valid    validatedModules
	// compileNotice is how long a compile runs before it is logged, so
	// that the seconds a first compile of a large module takes are seen
	// for what they are; zero or less logs every compile.
	compileNotice time.Duration
	// unloadIdleAfter is EngineOptions.UnloadIdleAfter.
	unloadIdleAfter time.Duration
}

// compileNotice is how long a compile runs before the Engine logs it:
// loading from the compilation cache takes milliseconds, a first compile
// of a standard Go plugin seconds.
const compileNotice = 500 * time.Millisecond

// ValidationFolder is the folder, in EngineOptions.CacheDir, of the
// records of the modules found valid, which are not validated again.
const ValidationFolder = "mcphost-valid"

// NewEngine returns an Engine with the compilation cache and the memory
// budget opts describes. It changes no process-wide setting: the Extism
// kernel functions that depend on one (http_request, which Extism sends
// with http.DefaultClient, and the log functions, which it drops unless a
// global log level is set) are served by the sandbox itself, per plugin.
func NewEngine(opts EngineOptions) (*Engine, error) {
	budget := opts.MemoryBudgetMiB
	switch {
	case budget == 0:
		budget = DefaultMemoryBudgetMiB
	case budget < MinMemoryBudgetMiB || budget > MaxMemoryBudgetMiB:
		return nil, fmt.Errorf("sandbox: memory budget %d MiB is not between %d and %d MiB", budget, MinMemoryBudgetMiB, MaxMemoryBudgetMiB)
	}
	e := &Engine{egress: opts.Egress, compileNotice: compileNotice, budget: newMemoryBudget(budget), unloadIdleAfter: opts.UnloadIdleAfter, compiles: make(chan struct{}, cmp.Or(max(opts.MaxCompiles, 0), runtime.GOMAXPROCS(0)))}
	code, err := newCodeCaches(opts.CacheDir, e.budget)
	if err != nil {
		return nil, fmt.Errorf("sandbox: compilation cache %s: %w", opts.CacheDir, err)
	}
	e.code = code
	if !code.releasable() {
		e.unloadIdleAfter = 0
	}
	if opts.CacheDir != "" {
		e.valid.dir = filepath.Join(opts.CacheDir, ValidationFolder)
	}
	return e, nil
}

// inCompileTurn runs fn, which compiles a module of size bytes, when fewer
// than MaxCompiles compiles are under way, or fails when ctx ends first. A
// compile that runs longer than the Engine's notice is logged to logger
// as it starts and when it ends.
func (e *Engine) inCompileTurn(ctx context.Context, logger *slog.Logger, size int, fn func() error) error {
	select {
	case e.compiles <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("waiting for a turn to compile (%d compiles at once): %w", cap(e.compiles), context.Cause(ctx))
	}
	defer func() { <-e.compiles }()
	started := time.Now()
	announce := func() {
		logger.Info("compiling", "bytes", size, "note", "not in the compilation cache: a first compile takes seconds")
	}
	var notice *time.Timer
	if e.compileNotice <= 0 {
		announce()
	} else {
		notice = time.AfterFunc(e.compileNotice, announce)
	}
	err := fn()
	if notice == nil || !notice.Stop() {
		logger.Info("compiled", "took", time.Since(started).Round(time.Millisecond), "ok", err == nil)
	}
	return err
}

// Close releases the in-memory compilation caches. Close the Engine's
// plugins first.
func (e *Engine) Close() error {
	return e.code.close()
}
