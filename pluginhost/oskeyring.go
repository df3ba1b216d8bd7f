package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcphost/mcphost/config"
	"github.com/zalando/go-keyring"
)

// keyringTimeout bounds the reading of one OS keyring entry: a Secret
// Service that does not answer fails the load instead of holding it.
const keyringTimeout = 10 * time.Second

// keyringID names a keyring entry as a plugin asks for it.
type keyringID struct{ Service, User string }

// keyringValues returns the value of each keyring entry pc grants: the
// plugin's secret it names, from secrets (the plugin's secret values, by
// key), or, without one, the OS keyring's entry of that service and user.
// The error names the first entry that cannot be read and why, never a
// value.
func keyringValues(ctx context.Context, pc config.PluginConfig, secrets map[string]string) (map[keyringID]string, error) {
	out := make(map[keyringID]string, len(pc.Keyring))
	for _, e := range pc.Keyring {
		id := keyringID{e.Service, e.User}
		if e.Secret != "" {
			out[id] = secrets[e.Secret]
			continue
		}
		v, err := osKeyringGet(ctx, e.Service, e.User)
		if err != nil {
			return nil, fmt.Errorf("plugins.%s.keyring: the entry service %q, user %q: %w", pc.Name, e.Service, e.User, err)
		}
		out[id] = v
	}
	return out, nil
}

// osKeyringGet reads the OS keyring's entry of service and user (the
// Secret Service's item with those service and username attributes in the
// login collection, macOS's Keychain, Windows' Credential Manager), within
// keyringTimeout.
func osKeyringGet(ctx context.Context, service, user string) (string, error) {
	type result struct {
		v   string
		err error
	}
	done := make(chan result, 1) // the read outlives a timeout: keyring.Get cannot be cancelled
	go func() {
		v, err := keyring.Get(service, user)
		done <- result{v, err}
	}()
	timer := time.NewTimer(keyringTimeout)
	defer timer.Stop()
	select {
	case r := <-done:
		switch {
		case errors.Is(r.err, keyring.ErrNotFound):
			return "", fmt.Errorf("not in the OS keyring (store it with: secret-tool store --label=%q service %q username %q)", service, service, user)
		case r.err != nil:
			return "", fmt.Errorf("the OS keyring cannot be read: %w", r.err)
		}
		return r.v, nil
	case <-timer.C:
		return "", fmt.Errorf("the OS keyring did not answer within %v", keyringTimeout)
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
}
