package sandbox

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/tetratelabs/wazero"
)

// Compiled code, and giving it back. wazero keeps a module's compiled code
// in the in-memory part of the CompilationCache its runtime is configured
// with, counting the modules compiled from it, and Extism never closes the
// modules it compiles: closing a CompiledPlugin closes its runtime, which,
// with a cache, leaves the code in the cache. Code compiled under one cache
// shared by every plugin would stay until the Engine closes, whatever was
// closed, unloaded or swapped out.
//
// So, with a CacheDir, each module gets a cache of its own over the
// folder, shared by the plugins built from the same bytes (every
// JavaScript plugin: the engine's module) and closed when the last of them
// is closed or unloaded (unload.go), which frees the code; a build after
// that loads it from the folder in milliseconds. Without a CacheDir,
// compiling again would take seconds: every plugin shares one in-memory
// cache, as long as the Engine lives, and none is unloaded.

// codeCaches are an Engine's compilation caches.
type codeCaches struct {
	dir    string                  // EngineOptions.CacheDir
	shared wazero.CompilationCache // every plugin's, when dir is ""
	// budget holds the cost of the code of each module's cache, from its
	// first plugin's build to its close (budget.go).
	budget *memoryBudget

	mu       sync.Mutex
	byModule map[[sha256.Size]byte]*codeCache

	// filesMu guards files: the compiled modules in the folder as last
	// listed (wroteFiles).
	filesMu sync.Mutex
	files   map[string]bool
}

// codeCache is the compilation cache of the plugins built from one module.
type codeCache struct {
	cache  wazero.CompilationCache
	key    [sha256.Size]byte
	shared bool // the Engine's one cache, never closed by a plugin
	// compileMu makes the plugins built with the cache compile one at a
	// time: wazero (v1.12.0) shows the other runtimes of a cache a module
	// it reads from the folder before it has compiled the module's entry
	// preambles, and a runtime that found it there then and called it
	// crashed the process. One at a time, a plugin's compile ends with the
	// code whole, and the next finds it in memory. (A compile without a
	// folder publishes the code whole; the Engine's one cache needs no turns.)
	compileMu sync.Mutex
	users     int // the plugins built with it, guarded by codeCaches.mu
	// holder and cost are the plugin whose build reserved the code's cost
	// from the budget, and the cost; guarded by codeCaches.mu.
	holder string
	cost   uint64
}

// newCodeCaches returns the caches of an Engine with the cache folder dir,
// or with none if dir is "", whose code counts against budget.
func newCodeCaches(dir string, budget *memoryBudget) (*codeCaches, error) {
	c := &codeCaches{dir: dir, budget: budget, byModule: map[[sha256.Size]byte]*codeCache{}}
	if dir == "" {
		c.shared = wazero.NewCompilationCache()
		return c, nil
	}
	// The folder is checked, and created, here, so that a bad one fails
	// the Engine rather than a build.
	cache, err := wazero.NewCompilationCacheWithDir(dir)
	if err != nil {
		return nil, err
	}
	_ = cache.Close(context.Background()) // holds nothing yet
	c.files = map[string]bool{}
	c.wroteFiles() // those there before are not this Engine's
	return c, nil
}

// wroteFiles reports whether compiled modules were written to the folder
// since it was last listed: wazero writes each module it compiles there,
// in a file named by its key under a folder of its version and platform
// (wazero-VERSION-ARCH-OS), and writes nothing for a module it found
// there. So a build that wrote a file was a miss of the compilation cache.
// When two builds run at once, one may count the other's file, but no
// file is counted twice and each build once: the totals hold. (Builds
// of plugins without an Observer do not look: a file one wrote counts
// for the next build that looks, as the plugins of a server either all
// have one or none has.)
func (c *codeCaches) wroteFiles() bool {
	folders, _ := filepath.Glob(filepath.Join(c.dir, "wazero-*"))
	c.filesMu.Lock()
	defer c.filesMu.Unlock()
	wrote := false
	for _, folder := range folders {
		entries, _ := os.ReadDir(folder)
		for _, e := range entries {
			name := filepath.Join(filepath.Base(folder), e.Name())
			if e.Type().IsRegular() && !c.files[name] {
				c.files[name], wrote = true, true
			}
		}
	}
	return wrote
}

// releasable reports whether a plugin's code can be given back and loaded
// again from the folder.
func (c *codeCaches) releasable() bool { return c.dir != "" }

// acquire returns the cache a plugin built from wasm compiles with, and
// whether the plugin is its first user, which reserves the cost of its
// code from the budget and says so with hold; the plugin gives the cache
// back with release once its compiled code is closed. It fails when the
// folder cannot be made again (removed while serving, and its parent not
// writable).
func (c *codeCaches) acquire(wasm []byte) (cc *codeCache, first bool, err error) {
	if c.dir == "" {
		return &codeCache{cache: c.shared, shared: true}, false, nil
	}
	key := sha256.Sum256(wasm)
	c.mu.Lock()
	defer c.mu.Unlock()
	cc = c.byModule[key]
	if cc == nil {
		cache, err := wazero.NewCompilationCacheWithDir(c.dir)
		if err != nil {
			return nil, false, fmt.Errorf("compilation cache %s: %w", c.dir, err)
		}
		cc = &codeCache{cache: cache, key: key}
		c.byModule[key] = cc
	}
	cc.users++
	return cc, cc.users == 1, nil
}

// hold records that plugin reserved cost bytes of the budget for the code
// of cc, which its last release gives back. (While the first plugin
// builds, another built from the same bytes may take the cache and
// compile: the code is counted once, from here.)
func (c *codeCaches) hold(cc *codeCache, plugin string, cost uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cc.holder, cc.cost = plugin, cost
}

// release gives back a cache acquire returned, and closes it, freeing its
// compiled code and giving its cost back to the budget, when no plugin
// uses it any more. The plugin's compiled code must be closed first.
func (c *codeCaches) release(cc *codeCache) {
	if cc.shared {
		return
	}
	c.mu.Lock()
	cc.users--
	last := cc.users == 0
	if last {
		delete(c.byModule, cc.key)
	}
	holder, cost := cc.holder, cc.cost
	c.mu.Unlock()
	if last {
		_ = cc.cache.Close(context.Background()) // closing only frees memory
		if cost > 0 {
			c.budget.releaseCode(holder, cost)
		}
	}
}

// close closes the shared cache, and any cache a plugin left open.
func (c *codeCaches) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, cc := range c.byModule {
		_ = cc.cache.Close(context.Background())
		delete(c.byModule, key)
	}
	if c.shared == nil {
		return nil
	}
	return c.shared.Close(context.Background())
}
