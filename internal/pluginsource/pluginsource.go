// Package pluginsource fetches a plugin from the source its config names
// (an OCI registry or an https URL), verified as the config says: what
// serve, check and the developer commands share.
package pluginsource

import (
	"cmp"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/internal/ociplugin"
	"github.com/mcphost/mcphost/sandbox"
)

// MaxFileBytes is the largest plugin file pc allows: its max_module_mib,
// or the sandbox's default.
func MaxFileBytes(pc config.PluginConfig) int64 {
	return int64(cmp.Or(pc.Limits.MaxModuleMiB, sandbox.DefaultMaxModuleMiB)) << 20
}

// NewPuller returns the puller of the plugin sources of cfg for a plugin
// whose settings are pc: cfg's plugin cache, lock file and pull_timeout,
// and pc's max_module_mib.
func NewPuller(cfg *config.Config, pc config.PluginConfig, log *slog.Logger) (*ociplugin.Puller, error) {
	cache, err := cfg.PluginCacheDir()
	if err != nil {
		return nil, err
	}
	return &ociplugin.Puller{CacheDir: cache, Lock: ociplugin.OpenLock(cfg.LockPath()), MaxBytes: MaxFileBytes(pc),
		Timeout: cfg.Server.PullTimeout, Logger: log}, nil
}

// PolicyOf is the signature policy of pc.
func PolicyOf(pc config.PluginConfig) ociplugin.Policy {
	v := pc.Verify
	return ociplugin.Policy{Key: v.Key, TrustedRoot: v.TrustedRoot, Identity: v.Identity, IdentityRegexp: v.IdentityRegexp,
		Issuer: v.Issuer, IssuerRegexp: v.IssuerRegexp, AllowUnsigned: pc.AllowUnsigned}
}

// Fetch fetches the plugin of pc from its source (pc.Source), verified
// as pc says.
func Fetch(ctx context.Context, cfg *config.Config, pc config.PluginConfig, log *slog.Logger) (*ociplugin.Pulled, error) {
	p, err := NewPuller(cfg, pc, log)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(pc.Source, config.SchemeOCI) {
		return p.Pull(ctx, pc.Source, PolicyOf(pc))
	}
	return p.FetchURL(ctx, pc.Source, pc.SHA256)
}

// FetchLogged is Fetch that logs what it fetched, and warns of a plugin
// that runs unsigned.
func FetchLogged(ctx context.Context, cfg *config.Config, pc config.PluginConfig, log *slog.Logger) (*ociplugin.Pulled, error) {
	log = log.With("plugin", pc.Name)
	pulled, err := Fetch(ctx, cfg, pc, log)
	if err != nil {
		return nil, err
	}
	if pc.AllowUnsigned {
		log.Warn("plugin runs unsigned: allow_unsigned = true", "source", pc.Source, "digest", pulled.Digest)
	}
	log.Info("plugin fetched", "source", pc.Source, "digest", pulled.Digest, "layout", pulled.Layout, "signer", pulled.Signer, "bytes", len(pulled.Wasm))
	return pulled, nil
}

// FetchToDir fetches the plugin of pc from its source as serve does
// (verified, its tag pinned, logged) and writes it to dir as NAME.wasm, so
// that the commands that read plugin files (check, the developer commands)
// check and load it as serve would. It returns the file's path and what
// was pulled.
func FetchToDir(ctx context.Context, cfg *config.Config, pc config.PluginConfig, dir string, log *slog.Logger) (string, *ociplugin.Pulled, error) {
	pulled, err := FetchLogged(ctx, cfg, pc, log)
	if err != nil {
		return "", nil, err
	}
	path := filepath.Join(dir, pc.Name+".wasm")
	if err := os.WriteFile(path, pulled.Wasm, 0o600); err != nil {
		return "", nil, err
	}
	return path, pulled, nil
}
