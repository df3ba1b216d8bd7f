package sandbox

// Stats is what a plugin holds at a moment (Plugin.Stats).
type Stats struct {
	// Busy is how many instances run a call, Idle how many wait for one.
	Busy, Idle int
	// Waiting is how many calls wait in the queue for an instance.
	Waiting int
	// MemoryHeld is how many bytes of the Engine's memory budget the
	// plugin's name holds: its instances' and its compiled code's.
	MemoryHeld uint64
}

// Stats returns what the plugin holds now.
func (p *Plugin) Stats() Stats {
	s := p.pool.stats()
	s.MemoryHeld = p.engine.budget.heldBy(p.name)
	return s
}

// MemoryBudget returns the Engine's memory budget and how much of it is
// held, in bytes.
func (e *Engine) MemoryBudget() (limit, held uint64) {
	e.budget.mu.Lock()
	defer e.budget.mu.Unlock()
	return e.budget.limit, e.budget.used
}

// stats returns the pool's instances busy and idle and its calls waiting.
func (p *pool) stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Stats{Busy: p.inUse, Idle: len(p.idle), Waiting: int(p.waiting.Load())}
}

// heldBy returns the bytes plugin holds.
func (b *memoryBudget) heldBy(plugin string) uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if h := b.held[plugin]; h != nil {
		return h.bytes
	}
	return 0
}
