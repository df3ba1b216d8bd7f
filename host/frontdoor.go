package host

import (
	"log/slog"
	"sync"
	"time"
)

// The HTTP front door: what clients can make the server hold before a
// request reaches a session is bounded, server-wide and per client
// address. See RATIONALE.md, "How the HTTP front door bounds what clients
// can hold".

// refusalLogEvery is how often a kind of refusal is logged as a warning;
// the refusals in between are logged at debug level and counted in the
// next warning.
const refusalLogEvery = 10 * time.Second

// refusalLog logs a kind of refusal as a warning at most once per
// refusalLogEvery, so that a flood cannot flood the log too. The zero value
// is ready to use.
type refusalLog struct {
	mu     sync.Mutex
	last   time.Time
	missed int // refusals since the last warning
}

// log logs one refusal.
func (l *refusalLog) log(log *slog.Logger, msg string, args ...any) {
	l.mu.Lock()
	now := time.Now()
	if now.Sub(l.last) < refusalLogEvery {
		l.missed++
		l.mu.Unlock()
		log.Debug(msg, args...)
		return
	}
	missed := l.missed
	l.last, l.missed = now, 0
	l.mu.Unlock()
	if missed > 0 {
		args = append(args, "alsoRefusedSinceLastWarning", missed)
	}
	log.Warn(msg, args...)
}

// bodyBudget accounts the request body bytes being received, server-wide
// and by client address. A body is reserved whole before it is read: by its
// Content-Length, or by MaxBodyBytes when the length is not known.
type bodyBudget struct {
	total, perClient int64

	mu       sync.Mutex
	held     int64
	byClient map[string]int64
}

func newBodyBudget(total, perClient int64) *bodyBudget {
	return &bodyBudget{total: total, perClient: perClient, byClient: map[string]int64{}}
}

// reserve takes n bytes for a body from client, or returns the error that
// refuses it, naming the setting it would exceed.
func (b *bodyBudget) reserve(client string, n int64) *RPCError {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.byClient[client]+n > b.perClient:
		return rpcErrorf(CodeInternalError, "server busy: the request bodies being received from this client would exceed [http] max_body_bytes_in_flight_per_client (%d bytes); retry later", b.perClient)
	case b.held+n > b.total:
		return rpcErrorf(CodeInternalError, "server busy: the request bodies being received would exceed [http] max_body_bytes_in_flight (%d bytes); retry later", b.total)
	}
	b.held += n
	b.byClient[client] += n
	return nil
}

// release gives back what reserve took.
func (b *bodyBudget) release(client string, n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held -= n
	if b.byClient[client] -= n; b.byClient[client] <= 0 {
		delete(b.byClient, client)
	}
}
