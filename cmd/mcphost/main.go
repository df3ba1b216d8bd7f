// Command mcphost serves the Model Context Protocol from sandboxed
// WebAssembly plugins.
package main

import (
	"os"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/cli"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(cli.Main(version, os.Args[1:]))
}
