package cli

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/redisstate"
)

// openState opens the backend of the state that replicas share ([state]):
// nil for the memory backend. A Redis that does not answer at start-up is
// logged, not fatal: the requests that need it fail, naming it, until it
// does.
func openState(ctx context.Context, cfg *config.Config, transport string, logger *slog.Logger) (host.SharedSessionStore, func(), error) {
	sc := cfg.State
	if sc.Backend != config.StateRedis {
		return nil, func() {}, nil
	}
	var password string
	if sc.Password != (config.Secret{}) {
		var err error
		if password, err = sc.Password.Value(); err != nil {
			return nil, nil, fmt.Errorf("[state] password: %w", err)
		}
	}
	store, err := redisstate.Open(redisstate.Options{URL: sc.URL, Password: password, Prefix: sc.Prefix, Logger: logger})
	if err != nil {
		return nil, nil, err
	}
	if transport != "http" {
		logger.Warn("[state] backend = \"redis\" shares HTTP sessions between replicas: a stdio session has no other replica")
	}
	ping, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := store.Ping(ping); err != nil {
		logger.Warn("the shared state backend does not answer: requests that need it fail until it does", "err", err)
	}
	return store, func() { _ = store.Close() }, nil
}
