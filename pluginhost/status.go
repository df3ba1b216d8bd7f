package pluginhost

import (
	"maps"
	"sync"
)

// The states of a plugin name that Reloader.Status reports.
const (
	// StateLoading: the plugin is being loaded for the first time.
	StateLoading = "loading"
	// StateReady: a version of the plugin is serving.
	StateReady = "ready"
	// StateFailed: the plugin did not load, and no version of it serves.
	StateFailed = "failed"
	// StateDisabled: the config disables the plugin.
	StateDisabled = "disabled"
)

// loadStatus is the state of each plugin name of a Reloader's folder. It
// has its own lock: Status answers while a load holds the Reloader's.
type loadStatus struct {
	mu sync.Mutex
	m  map[string]string
}

// loading marks names as loading.
func (s *loadStatus) loading(names []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]string{}
	}
	for _, n := range names {
		s.m[n] = StateLoading
	}
}

// set records the state of name; "" forgets the name.
func (s *loadStatus) set(name, state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if state == "" {
		delete(s.m, name)
		return
	}
	if s.m == nil {
		s.m = map[string]string{}
	}
	s.m[name] = state
}

// failedOrDisabled is the state of a plugin name of which no version
// loaded, with the load's errors: without any, the config disabled it.
func failedOrDisabled(errs []error) string {
	if len(errs) == 0 {
		return StateDisabled
	}
	return StateFailed
}

// Status returns the state of each plugin name of the folder (StateLoading,
// StateReady, StateFailed or StateDisabled), and whether the first load is
// done: no plugin is still loading.
func (r *Reloader) Status() (done bool, plugins map[string]string) {
	r.status.mu.Lock()
	defer r.status.mu.Unlock()
	plugins = maps.Clone(r.status.m)
	if plugins == nil {
		plugins = map[string]string{}
	}
	for _, s := range plugins {
		if s == StateLoading {
			return false, plugins
		}
	}
	return true, plugins
}
