package host

import (
	"context"

	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/sandbox"
)

// LoadFile loads one plugin file, a .wasm module or a .js source, exactly as
// LoadDir loads each file of a plugins folder: named after the file, checked
// against its [plugins.NAME] table in cfg (pin, manifest, ABI version,
// grants) before any of its code runs, and sandboxed with those grants and
// limits. It returns nil and no error when cfg disables the plugin. The
// developer commands of cmd/mcphost (call, get-prompt, read, complete) use
// it to run one plugin as serve would.
func (s *Server) LoadFile(ctx context.Context, engine *sandbox.Engine, path string, cfg *config.Config) (*Plugin, error) {
	return s.loadFile(ctx, engine, path, cfg)
}
