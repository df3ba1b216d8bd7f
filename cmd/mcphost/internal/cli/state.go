package cli

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/certfile"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/redisstate"
)

// sharedState is the backend of the state replicas share ([state]); nil
// for the memory backend, where nothing is shared.
type sharedState struct {
	store  *redisstate.Store
	logger *slog.Logger
	// up is whether the backend answered its last ping (monitor), which
	// /readyz reports without waiting for the backend.
	up atomic.Bool

	mu sync.Mutex
	// replicas counts the live replicas, this one included, and differ
	// holds the plugins they serve otherwise than this one, as the last
	// announcement found them (comparePlugins); replicas is 0 before it.
	replicas int
	differ   []pluginDifference
}

// openState opens the backend [state] configures: nil for the memory
// backend. A Redis that does not answer at start-up is logged, not fatal:
// the requests that need it fail, naming it, until it does.
func openState(ctx context.Context, cfg *config.Config, transport string, logger *slog.Logger) (*sharedState, error) {
	sc := cfg.State
	if sc.Backend != config.StateRedis {
		return nil, nil
	}
	var password string
	if sc.Password != (config.Secret{}) {
		var err error
		if password, err = sc.Password.Value(); err != nil {
			return nil, fmt.Errorf("[state] password: %w", err)
		}
	}
	var roots *tls.Config
	if sc.CAFile != "" {
		pool, err := certfile.CAPool(sc.CAFile, nil)
		if err != nil {
			return nil, fmt.Errorf("[state] ca_file: %w", err)
		}
		roots = &tls.Config{RootCAs: pool}
	}
	store, err := redisstate.Open(redisstate.Options{URL: sc.URL, Password: password, Prefix: sc.Prefix, TLS: roots,
		MaxValueBytes: stateValueCap(cfg), Logger: logger})
	if err != nil {
		return nil, err
	}
	if transport != "http" {
		logger.Warn("[state] backend = \"redis\" shares HTTP sessions between replicas: a stdio session has no other replica")
	}
	s := &sharedState{store: store, logger: logger}
	s.up.Store(s.ping(ctx) == nil)
	if !s.up.Load() {
		logger.Warn("the shared state backend does not answer: requests that need it fail until it does")
	}
	go s.monitor(ctx)
	return s, nil
}

// stateValueCap is the most a value in the shared backend may hold: twice
// what a request (max_body_bytes) and a call's output (the largest
// max_output_bytes of the config at start) may, which a task's record
// holds, and room for the rest of a record. A value written beyond it is
// refused, and one found beyond it is not read.
func stateValueCap(cfg *config.Config) int64 {
	largest := cfg.Defaults.MaxOutputBytes
	for name := range cfg.Plugins {
		largest = max(largest, cfg.Plugin(name).Limits.MaxOutputBytes)
	}
	return 2*int64(largest+cfg.HTTP.MaxBodyBytes) + 64<<10
}

// sharedAs returns the backend as what a part of the host takes of it (a
// session store, the inboxes, …), or the nil T without one: a nil
// *redisstate.Store in an interface would not be nil.
func sharedAs[T any](s *sharedState) T {
	var none T
	if s == nil {
		return none
	}
	return any(s.store).(T)
}

// close withdraws this replica's announcement and closes the backend's
// connections.
func (s *sharedState) close() {
	if s == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
	defer cancel()
	_ = s.store.Withdraw(ctx)
	_ = s.store.Close()
}

// The backend is pinged every pingEvery, each ping bounded by
// pingTimeout.
const (
	pingEvery   = time.Second
	pingTimeout = time.Second
)

// ping pings the backend within pingTimeout.
func (s *sharedState) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	return s.store.Ping(ctx)
}

// monitor pings the backend every pingEvery until ctx ends, keeping
// whether it answers for /readyz and logging each change.
func (s *sharedState) monitor(ctx context.Context) {
	tick := time.NewTicker(pingEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		err := s.ping(ctx)
		if ctx.Err() != nil {
			return
		}
		switch was := s.up.Swap(err == nil); {
		case was && err != nil:
			s.logger.Warn("the shared state backend does not answer: requests that need it fail until it does", "err", err)
		case !was && err == nil:
			s.logger.Info("the shared state backend answers again")
		}
	}
}

// stateReport is what /readyz says of the shared state backend and of
// the replicas that share it.
type stateReport struct {
	Backend   string `json:"backend"`
	Reachable bool   `json:"reachable"`
	// Replicas counts the live replicas, this one included; 0 until this
	// one announced itself (its first load done).
	Replicas int `json:"replicas"`
	// PluginsDiffer are the plugins other replicas serve otherwise than
	// this one.
	PluginsDiffer []pluginDifference `json:"pluginsDiffer,omitempty"`
}

// report returns what /readyz says of the backend, as its last ping
// found it (a probe never waits for the backend); nil without one.
func (s *sharedState) report() *stateReport {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return &stateReport{Backend: config.StateRedis, Reachable: s.up.Load(), Replicas: s.replicas, PluginsDiffer: s.differ}
}
