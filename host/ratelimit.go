package host

import (
	"sync"
	"time"
)

// Rate limit of notify_logging_message, per plugin: a token bucket of
// logBurst messages refilled at logRate a second. Messages beyond it are
// dropped without the plugin knowing; the host logs one warning per
// logWarnEvery per plugin with the number dropped.
const (
	logRate      = 50
	logBurst     = 100
	logWarnEvery = time.Second
)

// logLimits holds the log rate limit state of every plugin. The zero value
// is ready to use.
type logLimits struct {
	mu       sync.Mutex
	byPlugin map[string]*logBucket
	// Tests set these; zero means the defaults and time.Now.
	rate, burst float64
	warnEvery   time.Duration
	now         func() time.Time
}

type logBucket struct {
	tokens  float64
	last    time.Time // when tokens was last refilled
	dropped int       // dropped since the last warning
	warned  time.Time // when the last warning was logged
	armed   bool      // a warning is scheduled
}

// allowLog takes a token from the plugin's bucket. When there is none it
// counts the message as dropped, makes sure a warning will report it, and
// returns false.
func (s *Server) allowLog(plugin string) bool {
	l := &s.logLimits
	l.mu.Lock()
	defer l.mu.Unlock()
	rate, burst, every := l.rate, l.burst, l.warnEvery
	if rate <= 0 {
		rate = logRate
	}
	if burst <= 0 {
		burst = logBurst
	}
	if every <= 0 {
		every = logWarnEvery
	}
	now := time.Now()
	if l.now != nil {
		now = l.now()
	}
	if l.byPlugin == nil {
		l.byPlugin = map[string]*logBucket{}
	}
	b := l.byPlugin[plugin]
	if b == nil {
		b = &logBucket{tokens: burst, last: now}
		l.byPlugin[plugin] = b
	}
	if elapsed := now.Sub(b.last); elapsed > 0 {
		b.tokens = min(burst, b.tokens+elapsed.Seconds()*rate)
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return true
	}
	b.dropped++
	if b.armed {
		return false
	}
	b.armed = true
	// The first drop after a quiet second is reported at once; later ones
	// together, a second after the previous warning.
	after := max(0, every-time.Since(b.warned))
	if b.warned.IsZero() {
		after = 0
	}
	time.AfterFunc(after, func() { s.warnDropped(plugin, b) })
	return false
}

// warnDropped logs how many of a plugin's log messages were dropped since
// the last warning.
func (s *Server) warnDropped(plugin string, b *logBucket) {
	l := &s.logLimits
	l.mu.Lock()
	n := b.dropped
	b.dropped, b.armed, b.warned = 0, false, time.Now()
	l.mu.Unlock()
	if n > 0 {
		s.log().Warn("plugin log messages dropped: over the rate limit",
			"plugin", plugin, "dropped", n, "ratePerSecond", logRate, "burst", logBurst)
	}
}
