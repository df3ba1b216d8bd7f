// Package sandbox runs WebAssembly plugins under the Extism Go SDK with
// deny-by-default grants and hard limits: a plugin sees no filesystem,
// network, environment or process output unless granted, every call has a
// timeout and a memory cap, and a plugin that traps or hangs only loses the
// instance that ran it.
package sandbox
