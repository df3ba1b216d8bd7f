//go:build !linux

package sandbox

import "context"

// linearMemoryFactor is what a linear memory of n bytes may cost: wazero
// grows it on the Go heap by copying it (old and new), and the collector
// lets the heap grow to gcHeadroom times what is live.
const linearMemoryFactor = 2 * gcHeadroom

// context returns ctx: wazero allocates the memories.
func (a *memoryArena) context(ctx context.Context) context.Context { return ctx }
