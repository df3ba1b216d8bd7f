//go:build wasip1

// Command a is variant a of the hot-swap test plugin (see package variant).
package main

import "github.com/mcphost/mcphost/internal/testrig/testplugins/swap/variant"

func main() {}

func init() { variant.Register("a") }
