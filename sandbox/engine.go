package sandbox

import (
	"context"
	"fmt"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
)

// EngineOptions configures an Engine.
type EngineOptions struct {
	// CacheDir is the directory of the persistent compilation cache, created
	// when missing. Empty means an in-memory cache only.
	CacheDir string
}

// Engine compiles plugins and shares their compiled code: loading a module
// that was compiled before (by this Engine, or by any Engine using the same
// CacheDir) skips compilation.
type Engine struct {
	cache wazero.CompilationCache
}

// NewEngine returns an Engine with the compilation cache opts describes.
//
// It changes two process-wide settings: the Extism log level, to debug
// (Extism drops all guest log calls by default), so that Options.Logger
// decides what is kept; and the transport and redirect policy of
// http.DefaultClient, which Extism sends plugin requests with, so that
// every request of a plugin, and every redirect, is checked against its
// Grants (scheme, host, port, and the address really connected to) and
// sent on a transport of its own. Other requests through http.DefaultClient
// are unchanged. Do not replace http.DefaultClient.Transport afterwards:
// plugins granted AllowedHosts would then fail to load.
func NewEngine(opts EngineOptions) (*Engine, error) {
	extism.SetLogLevel(extism.LogLevelDebug)
	guardHTTP()
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
