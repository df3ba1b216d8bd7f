package pluginhost

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sandbox"
)

// The listing cache (RATIONALE.md, "Why do installed plugins cost nothing
// until they are called?"): what a plugin's listing exports answered when
// it last loaded, kept beside the compiled code, so that the next start
// lists the plugin without compiling or instantiating it; it is compiled
// and instantiated on its first call (sandbox.Engine.Defer). An entry is
// keyed by everything the answers may depend on: the plugin's bytes, its
// name, its whole configuration, its grants (secret values only hashed
// into the key, never written) and the mcphost binary. A load that finds
// no entry runs the plugin as before and writes one.
//
// A plugin granted a host function, an HTTP host, a mount or a keyring
// entry may list what the key does not cover: what its host calls answer
// today. Its entry answers the first lists all the same, so that it starts
// as fast as any; then, once it is served, it is built and listed again
// (listingRefresh), clients get list_changed if the lists differ, and the
// entry is rewritten.

// listingCacheVersion is the format of the entries; a change makes every
// older entry miss.
const listingCacheVersion = 1

// listingExports are the exports whose answers the cache keeps.
var listingExports = []string{abi.ExportListTools, abi.ExportListPrompts, abi.ExportListResources, abi.ExportListResourceTemplates, abi.ExportV1Describe}

// listingCall is one listing call a plugin answered.
type listingCall struct {
	Export string `json:"export"`
	Input  []byte `json:"input"`
	Output []byte `json:"output"`
}

// listingEntry is what a plugin's listings answered at a load.
type listingEntry struct {
	Version int           `json:"version"`
	Calls   []listingCall `json:"calls"`
}

// find returns the answer to a call of export with input, if the entry has
// one.
func (e *listingEntry) find(export string, input []byte) ([]byte, bool) {
	for _, c := range e.Calls {
		if c.Export == export && bytes.Equal(c.Input, input) {
			return c.Output, true
		}
	}
	return nil, false
}

// binaryID names the running mcphost binary: its module version and
// revision, and the path, size and time of its file, so that a rebuild
// misses every entry.
var binaryID = sync.OnceValue(func() string {
	id := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		id = bi.GoVersion + " " + bi.Main.Path + "@" + bi.Main.Version
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" || s.Key == "vcs.modified" {
				id += " " + s.Key + "=" + s.Value
			}
		}
	}
	if exe, err := os.Executable(); err == nil {
		if fi, err := os.Stat(exe); err == nil {
			id += " " + exe + " " + fi.ModTime().UTC().String() + " " + strconv.FormatInt(fi.Size(), 10)
		}
	}
	return id
})

// listingKey returns the key of the entry of plugin name loaded from the
// file of digest fileSum with pc and grants under cfg ("" when it cannot be
// made).
func listingKey(name string, fileSum [sha256.Size]byte, cfg *config.Config, pc config.PluginConfig, grants sandbox.Grants) string {
	raw, err := json.Marshal(struct {
		Version int
		Binary  string
		Name    string
		File    string
		Config  config.PluginConfig
		Grants  sandbox.Grants
		Budget  int // the memory budget a load checks an instance against
	}{listingCacheVersion, binaryID(), name, hex.EncodeToString(fileSum[:]), pc, grants, cfg.Server.MemoryBudgetMiB})
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// mayListTheOutside reports whether a plugin loaded with pc and grants may
// list what its listing key does not cover: it is granted host functions,
// HTTP hosts, mounts or keyring entries, whose answers may change.
func mayListTheOutside(pc config.PluginConfig, grants sandbox.Grants) bool {
	return len(pc.HostFunctions) > 0 || len(grants.AllowedHosts) > 0 || len(grants.Mounts) > 0 || len(pc.Keyring) > 0
}

// listingCache is the folder of the entries; "" keeps none.
type listingCache string

// read returns the entry of key, or nil.
func (c listingCache) read(key string) *listingEntry {
	if c == "" || key == "" {
		return nil
	}
	raw, err := os.ReadFile(filepath.Join(string(c), key+".json"))
	if err != nil {
		return nil
	}
	var e listingEntry
	if json.Unmarshal(raw, &e) != nil || e.Version != listingCacheVersion {
		return nil
	}
	return &e
}

// write stores the entry of key, and a copy of the plugin's file (of
// digest sum) unless one is there, each whole or not at all.
func (c listingCache) write(key string, sum [sha256.Size]byte, file []byte, e *listingEntry) error {
	if c == "" || key == "" {
		return nil
	}
	raw, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if err := c.writeCopy(sum, file); err != nil {
		return err
	}
	return c.writeFile(key+".json", raw)
}

// writeCopy writes the copy of the plugin file of digest sum unless one
// is there.
func (c listingCache) writeCopy(sum [sha256.Size]byte, file []byte) error {
	if err := os.MkdirAll(string(c), 0o700); err != nil {
		return err
	}
	copyName := hex.EncodeToString(sum[:]) + ".wasm"
	if _, err := os.Stat(filepath.Join(string(c), copyName)); err == nil {
		return nil
	}
	return c.writeFile(copyName, file)
}

// keepModule keeps a copy of the plugin file of digest sum, unless one is
// there, and returns how to read it (module); nil when there is no cache
// or the copy cannot be written.
func (c listingCache) keepModule(sum [sha256.Size]byte, file []byte) func() ([]byte, error) {
	if c == "" || c.writeCopy(sum, file) != nil {
		return nil
	}
	return c.module(sum)
}

// module returns how to read the copy of the plugin file of digest sum,
// which refuses a copy of other bytes; nil when there is no copy. A
// plugin listed from the cache compiles from it, so that the version that
// loaded is the one that runs, whatever the plugins folder holds by then.
func (c listingCache) module(sum [sha256.Size]byte) func() ([]byte, error) {
	if c == "" {
		return nil
	}
	path := filepath.Join(string(c), hex.EncodeToString(sum[:])+".wasm")
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	return func() ([]byte, error) {
		b, err := os.ReadFile(path)
		if err == nil && sha256.Sum256(b) != sum {
			err = errors.New("the cached copy of the plugin's module is not the module that loaded")
		}
		return b, err
	}
}

// writeFile writes name in the cache folder, whole or not at all.
func (c listingCache) writeFile(name string, data []byte) error {
	tmp, err := os.CreateTemp(string(c), name+".*.tmp")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(string(c), name))
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
	return err
}

// listingRuntime is the runtime of a plugin with a listing cache entry, or
// one that records one: until the plugin is built, its listing calls are
// answered from the entry (served); while recording, the answers of its
// listing calls are kept. Other calls, and listing calls the entry does
// not hold, go to the runtime, which builds the plugin first.
type listingRuntime struct {
	host.Runtime
	built func() bool

	mu     sync.Mutex
	served *listingEntry
	record *listingEntry
}

// Call answers a listing call from the entry while the plugin is not
// built, else calls the plugin.
func (r *listingRuntime) Call(ctx context.Context, export string, input []byte) ([]byte, error) {
	if !slices.Contains(listingExports, export) {
		return r.Runtime.Call(ctx, export, input)
	}
	r.mu.Lock()
	served := r.served
	r.mu.Unlock()
	if served != nil && !r.built() {
		if out, ok := served.find(export, input); ok {
			return slices.Clone(out), nil
		}
	}
	out, err := r.Runtime.Call(ctx, export, input)
	if err == nil {
		r.mu.Lock()
		if r.record != nil {
			r.record.Calls = append(r.record.Calls, listingCall{Export: export, Input: slices.Clone(input), Output: slices.Clone(out)})
		}
		r.mu.Unlock()
	}
	return out, err
}

// startRecording starts keeping the answers of listing calls, afresh.
func (r *listingRuntime) startRecording() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.record = &listingEntry{Version: listingCacheVersion}
}

// serve makes e the entry that answers listing calls while the plugin is
// not built (after an idle unload).
func (r *listingRuntime) serve(e *listingEntry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.served = e
}

// recorded stops recording and returns what was recorded, or nil when
// nothing was.
func (r *listingRuntime) recorded() *listingEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.record
	r.record = nil
	return e
}
