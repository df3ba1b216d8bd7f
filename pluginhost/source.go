package pluginhost

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"strings"

	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/internal/ociplugin"
)

// NewPuller returns the puller of the plugin sources of cfg for a plugin
// whose settings are pc: cfg's plugin cache, lock file and pull_timeout,
// and pc's max_module_mib.
func NewPuller(cfg *config.Config, pc config.PluginConfig, log *slog.Logger) (*ociplugin.Puller, error) {
	cache, err := cfg.PluginCacheDir()
	if err != nil {
		return nil, err
	}
	return &ociplugin.Puller{CacheDir: cache, Lock: ociplugin.OpenLock(cfg.LockPath()), MaxBytes: maxFileBytes(pc),
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

// fetchSource fetches the plugin of pc from its source and returns it as
// the one file NAME.wasm of a snapshot, which the loader then checks like
// any file of the folder (pin, manifest, grants).
func fetchSource(ctx context.Context, cfg *config.Config, pc config.PluginConfig, log *slog.Logger) ([]fileVersion, map[string][]byte, error) {
	log = log.With("plugin", pc.Name)
	pulled, err := Fetch(ctx, cfg, pc, log)
	if err != nil {
		return nil, nil, err
	}
	if pc.AllowUnsigned {
		log.Warn("plugin runs unsigned: allow_unsigned = true", "source", pc.Source, "digest", pulled.Digest)
	}
	log.Info("plugin fetched", "source", pc.Source, "digest", pulled.Digest, "layout", pulled.Layout, "signer", pulled.Signer, "bytes", len(pulled.Wasm))
	sum := sha256.Sum256(pulled.Wasm)
	file := pc.Name + ".wasm"
	return []fileVersion{{name: file, size: int64(len(pulled.Wasm)), sha256: hex.EncodeToString(sum[:])}},
		map[string][]byte{file: pulled.Wasm}, nil
}
