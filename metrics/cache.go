package metrics

import (
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// seriesCache keeps the Observer of each tuple of label values that a
// histogram has seen, so that a sample costs a map lookup rather than
// the hashing of its label values and a slice of them on the heap; and
// the last one used, so that a run of samples of one series (a client's
// calls of one tool) costs comparing the labels, without hashing them or
// touching the lock. It holds as many entries as the histogram has
// series: the labels' bounds are its bounds.
type seriesCache[K comparable] struct {
	last atomic.Pointer[seriesEntry[K]]
	mu   sync.RWMutex
	m    map[K]*seriesEntry[K]
}

// seriesEntry is a tuple of label values and its Observer.
type seriesEntry[K comparable] struct {
	key K
	obs prometheus.Observer
}

// observer returns the Observer of key, made from vec with the label
// values labels gives of key the first time.
func (c *seriesCache[K]) observer(key K, vec prometheus.ObserverVec, labels func(K) []string) prometheus.Observer {
	if s := c.last.Load(); s != nil && s.key == key {
		return s.obs
	}
	c.mu.RLock()
	s, ok := c.m[key]
	c.mu.RUnlock()
	if !ok {
		s = c.add(key, vec, labels)
	}
	c.last.Store(s)
	return s.obs
}

// add makes and keeps the series of key. Apart from observer, so that
// key stays on observer's stack: what labels does with its copy does not
// reach it.
func (c *seriesCache[K]) add(key K, vec prometheus.ObserverVec, labels func(K) []string) *seriesEntry[K] {
	s := &seriesEntry[K]{key: key, obs: vec.WithLabelValues(labels(key)...)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[K]*seriesEntry[K]{}
	}
	if kept, ok := c.m[key]; ok { // another goroutine added it first
		return kept
	}
	c.m[key] = s
	return s
}

// operationSeriesLabels, callLabels and exportLabels are the label values
// of the keys of the operation, the plugin call and the run histograms.
func operationSeriesLabels(k [10]string) []string { return k[:] }
func callLabels(k [3]string) []string             { return k[:] }
func exportLabels(export string) []string         { return []string{export} }
