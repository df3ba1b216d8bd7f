// Command mcphost serves the Model Context Protocol from sandboxed
// WebAssembly plugins.
package main

import (
	"fmt"
	"os"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "mcphost:", err)
		os.Exit(1)
	}
}
