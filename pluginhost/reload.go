package pluginhost

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
	js "github.com/mcphost/mcphost/internal/jsengine"
	"github.com/mcphost/mcphost/internal/pluginsource"
)

// Hot swap: a Reloader keeps a server's plugins in step with the files of
// a plugins folder and with a config. Each plugin name (a file name without
// extension) is loaded from its files as read and hashed once, in memory,
// by the loader that LoadDir uses, so that the rules of the initial load
// apply and what is loaded is exactly what was hashed. A new version is
// compiled and checked next to the running one; only when it loaded does
// the catalog swap (ReplacePlugins). Calls already running finish on the old version, which
// is closed once they ended (drain.go).

// Defaults of a Reloader's timing.
const (
	// DefaultSettle is how long a plugin file must have been left alone,
	// its size and modification time unchanged, before it is loaded.
	DefaultSettle = 200 * time.Millisecond
	// DefaultDrainGrace is how long a replaced version stays open at least,
	// so that a request that picked it from the previous catalog just
	// before the swap still reaches it.
	DefaultDrainGrace = time.Second
)

// Reloader loads a plugins folder into a server and, on Sync and
// SetConfig, loads again the plugins whose files or settings changed. Its
// methods are safe for concurrent use; they run one at a time.
type Reloader struct {
	loader *Loader
	srv    *host.Server
	dir    string

	// Settle is how long a file's size and modification time must be
	// stable before it is loaded (DefaultSettle). Set it before use.
	Settle time.Duration
	// DrainGrace is how long a replaced version stays open at least
	// (DefaultDrainGrace). Set it before use.
	DrainGrace time.Duration

	mu     sync.Mutex
	cfg    *config.Config
	slots  map[string]*slot    // by plugin name
	seen   map[string]seenStat // by file name: files not settled yet
	drains map[*host.Plugin]*drain

	serving sync.Map // plugin name -> *drain of the version serving it
	status  loadStatus
	loaded  bool // Load has run: Syncs start from what it loaded
}

// slot is what the Reloader knows of one plugin name.
type slot struct {
	// files and pc are the files and settings of the last attempt to load
	// the name, which may have failed; a Sync loads the name again only
	// when one of them changed.
	files []fileVersion
	pc    config.PluginConfig
	// plugin is the version serving, nil when none is; file and sha256
	// say what it was loaded from, loadedFiles and loadedPC from which
	// files and with which settings.
	plugin      *host.Plugin
	file        string
	sha256      string
	loadedFiles []fileVersion
	loadedPC    config.PluginConfig
}

// fileVersion identifies the content of one file.
type fileVersion struct {
	name   string
	size   int64
	mtime  time.Time
	sha256 string
}

// seenStat is a file's size and mtime and when they were first seen so.
type seenStat struct {
	size  int64
	mtime time.Time
	at    time.Time
}

// NewReloader returns a Reloader of the plugins in dir, loaded by loader
// into loader.Server with the settings of cfg. Call Load first.
func NewReloader(loader *Loader, dir string, cfg *config.Config) *Reloader {
	return &Reloader{
		loader: loader, srv: loader.Server, dir: dir, cfg: cfg,
		Settle: DefaultSettle, DrainGrace: DefaultDrainGrace,
		slots: map[string]*slot{}, seen: map[string]seenStat{}, drains: map[*host.Plugin]*drain{},
	}
}

// Dir returns the plugins folder.
func (r *Reloader) Dir() string { return r.dir }

// Load loads every plugin of the folder, as LoadDir does but concurrently,
// without waiting for files to settle, and adds each plugin to the server's
// catalog as soon as it is loaded and listed (with those that were loaded
// meanwhile), so that one slow plugin delays no other: sessions hear of
// each arrival through list_changed.
// Each plugin's load is bounded by its load budget (Loader.LoadFile). It
// returns once every plugin has loaded or failed; the failures are logged
// as they happen, with the plugin's name. Later Syncs start from what it
// loaded; they wait for it.
func (r *Reloader) Load(ctx context.Context) LoadResult {
	return r.StartLoad(ctx)()
}

// StartLoad starts Load and returns a function that waits for it to end
// and returns what Load returns. When StartLoad returns, the server knows
// how many plugins are loading: a client's initialize, even one already
// waiting, waits for them as startup_wait says.
func (r *Reloader) StartLoad(ctx context.Context) (wait func() LoadResult) {
	r.mu.Lock() // unlocked by the goroutine that collects the outcomes
	r.loaded = true
	groups, err := r.list()
	if err != nil {
		r.mu.Unlock()
		err = fmt.Errorf("reading plugins folder: %w", err)
		return func() LoadResult { return LoadResult{Errors: []error{err}} }
	}
	names := slices.Sorted(maps.Keys(groups))
	r.status.loading(names)
	serverCompiled, done := r.srv.Loading(len(names), r.cfg.Server.StartupWait)
	gate := newCompileGate(len(names), compileFirstAtMost)
	compiled := func() { serverCompiled(); gate.compiled() }
	type outcome struct {
		name string
		sl   *slot
		p    *host.Plugin
		d    *drain
		errs []error
	}
	outcomes := make(chan outcome)
	for _, name := range names {
		pc := r.cfg.Plugin(name)
		files := groups[name]
		go func() {
			// Read (and hashed) here, so that the plugins' files are read
			// on every core; fetched here, so that no plugin waits for
			// another's registry.
			var (
				versions []fileVersion
				data     map[string][]byte
				err      error
			)
			if pc.Source != "" {
				versions, data, err = fetchSource(ctx, r.cfg, pc, r.srv.Logger())
			} else {
				versions, data, _, err = r.read(files, pluginsource.MaxFileBytes(pc), time.Time{})
			}
			if err != nil {
				compiled()
				outcomes <- outcome{name: name, errs: []error{err}}
				return
			}
			sl := &slot{files: versions, pc: pc}
			isCompiled := sync.OnceFunc(compiled)
			p, d, errs := r.load(ctx, name, r.cfg, versions, data, func() {
				isCompiled()
				_ = gate.wait(ctx) // a load whose ctx ended fails on it
			})
			isCompiled() // if it failed before compiling
			outcomes <- outcome{name, sl, p, d, errs}
		}()
	}
	result := make(chan LoadResult, 1)
	go func() {
		defer r.mu.Unlock()
		defer done()
		res := LoadResult{Failed: map[string]error{}}
		log := r.srv.Logger()
		for left := len(names); left > 0; {
			// The plugins that loaded meanwhile are published together:
			// a catalog for each batch, not one for each plugin (a warm
			// start of 500 plugins built 500 catalogs of up to 500).
			batch := []outcome{<-outcomes}
			for drained := false; !drained && len(batch) < left; {
				select {
				case o := <-outcomes:
					batch = append(batch, o)
				default:
					drained = true
				}
			}
			left -= len(batch)
			var ready []string
			for _, o := range batch {
				res.Errors = append(res.Errors, o.errs...)
				for _, err := range o.errs {
					switch {
					case o.p != nil: // another file of the same name, e.g. x.wasm beside x.js
						log.Warn("plugin file not used", "plugin", o.name, "err", err)
						continue
					case ctx.Err() != nil: // the server is stopping
						log.Debug("plugin load stopped", "plugin", o.name, "err", err)
						continue
					}
					r.loader.loadFailed(o.name, failureReason(err))
					switch {
					case !r.cfg.Named(o.name):
						log.Warn("plugin not loaded", "plugin", o.name, "err", err, "named_in_config", false)
					case r.cfg.Server.OnLoadError == config.OnLoadErrorSkip:
						log.Warn("plugin not loaded", "plugin", o.name, "err", err, "on_load_error", config.OnLoadErrorSkip)
					default:
						log.Error("plugin not loaded", "plugin", o.name, "err", err)
					}
				}
				if o.p == nil && len(o.errs) > 0 {
					res.Failed[o.name] = o.errs[0]
				}
				if o.sl != nil {
					r.slots[o.name] = o.sl
				}
				if o.p == nil {
					r.status.set(o.name, failedOrDisabled(o.errs))
					continue
				}
				v := o.sl.files[0]
				o.sl.plugin, o.sl.file, o.sl.sha256, o.sl.loadedFiles, o.sl.loadedPC = o.p, v.name, v.sha256, o.sl.files, o.sl.pc
				r.adopt(o.name, o.p, o.d)
				res.Plugins = append(res.Plugins, o.p)
				ready = append(ready, o.name)
			}
			if len(ready) > 0 {
				r.publish(ctx)
				for _, name := range ready {
					r.status.set(name, StateReady)
					r.loader.changed(name, "added")
				}
			}
		}
		result <- res
	}()
	return sync.OnceValue(func() LoadResult { return <-result })
}

// publish makes the server serve the plugins of the slots, and records
// the drain of each as the one serving its name. It returns what changed.
func (r *Reloader) publish(ctx context.Context) host.ListChanges {
	var plugins []*host.Plugin
	for _, name := range slices.Sorted(maps.Keys(r.slots)) {
		if p := r.slots[name].plugin; p != nil {
			plugins = append(plugins, p)
			r.serving.Store(name, r.drains[p])
		} else {
			r.serving.Delete(name)
		}
	}
	_, changes := r.srv.ReplacePlugins(ctx, plugins)
	for _, p := range plugins {
		if d := r.drains[p]; d != nil && d.refreshListing != nil {
			go d.refreshListing(ctx) // ends with the server
			d.refreshListing = nil   // once
		}
	}
	return changes
}

// SetConfig makes cfg the config in force and loads again the plugins
// whose effective settings (config.Config.Plugin) it changes, as Sync does.
// Settings outside [defaults] and [plugins] take effect on restart only; a
// change to them is logged. It returns what Sync returns.
func (r *Reloader) SetConfig(ctx context.Context, cfg *config.Config) time.Duration {
	r.mu.Lock()
	old := r.cfg
	r.cfg = cfg
	r.mu.Unlock()
	if restart := restartOnlyChanges(old, cfg); len(restart) > 0 {
		r.srv.Logger().Warn("config changes that take effect on restart only", "tables", strings.Join(restart, ", "), "config", cfg.Path)
	}
	r.srv.Logger().Info("config applied", "config", cfg.Path)
	return r.Sync(ctx)
}

// restartOnlyChanges names the tables whose changes a running server does
// not apply. Settings derived from the listen address are left out: the
// running config's follow the address really bound.
func restartOnlyChanges(old, cur *config.Config) []string {
	var tables []string
	if !reflect.DeepEqual(old.Server, cur.Server) {
		tables = append(tables, "[server]")
	}
	oh, ch := old.HTTP, cur.HTTP
	oh.Listen, ch.Listen = "", ""
	if !reflect.DeepEqual(oh, ch) {
		tables = append(tables, "[http]")
	}
	oa, ca := old.Auth, cur.Auth
	oa.Resource, ca.Resource, oa.Audience, ca.Audience = "", "", "", ""
	if !reflect.DeepEqual(oa, ca) {
		tables = append(tables, "[auth]")
	}
	if !reflect.DeepEqual(old.Endpoints, cur.Endpoints) {
		tables = append(tables, "[[endpoints]]")
	}
	return tables
}

// swap is one plugin's change in a Sync.
type swap struct {
	name, change   string // added, replaced, reconfigured or removed
	file           string
	oldSHA, newSHA string
	old            *host.Plugin
	started        time.Time
	reason         string
}

// Sync compares the folder and the config in force with what is loaded, and
// loads again the plugin names whose files or effective settings changed: a
// new or changed file is loaded, a plugin whose files are gone is dropped.
// The new versions replace the old ones in one catalog swap; sessions hear
// of the lists that changed, and subscribers of resources no plugin serves
// anymore are told and unsubscribed. A version that fails to load is logged
// with its file name, and the running version keeps serving, unless the
// failure follows a change of the plugin's settings: then the plugin is
// dropped, since it would otherwise keep grants the operator withdrew. A
// file modified less than Settle ago is left for later: Sync returns how
// long to wait before calling it again, 0 when nothing is pending. Before
// Load, Sync does nothing; while Load runs, it waits for it.
func (r *Reloader) Sync(ctx context.Context) (retry time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.loaded {
		return 0 // Load, still to come, will find the folder as it is
	}
	log := r.srv.Logger()
	groups, err := r.list()
	if err != nil {
		log.Error("plugins folder not read; plugins unchanged", "folder", r.dir, "err", err)
		return 0
	}
	now := time.Now()
	var swaps []swap
	names := slices.Sorted(maps.Keys(groups))
	for name := range r.slots {
		if _, ok := groups[name]; !ok {
			names = append(names, name)
		}
	}
	for _, name := range names {
		sl := r.slots[name]
		files := groups[name]
		if len(files) == 0 { // removed
			delete(r.slots, name)
			r.status.set(name, "")
			if sl.plugin != nil {
				swaps = append(swaps, swap{name: name, change: "removed", file: sl.file, oldSHA: sl.sha256, old: sl.plugin, started: now})
			}
			continue
		}
		pc := r.cfg.Plugin(name)
		if sl != nil && samePluginConfig(sl.pc, pc) && (pc.Source != "" || r.unchanged(sl.files, files)) {
			continue
		}
		var (
			versions []fileVersion
			data     map[string][]byte
			wait     time.Duration
		)
		if pc.Source != "" {
			versions, data, err = fetchSource(ctx, r.cfg, pc, log)
		} else {
			versions, data, wait, err = r.read(files, pluginsource.MaxFileBytes(pc), now)
		}
		switch {
		case err != nil && pc.Source != "":
			if sl == nil {
				sl = &slot{}
				r.slots[name] = sl
			}
			log.Error("plugin not fetched from its source", "plugin", name, "source", pc.Source, "err", err)
			r.loader.loadFailed(name, FailedSource)
			if sl.plugin != nil && !samePluginConfig(sl.loadedPC, pc) {
				// It would otherwise keep settings the operator changed.
				swaps = append(swaps, swap{name: name, change: "removed", file: sl.file, oldSHA: sl.sha256, old: sl.plugin, started: now,
					reason: "it does not load with its new settings"})
				sl.plugin, sl.file, sl.sha256, sl.loadedFiles = nil, "", "", nil
			}
			sl.pc = pc // fetched again when its settings change
			if sl.plugin == nil {
				r.status.set(name, failedOrDisabled([]error{err}))
			}
			continue
		case err != nil:
			log.Warn("plugin file not read; trying again later", "plugin", name, "err", err)
			retry = minPositive(retry, r.Settle)
			continue
		case wait > 0:
			log.Debug("plugin file still changing; waiting for it to settle", "plugin", name, "wait", wait)
			retry = minPositive(retry, wait)
			continue
		}
		if sl != nil && samePluginConfig(sl.pc, pc) && sameVersions(sl.files, versions) {
			sl.files = versions // touched, not changed
			continue
		}
		if sl == nil {
			sl = &slot{}
			r.slots[name] = sl
		}
		if sl.plugin != nil && samePluginConfig(sl.loadedPC, pc) && sameVersions(sl.loadedFiles, versions) {
			// Back to what is serving, e.g. after a broken replacement.
			sl.files, sl.pc = versions, pc
			log.Info("plugin files are those of the running version again", "plugin", name, "file", sl.file, "sha256", sl.sha256)
			continue
		}
		configChanged := sl.plugin != nil && !samePluginConfig(sl.loadedPC, pc)
		sl.files, sl.pc = versions, pc
		started := time.Now()
		p, d, errs := r.load(ctx, name, r.cfg, versions, data, nil)
		if p != nil {
			r.adopt(name, p, d)
		}
		for _, err := range errs {
			if p != nil { // another file of the same name, e.g. x.wasm beside x.js
				log.Warn("plugin file not used", "plugin", name, "err", err)
				continue
			}
			r.loader.loadFailed(name, failureReason(err))
			if sl.plugin != nil && !configChanged {
				log.Error("plugin not reloaded; the running version keeps serving", "plugin", name, "file", versions[0].name,
					"sha256", versions[0].sha256, "serving_sha256", sl.sha256, "err", err)
			} else {
				log.Error("plugin not loaded", "plugin", name, "file", versions[0].name, "sha256", versions[0].sha256, "err", err)
			}
		}
		s := swap{name: name, file: versions[0].name, oldSHA: sl.sha256, newSHA: versions[0].sha256, old: sl.plugin, started: started}
		switch {
		case p != nil:
			s.change = "replaced"
			switch {
			case sl.plugin == nil:
				s.change = "added"
			case s.oldSHA == s.newSHA:
				s.change = "reconfigured"
			}
			sl.plugin, sl.file, sl.sha256, sl.loadedFiles, sl.loadedPC = p, s.file, s.newSHA, versions, pc
			r.status.set(name, StateReady)
		case sl.plugin == nil:
			r.status.set(name, failedOrDisabled(errs))
			continue // nothing served, nothing loaded
		case !configChanged && len(errs) > 0:
			continue // the running version keeps serving
		default: // disabled, or refused with its new settings
			s.change, s.file, s.newSHA = "removed", sl.file, ""
			if len(errs) > 0 {
				s.reason = "it does not load with its new settings"
			} else {
				s.reason = "disabled by config"
			}
			sl.plugin, sl.file, sl.sha256, sl.loadedFiles = nil, "", "", nil
			r.status.set(name, failedOrDisabled(errs))
		}
		swaps = append(swaps, s)
	}
	if len(swaps) == 0 {
		return retry
	}
	changes := r.publish(ctx)
	for _, s := range swaps {
		attrs := []any{"plugin", s.name, "change", s.change, "file", s.file, "old_sha256", s.oldSHA, "new_sha256", s.newSHA,
			"took", time.Since(s.started).Round(time.Microsecond)}
		if s.reason != "" {
			attrs = append(attrs, "reason", s.reason)
		}
		log.Info("plugin swapped", attrs...)
		r.loader.changed(s.name, s.change)
		if s.old != nil {
			r.retire(s.old)
		}
	}
	log.Debug("catalog swapped", "plugins", len(r.srv.Catalog().Plugins()), "tools", changes.Tools, "prompts", changes.Prompts, "resources", changes.Resources)
	return retry
}

func minPositive(a, b time.Duration) time.Duration {
	if a <= 0 || b < a {
		return b
	}
	return a
}

// list returns the plugin files of the folder by plugin name, each name's
// files in order of name: the .wasm and .js files that are not dotfiles,
// as LoadDir takes them. Editors' backup and swap files (name~, .name.swp,
// name.tmp) have other extensions or are dotfiles.
func (r *Reloader) list() (map[string][]string, error) {
	entries, err := os.ReadDir(r.dir)
	if err != nil {
		return nil, err
	}
	groups := map[string][]string{}
	for _, e := range entries {
		if e.IsDir() || !IsPluginFile(e.Name()) {
			continue
		}
		name := strings.TrimSuffix(e.Name(), filepath.Ext(e.Name()))
		groups[name] = append(groups[name], e.Name())
	}
	for name, pc := range r.cfg.Plugins {
		if pc.Source != "" && !pc.Disabled {
			groups[name] = []string{name + ".wasm"} // fetched: a file of the name in the folder is ignored
		}
	}
	for _, files := range groups {
		slices.Sort(files)
	}
	for f := range r.seen {
		if !slices.Contains(groups[strings.TrimSuffix(f, filepath.Ext(f))], f) {
			delete(r.seen, f)
		}
	}
	return groups, nil
}

// IsPluginFile reports whether a file name (without folder) is one a
// plugins folder loads: a .wasm or .js file that is not a dotfile.
func IsPluginFile(name string) bool {
	ext := filepath.Ext(name)
	return (ext == ".wasm" || ext == js.Ext) && !strings.HasPrefix(name, ".")
}

// unchanged reports whether files are the files of versions with the size
// and mtime they had when read, so that reading them again can be skipped.
func (r *Reloader) unchanged(versions []fileVersion, files []string) bool {
	if len(versions) != len(files) {
		return false
	}
	for i, v := range versions {
		if v.name != files[i] {
			return false
		}
		fi, err := os.Stat(filepath.Join(r.dir, v.name))
		if err != nil || fi.Size() != v.size || !fi.ModTime().Equal(v.mtime) {
			return false
		}
	}
	return true
}

func sameVersions(a, b []fileVersion) bool {
	return slices.EqualFunc(a, b, func(x, y fileVersion) bool { return x.name == y.name && x.sha256 == y.sha256 })
}

// read reads and hashes files, each up to one byte beyond maxBytes (the
// loader refuses a longer one by its length). Unless now is zero, a file is read only once
// it settled: modified at least Settle ago, or seen with the same size and
// mtime for Settle; and it must not change while read. Otherwise read
// returns how long to wait. With now zero (the first load, which reads
// each plugin's files on a goroutine of its own), read follows no file in
// r.seen, and touches none of the Reloader's state.
func (r *Reloader) read(files []string, maxBytes int64, now time.Time) ([]fileVersion, map[string][]byte, time.Duration, error) {
	var wait time.Duration
	versions := make([]fileVersion, 0, len(files))
	data := map[string][]byte{}
	for _, f := range files {
		path := filepath.Join(r.dir, f)
		before, err := os.Stat(path)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("%s: %w", f, err)
		}
		if !now.IsZero() {
			if w := r.settling(f, before, now); w > 0 {
				wait = max(wait, w)
				continue
			}
		}
		// Beyond maxBytes, the loader refuses the file by its length.
		b, err := readAtMost(path, maxBytes+1)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("%s: %w", f, err)
		}
		after, err := os.Stat(path)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("%s: %w", f, err)
		}
		if after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) || int64(len(b)) != min(after.Size(), maxBytes+1) {
			if !now.IsZero() {
				r.seen[f] = seenStat{size: after.Size(), mtime: after.ModTime(), at: time.Now()}
			}
			wait = max(wait, r.Settle)
			continue
		}
		if !now.IsZero() {
			delete(r.seen, f)
		}
		sum := sha256.Sum256(b)
		versions = append(versions, fileVersion{name: f, size: after.Size(), mtime: after.ModTime(), sha256: hex.EncodeToString(sum[:])})
		data[f] = b
	}
	if wait > 0 {
		return nil, nil, wait, nil
	}
	return versions, data, 0, nil
}

// settling returns how long a file with stat fi has yet to stay unchanged
// before it counts as complete, 0 when it does now.
func (r *Reloader) settling(f string, fi os.FileInfo, now time.Time) time.Duration {
	age := now.Sub(fi.ModTime())
	if age >= r.Settle {
		delete(r.seen, f)
		return 0
	}
	s, ok := r.seen[f]
	if !ok || s.size != fi.Size() || !s.mtime.Equal(fi.ModTime()) {
		s = seenStat{size: fi.Size(), mtime: fi.ModTime(), at: now}
		r.seen[f] = s
	}
	// A modification time in the future (another clock, a copy that kept
	// it) never ages; a file seen unchanged for Settle is complete too.
	stable := now.Sub(s.at)
	if stable >= r.Settle {
		delete(r.seen, f)
		return 0
	}
	if age < 0 {
		return r.Settle - stable
	}
	return r.Settle - max(age, stable)
}

// load loads the plugin name from its files, read already (versions, in
// order of name, and data), as LoadDir loads a folder of them: the first is
// the plugin, each other one's name is taken. The settings are cfg's, and
// compiled (unless nil) is called once the plugin's code is compiled. It
// returns the plugin and its drain, nil when none loaded (refused, or
// disabled by the config when there are no errors), and the load errors,
// which name the file. It touches none of the Reloader's state: loads may
// run concurrently (adopt records one).
func (r *Reloader) load(ctx context.Context, name string, cfg *config.Config, versions []fileVersion, data map[string][]byte, compiled func()) (*host.Plugin, *drain, []error) {
	if len(versions) == 0 {
		return nil, nil, nil
	}
	var errs []error
	first := versions[0]
	held := &heldFile{data: data[first.name]}
	if _, err := hex.Decode(held.sha256[:], []byte(first.sha256)); err != nil { // not expected: read wrote it
		return nil, nil, []error{fmt.Errorf("%s: sha256 %q: %w", first.name, first.sha256, err)}
	}
	p, d, err := r.loader.load(ctx, filepath.Join(r.dir, first.name), held, cfg, compiled)
	if err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", first.name, err))
	}
	for _, v := range versions[1:] {
		errs = append(errs, nameTaken(v.name, name, first.name))
	}
	return p, d, errs
}

// adopt records the drain d of p, a version of the plugin name that load
// returned; the caller holds r.mu.
func (r *Reloader) adopt(name string, p *host.Plugin, d *drain) {
	r.drains[p] = d
	r.serving.LoadOrStore(name, d) // the first version of the name
}

// retire closes a replaced or removed plugin once DrainGrace passed and
// the calls running on it ended.
func (r *Reloader) retire(p *host.Plugin) {
	d := r.drains[p]
	delete(r.drains, p)
	if d == nil { // not expected: the Reloader loaded every plugin it retires
		_ = p.Close(context.Background())
		return
	}
	log := r.srv.Logger()
	retired := time.Now()
	successor := func() *drain {
		next, _ := r.serving.Load(d.name)
		s, _ := next.(*drain)
		return s
	}
	time.AfterFunc(r.DrainGrace, func() {
		d.retire(successor, func() {
			log.Debug("old plugin version closed", "plugin", d.name, "after", time.Since(retired).Round(time.Millisecond))
		})
	})
}

// samePluginConfig reports whether two plugin settings are equal in every
// exported field, the ones config.Config.Plugin gives.
func samePluginConfig(a, b config.PluginConfig) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	t := va.Type()
	for i := range t.NumField() {
		if !t.Field(i).IsExported() {
			continue
		}
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			return false
		}
	}
	return true
}
