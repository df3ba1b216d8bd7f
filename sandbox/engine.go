package sandbox

import (
	"context"
	"fmt"

	"github.com/tetratelabs/wazero"
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
}

// Engine compiles plugins and shares their compiled code: loading a module
// that was compiled before (by this Engine, or by any Engine using the same
// CacheDir) skips compilation. Its plugins share its memory budget.
type Engine struct {
	cache  wazero.CompilationCache
	budget *memoryBudget
}

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
	e := &Engine{budget: newMemoryBudget(budget)}
	if opts.CacheDir == "" {
		e.cache = wazero.NewCompilationCache()
		return e, nil
	}
	cache, err := wazero.NewCompilationCacheWithDir(opts.CacheDir)
	if err != nil {
		return nil, fmt.Errorf("sandbox: compilation cache %s: %w", opts.CacheDir, err)
	}
	e.cache = cache
	return e, nil
}

// Close releases the in-memory compilation cache. Close the Engine's plugins
// first.
func (e *Engine) Close() error {
	return e.cache.Close(context.Background())
}
