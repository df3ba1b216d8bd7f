// Package status serves mcphost's status page: /status, an HTML page
// mcphost renders itself (a little script refreshes it; it works
// without), and /status.json, what `mcphost status` reads. Per plugin:
// where it came from, its digest, ABI, language, grants and isolation,
// its instances, queue, breaker and share of the memory budget, and its
// calls of the last five minutes (count, errors, p50 and p99 latency, a
// sparkline, the last error); then sessions by era and transport, tasks
// by status, and the latest denials. It shows every grant and other
// users' denials: it is for the operator only (Handler's allow).
package status

import (
	"slices"
	"sync"
	"time"

	"github.com/mcphost/mcphost/host"
)

// Window is how far back the page looks at calls.
const Window = 5 * time.Minute

// Buckets is how many bars the sparkline of a plugin's calls has, each
// Window/Buckets long.
const Buckets = 10

// maxSamples bounds the calls a plugin's window keeps; past it, each call
// takes the oldest one's place.
const maxSamples = 100_000

// maxDenials is how many denials the page keeps, the latest.
const maxDenials = 50

// Recorder keeps what the page shows of the recent past: each plugin's
// calls of the last Window and the latest denials. It is a host.Observer;
// it is safe for concurrent use.
type Recorder struct {
	now func() time.Time

	mu      sync.Mutex
	epoch   time.Time // the first call's time: samples' times are since it
	plugins map[string]*calls
	denials []host.Denial // oldest first
}

// calls is one plugin's calls of the window, and its last failure. The
// samples are a ring: samples[head:] then samples[:head] oldest first
// once it is full, so that a call costs no copy of the others.
type calls struct {
	samples   []sample
	head      int // where the oldest is, once the ring is full
	lastError string
	lastAt    time.Time
}

// add records s, overwriting the oldest when the ring is full.
func (c *calls) add(s sample) {
	if len(c.samples) < maxSamples {
		c.samples = append(c.samples, s)
		return
	}
	c.samples[c.head] = s
	c.head = (c.head + 1) % maxSamples
}

// each calls f with each sample of the window that ends at now.
func (c *calls) each(now time.Duration, f func(sample)) {
	for i := range c.samples {
		s := c.samples[(c.head+i)%len(c.samples)]
		if now-s.at <= Window {
			f(s)
		}
	}
}

// sample is a call. It holds no pointer (at is not a time.Time), so that
// the garbage collector need not scan a plugin's ring of them: scanning
// 100,000 time.Times at each collection cost a busy server 2-4% of its
// CPU.
type sample struct {
	at     time.Duration // since the Recorder's epoch
	took   time.Duration
	failed bool
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{now: time.Now, plugins: map[string]*calls{}}
}

// failed reports whether a call of outcome failed: anything but an answer
// (a tool error is the tool's own answer).
func failed(outcome string) bool {
	return outcome != host.OutcomeOK && outcome != host.OutcomeToolError
}

// PluginCalled records a plugin call (host.Observer), at the time it
// ended (its Ended, or now when it has none).
func (r *Recorder) PluginCalled(c host.PluginCall) {
	now := c.Ended
	if now.IsZero() {
		now = r.now()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.plugins[c.Plugin]
	if p == nil {
		p = &calls{}
		r.plugins[c.Plugin] = p
	}
	if r.epoch.IsZero() {
		r.epoch = now
	}
	s := sample{at: now.Sub(r.epoch), took: c.Duration, failed: failed(c.Outcome)}
	p.add(s)
	if s.failed {
		p.lastError, p.lastAt = c.Outcome+": "+c.Error, now
	}
}

// Denied records a denial, keeping the latest (host.Observer).
func (r *Recorder) Denied(d host.Denial) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.denials) >= maxDenials {
		r.denials = slices.Delete(r.denials, 0, 1)
	}
	r.denials = append(r.denials, d)
}

// Served is not recorded (host.Observer).
func (r *Recorder) Served(host.Operation) {}

// SessionEnded is not recorded (host.Observer).
func (r *Recorder) SessionEnded(host.EndedSession) {}

// recent returns what r holds of plugin's calls: the count and failures
// of the window, p50 and p99 latency, calls per bucket (oldest first),
// and the last failure.
func (r *Recorder) recent(plugin string) (n, failures int, p50, p99 time.Duration, spark []int, lastError string, lastAt time.Time) {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	spark = make([]int, Buckets)
	p := r.plugins[plugin]
	if p == nil {
		return 0, 0, 0, 0, spark, "", time.Time{}
	}
	took := make([]time.Duration, 0, len(p.samples))
	width := Window / Buckets
	since := now.Sub(r.epoch)
	p.each(since, func(s sample) {
		took = append(took, s.took)
		if s.failed {
			failures++
		}
		b := Buckets - 1 - int((since-s.at)/width)
		spark[max(b, 0)]++
	})
	slices.Sort(took)
	return len(took), failures, quantile(took, 0.50), quantile(took, 0.99), spark, p.lastError, p.lastAt
}

// quantile returns the q quantile of sorted (nearest rank), 0 for none.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted)) + 0.999999) // the ceiling of the rank
	return sorted[min(max(i, 1), len(sorted))-1]
}

// latestDenials returns the denials kept, latest first.
func (r *Recorder) latestDenials() []host.Denial {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.denials)
	slices.Reverse(out)
	return out
}
