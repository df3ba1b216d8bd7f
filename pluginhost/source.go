package pluginhost

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"

	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/internal/pluginsource"
)

// fetchSource fetches the plugin of pc from its source and returns it as
// the one file NAME.wasm, read already, which the loader then checks like
// any file of the folder (pin, manifest, grants).
func fetchSource(ctx context.Context, cfg *config.Config, pc config.PluginConfig, log *slog.Logger) ([]fileVersion, map[string][]byte, error) {
	pulled, err := pluginsource.FetchLogged(ctx, cfg, pc, log)
	if err != nil {
		return nil, nil, err
	}
	sum := sha256.Sum256(pulled.Wasm)
	file := pc.Name + ".wasm"
	return []fileVersion{{name: file, size: int64(len(pulled.Wasm)), sha256: hex.EncodeToString(sum[:])}},
		map[string][]byte{file: pulled.Wasm}, nil
}
