package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// seriesCache keeps the Observer of each tuple of label values that a
// histogram has seen, so that a sample costs a map lookup rather than
// the hashing of its label values and a slice of them on the heap. It
// holds as many entries as the histogram has series: the labels' bounds
// are its bounds.
type seriesCache[K comparable] struct {
	mu sync.RWMutex
	m  map[K]prometheus.Observer
}

// observer returns the Observer of key, made from vec with the label
// values labels gives of key the first time.
func (c *seriesCache[K]) observer(key K, vec prometheus.ObserverVec, labels func(K) []string) prometheus.Observer {
	c.mu.RLock()
	o, ok := c.m[key]
	c.mu.RUnlock()
	if ok {
		return o
	}
	return c.add(key, vec, labels)
}

// add makes and keeps the Observer of key. Apart from observer, so that
// key stays on observer's stack: what labels does with its copy does not
// reach it.
func (c *seriesCache[K]) add(key K, vec prometheus.ObserverVec, labels func(K) []string) prometheus.Observer {
	o := vec.WithLabelValues(labels(key)...)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[K]prometheus.Observer{}
	}
	c.m[key] = o
	return o
}

// operationSeriesLabels, callLabels and exportLabels are the label values
// of the keys of the operation, the plugin call and the run histograms.
func operationSeriesLabels(k [10]string) []string { return k[:] }
func callLabels(k [3]string) []string             { return k[:] }
func exportLabels(export string) []string         { return []string{export} }
