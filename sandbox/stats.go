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
	return Stats{}
}

// MemoryBudget returns the Engine's memory budget and how much of it is
// held, in bytes.
func (e *Engine) MemoryBudget() (limit, held uint64) {
	return 0, 0
}
