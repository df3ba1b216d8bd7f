package pluginhost

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/mcphost/mcphost/host"
)

// RateShares divides each plugin's calls_per_second between the replicas
// of one service that share a state backend ([state] backend = "redis";
// Loader.RateShares): each replica says how many calls a second its
// clients asked of a limit, and learns what all of them asked.
type RateShares interface {
	// Share records that this replica was asked demand calls a second of
	// the limit named key, which counts for demandTTL, and that it holds
	// the limit, for presenceTTL. It returns the demands that count, this
	// one's included, summed, and how many replicas hold the limit.
	Share(ctx context.Context, key string, demand float64, demandTTL, presenceTTL time.Duration) (total float64, replicas int, err error)
}

// How a replica's share of a limit follows the others' (RateShares): it
// records its demand as the limit loads, and then at most once each
// shareEvery while its clients make calls; a demand counts for
// demandTTL, and a replica holds the limit for presenceTTL after it last
// recorded one. shareTimeout bounds the exchange, which runs beside the
// calls, never in their way. Every replica holding the limit has
// shareFloor of its weight whatever its demand, so that one whose calls
// just began is not refused them all, and replicas without demand split
// the limit evenly.
const (
	shareEvery   = 250 * time.Millisecond
	demandTTL    = 4 * shareEvery
	presenceTTL  = time.Minute
	shareTimeout = time.Second
	shareFloor   = 0.01
)

// rateLimiter is a calls-per-second limit: a token bucket refilled at the
// replica's share of the limit, holding up to a second of it (at least one
// call); each call takes a token. Without RateShares the share is the
// whole limit. With them, the share is the limit split in proportion to
// the demand each replica recorded, so that the replicas together admit
// the limit; while the backend does not answer, a replica keeps its last
// share: a backend outage never refuses every call.
type rateLimiter struct {
	plugin string
	limit  float64
	shares RateShares // nil: the whole limit is this replica's
	logger *slog.Logger
	now    func() time.Time

	mu     sync.Mutex
	share  float64 // calls a second this replica admits
	tokens float64
	last   time.Time // when tokens was last refilled
	asked  int       // calls asked since the demand period began
	since  time.Time // when the demand period began
	// sharing: an exchange with RateShares runs; failing: the last one
	// failed (logged once until one succeeds).
	sharing, failing bool
}

func newRateLimiter(plugin string, limit float64, shares RateShares, logger *slog.Logger, now func() time.Time) *rateLimiter {
	t := now()
	r := &rateLimiter{plugin: plugin, limit: limit, shares: shares, logger: logger, now: now,
		share: limit, tokens: burstOf(limit), last: t, since: t}
	if shares != nil { // the others learn that this replica holds the limit
		r.sharing = true
		go r.reshare(0)
	}
	return r
}

// burstOf is the most tokens a bucket refilled at share holds.
func burstOf(share float64) float64 { return math.Max(1, share) }

// take takes a token if there is one, and starts an exchange of demands
// when one is due.
func (r *rateLimiter) take() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	r.tokens = math.Min(burstOf(r.share), r.tokens+now.Sub(r.last).Seconds()*r.share)
	r.last = now
	if r.shares != nil {
		r.asked++
		if period := now.Sub(r.since); !r.sharing && period >= shareEvery {
			r.sharing = true
			demand := float64(r.asked) / period.Seconds()
			r.asked, r.since = 0, now
			go r.reshare(demand)
		}
	}
	if r.tokens < 1 {
		return false
	}
	r.tokens--
	return true
}

// reshare records this replica's demand and sets its share from what
// every replica asked.
func (r *rateLimiter) reshare(demand float64) {
	ctx, cancel := context.WithTimeout(context.Background(), shareTimeout)
	defer cancel()
	total, replicas, err := r.shares.Share(ctx, r.plugin, demand, demandTTL, presenceTTL)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sharing = false
	if err != nil {
		if !r.failing {
			r.logger.Warn("calls_per_second: keeping this replica's last share of the limit while the shared state backend does not answer",
				"share", r.share, "limit", r.limit, "err", err)
		}
		r.failing = true
		return
	}
	if r.failing {
		r.logger.Info("calls_per_second: the shared state backend answers again; the limit is shared anew")
		r.failing = false
	}
	replicas = max(replicas, 1) // this one recorded its demand
	floor := shareFloor * r.limit
	r.share = math.Min(r.limit, r.limit*(demand+floor)/(math.Max(total, demand)+float64(replicas)*floor))
	r.tokens = math.Min(r.tokens, burstOf(r.share))
}

// rateLimit refuses, at once, the client-initiated calls beyond the
// plugin's calls-per-second limit.
func rateLimit(plugin string, limiter *rateLimiter) Middleware {
	return func(next host.Runtime) host.Runtime {
		return runtimeFunc{next, func(ctx context.Context, export string, input []byte) ([]byte, error) {
			if !hostInitiated(export) && !limiter.take() {
				return nil, &host.CallError{Reason: reasonRateLimited, Message: fmt.Sprintf(
					"more than %g calls per second (calls_per_second of [plugins.%s]); try again shortly", limiter.limit, plugin),
					Outcome: "rate_limited"}
			}
			return next.Call(ctx, export, input)
		}}
	}
}
