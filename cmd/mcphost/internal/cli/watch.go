package cli

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/pluginhost"
)

// Hot swap (serve --watch, on by default): the plugins folder and the
// config file are watched, and changes are applied by pluginhost.Reloader.
// A plugin file's event starts a Sync at once: the Reloader loads only
// files that settled (pluginhost.DefaultSettle) and says when to look again
// at one still being written, so waiting here would only delay a file that
// is complete, such as one renamed into the folder. A burst of changes to
// the config file, which has no settle time of its own, is applied once
// the file has been quiet for watchQuiet (at most watchMaxDelay after the
// first change). A plugin event that comes while a config change is
// pending is handled with it, so that a plugin deployed with its grants
// loads with them. SIGHUP reloads the config and rescans the folder, with
// or without --watch.
const (
	watchQuiet    = 200 * time.Millisecond
	watchMaxDelay = 2 * time.Second
)

// reloadLoop is what startReloading runs.
type reloadLoop struct {
	reloader   *pluginhost.Reloader
	logger     *slog.Logger
	pluginsDir string // cleaned absolute path
	configPath string // cleaned absolute path; "" when there is no config file
	watcher    *fsnotify.Watcher
	hup        chan os.Signal
	// configQuiet and configMaxDelay debounce the config file's changes
	// (watchQuiet and watchMaxDelay).
	configQuiet, configMaxDelay time.Duration
}

// startReloading starts applying changes of the plugins folder and of the
// config file at configPath ("" for none) through r: on SIGHUP, and on
// every change the folders show when watch is set. The returned function
// stops it and waits until no reload runs.
func startReloading(ctx context.Context, r *pluginhost.Reloader, configPath string, watch bool, logger *slog.Logger) func() {
	return newReloadLoop(r, configPath, logger).start(ctx, watch)
}

// newReloadLoop returns the loop of startReloading, not started.
func newReloadLoop(r *pluginhost.Reloader, configPath string, logger *slog.Logger) *reloadLoop {
	l := &reloadLoop{reloader: r, logger: logger, hup: make(chan os.Signal, 1), configQuiet: watchQuiet, configMaxDelay: watchMaxDelay}
	l.pluginsDir, _ = filepath.Abs(r.Dir())
	if configPath != "" {
		l.configPath, _ = filepath.Abs(configPath)
	}
	return l
}

// start runs the loop until ctx ends or the returned function is called,
// which waits until no reload runs.
func (l *reloadLoop) start(ctx context.Context, watch bool) func() {
	signal.Notify(l.hup, syscall.SIGHUP)
	if watch {
		l.watcher = l.watch()
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { l.run(ctx) })
	return func() {
		cancel()
		wg.Wait()
		signal.Stop(l.hup)
		if l.watcher != nil {
			_ = l.watcher.Close()
		}
	}
}

// watch watches the plugins folder and the config file's folder (a file
// replaced by rename is seen only through its folder).
func (l *reloadLoop) watch() *fsnotify.Watcher {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		l.logger.Error("not watching the plugins folder", "err", err)
		return nil
	}
	dirs := []string{l.pluginsDir}
	if l.configPath != "" && filepath.Dir(l.configPath) != l.pluginsDir {
		dirs = append(dirs, filepath.Dir(l.configPath))
	}
	for _, d := range dirs {
		if err := w.Add(d); err != nil {
			l.logger.Error("not watching a folder", "folder", d, "err", err)
		}
	}
	l.logger.Info("watching for plugin and config changes", "plugins", l.pluginsDir, "config", l.configPath)
	return w
}

// run handles events until ctx ends. Two timers schedule the work:
// syncing (the plugins folder: at once on a plugin event, later when a
// file is still settling) and applying (the config, debounced).
func (l *reloadLoop) run(ctx context.Context) {
	var events <-chan fsnotify.Event
	var errs <-chan error
	if l.watcher != nil {
		events, errs = l.watcher.Events, l.watcher.Errors
	}
	syncing, applying := time.NewTimer(time.Hour), time.NewTimer(time.Hour)
	defer syncing.Stop()
	defer applying.Stop()
	syncing.Stop()
	applying.Stop()
	if l.watcher != nil {
		syncing.Reset(0) // look once for changes made between the first load and the watch
	}
	var first time.Time // of the first config change not applied yet
	configChanged := func() {
		now := time.Now()
		if first.IsZero() {
			first = now
		}
		applying.Reset(max(0, min(l.configQuiet, l.configMaxDelay-now.Sub(first))))
	}
	// retry schedules the next Sync when a file is still being written.
	retry := func(after time.Duration) {
		if after > 0 {
			syncing.Reset(after)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			switch l.classify(ev) {
			case "plugin":
				if first.IsZero() { // else the config's pending apply syncs, with the settings that come with the file
					syncing.Reset(0)
				}
			case "config":
				configChanged()
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			l.logger.Warn("watching the plugins folder", "err", err)
			if errors.Is(err, fsnotify.ErrEventOverflow) { // events were lost: look at everything
				syncing.Reset(0)
				if l.configPath != "" {
					configChanged()
				}
			}
		case <-l.hup:
			l.logger.Info("SIGHUP: reloading the config and rescanning the plugins folder")
			first = time.Now()
			applying.Reset(0)
		case <-applying.C:
			first = time.Time{}
			if cfg := l.loadConfig(); cfg != nil {
				retry(l.reloader.SetConfig(ctx, cfg)) // which syncs the folder too
			} else { // no config file, or a rejected one: the folder is rescanned all the same
				retry(l.reloader.Sync(ctx))
			}
		case <-syncing.C:
			retry(l.reloader.Sync(ctx))
		}
	}
}

// classify tells whether an event concerns a plugin file, the config file,
// or neither ("").
func (l *reloadLoop) classify(ev fsnotify.Event) string {
	if ev.Op == fsnotify.Chmod { // attributes only; a content change writes
		return ""
	}
	path := filepath.Clean(ev.Name)
	switch {
	case l.configPath != "" && path == l.configPath:
		return "config"
	case filepath.Dir(path) == l.pluginsDir && pluginhost.IsPluginFile(filepath.Base(path)):
		return "plugin"
	}
	return ""
}

// loadConfig reads the config file again. An invalid one is rejected whole,
// with every problem logged as file:line; it returns nil then. Without a
// config file the running config stays.
func (l *reloadLoop) loadConfig() *config.Config {
	if l.configPath == "" {
		return nil
	}
	cfg, err := config.Load(l.configPath)
	if err != nil {
		var problems config.Errors
		if errors.As(err, &problems) {
			for _, p := range problems {
				l.logger.Error("config rejected; the running config stays", "problem", p.Error())
			}
		} else {
			l.logger.Error("config rejected; the running config stays", "err", err)
		}
		return nil
	}
	return cfg
}
