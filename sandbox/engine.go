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
	// plugins may hold together, in MiB (not enforced yet).
	MemoryBudgetMiB int
}

// Bounds of EngineOptions.MemoryBudgetMiB (not enforced yet).
const (
	MinMemoryBudgetMiB = 64
	MaxMemoryBudgetMiB = 1 << 20
)

// Engine compiles plugins and shares their compiled code: loading a module
// that was compiled before (by this Engine, or by any Engine using the same
// CacheDir) skips compilation.
type Engine struct {
	cache wazero.CompilationCache
}

// NewEngine returns an Engine with the compilation cache opts describes. It
// changes no process-wide setting: the Extism kernel functions that depend
// on one (http_request, which Extism sends with http.DefaultClient, and the
// log functions, which it drops unless a global log level is set) are
// served by the sandbox itself, per plugin.
func NewEngine(opts EngineOptions) (*Engine, error) {
	if opts.CacheDir == "" {
		return &Engine{cache: wazero.NewCompilationCache()}, nil
	}
	cache, err := wazero.NewCompilationCacheWithDir(opts.CacheDir)
	if err != nil {
		return nil, fmt.Errorf("sandbox: compilation cache %s: %w", opts.CacheDir, err)
	}
	return &Engine{cache: cache}, nil
}

// Close releases the in-memory compilation cache. Close the Engine's plugins
// first.
func (e *Engine) Close() error {
	return e.cache.Close(context.Background())
}
