package sandbox

import (
	"context"
	"sync/atomic"
	"time"
)

// Giving back idle plugins. A plugin that can read its module again
// (Options.Reread, with a compilation cache folder) and has had no call for
// EngineOptions.UnloadIdleAfter closes its instances and its compiled code,
// so that the memory of a plugin used once an hour is not held in between;
// its next call builds it again, from the compilation cache, as a deferred
// plugin's first call does. A timer looks at the plugin once per period;
// calls only count themselves in and out (enter, leave) and note when they
// ended. The memory budget unloads such a plugin too, whatever the period,
// when it needs room and the plugin has no call under way (budget.go).
//
// An unload never runs beside a call: it first marks the plugin unbuilt,
// then looks at the count of its users. A call counts itself in before it
// looks at whether the plugin is built, so either the unload sees the call
// and keeps the plugin, or the call sees the plugin unbuilt and builds it
// under buildMu, after the unload.

// epoch is what idleUnload's times count from: a monotonic clock reading.
var epoch = time.Now()

// idleUnload is what a plugin knows of its idleness.
type idleUnload struct {
	// unloadable reports whether the plugin can read its module again and
	// load its code from the compilation cache folder: else it is never
	// unloaded.
	unloadable bool
	// after is EngineOptions.UnloadIdleAfter for an unloadable plugin,
	// else 0: the timer never unloads it.
	after time.Duration
	// users counts the calls (and Starts) under way, from before their
	// build to their end.
	users atomic.Int64
	// lastEnd is when the last call ended, or the plugin was last built
	// if later, since epoch.
	lastEnd atomic.Int64
	// timer runs the unload check; nil until the plugin is first built.
	// Guarded by the plugin's buildMu.
	timer *time.Timer
}

// enter counts a call in, before it builds the plugin.
func (p *Plugin) enter() {
	if p.idle.unloadable {
		p.idle.users.Add(1)
	}
}

// leave counts a call out, and notes when it ended.
func (p *Plugin) leave() {
	if p.idle.unloadable {
		p.idle.lastEnd.Store(int64(time.Since(epoch)))
		if p.idle.users.Add(-1) == 0 {
			p.engine.budget.unused()
		}
	}
}

// arm starts the idle check of a plugin just built, one period from now.
// The plugin's buildMu must be held.
func (u *idleUnload) arm(check func()) {
	switch {
	case u.after <= 0:
	case u.timer == nil:
		u.timer = time.AfterFunc(u.after, check)
	default:
		u.timer.Reset(u.after)
	}
}

// stop stops the idle check of a plugin being closed. The plugin's buildMu
// must be held.
func (u *idleUnload) stop() {
	if u.timer != nil {
		u.timer.Stop()
	}
}

// unloadIfIdle closes the plugin's instances and compiled code if no call
// is under way and none ended within the idle period; otherwise it looks
// again when the period since the last call ends.
func (p *Plugin) unloadIfIdle() {
	p.buildMu.Lock()
	defer p.buildMu.Unlock()
	if p.idle.after <= 0 || p.compiled == nil || p.pool.isClosed() {
		return
	}
	p.built.Store(false) // before users is read: see the comment at the top
	if p.idle.users.Load() != 0 {
		p.built.Store(true)
		p.idle.timer.Reset(p.idle.after)
		return
	}
	// leave notes the end before counting out: with no user left, this
	// is the end of the last call.
	idle := time.Since(epoch) - time.Duration(p.idle.lastEnd.Load())
	if idle < p.idle.after {
		p.built.Store(true)
		p.idle.timer.Reset(p.idle.after - idle)
		return
	}
	p.giveBack(EventUnloadedIdle, "plugin idle: its compiled code and instances are given back until its next call",
		"idle", idle.Round(time.Second))
}

// unloadForRoom closes the plugin's instances and compiled code, for the
// memory budget, unless a call is under way or its build is busy (a build
// may be what asks for room).
func (p *Plugin) unloadForRoom() {
	if !p.buildMu.TryLock() {
		return
	}
	defer p.buildMu.Unlock()
	if p.compiled == nil || p.pool.isClosed() {
		return
	}
	p.built.Store(false) // before users is read: see the comment at the top
	if p.idle.users.Load() != 0 {
		p.built.Store(true)
		return
	}
	idle := time.Since(epoch) - time.Duration(p.idle.lastEnd.Load())
	p.giveBack(EventUnloadedForRoom, "plugin unloaded to make room in memory_budget_mib: its compiled code and instances are given back until its next call",
		"idle", idle.Round(time.Millisecond))
}

// giveBack closes the instances and the compiled code of a plugin marked
// unbuilt, with no user, logs msg and tells the Observer of event. The
// plugin's buildMu must be held.
func (p *Plugin) giveBack(event, msg string, attrs ...any) {
	closed := p.pool.closeIdle()
	_ = p.closeCompiled(context.Background()) // closing compiled code only frees memory
	p.logger.Info(msg, append(attrs, "instances", closed)...)
	p.happened(event)
	reclaimMemory()
}
