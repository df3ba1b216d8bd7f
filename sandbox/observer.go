package sandbox

import (
	"context"
	"time"
)

// Observer is told what a plugin does, for metrics and audit records
// (Options.Observer). Its methods run on the goroutine of the plugin's
// call and must be quick; ctx is the call's (Plugin.CallAs's), with the
// values its caller stored in it.
type Observer interface {
	// Called is told of each call of an export once it ended.
	Called(ctx context.Context, c CallReport)
	// HostCalled is told of each call the plugin made of a host function
	// of abi.HostModule; denied when the plugin is not granted the
	// function (HostFunction.Denied).
	HostCalled(ctx context.Context, function string, denied bool)
	// Requested is told of each HTTP request the plugin made: rule is the
	// allowed_hosts entry, as granted, that matched its URL ("" when none
	// did); denied when the grants refused it or a redirect it led to.
	Requested(ctx context.Context, rule string, denied bool)
	// Happened is told of each event of the plugin's life (EventBuilt,
	// ...), on the goroutine that caused it.
	Happened(event string)
}

// The events of a plugin's life that Observer.Happened is told of.
const (
	// EventBuilt: its module was compiled, or its compiled code loaded
	// from the compilation cache, for its first call or after an unload.
	EventBuilt = "built"
	// EventCompiled: with a CacheDir, a build (EventBuilt) compiled the
	// module: its code was not in the compilation cache.
	EventCompiled = "compiled"
	// EventLoadedFromCache: with a CacheDir, a build loaded the module's
	// code from the compilation cache, in memory or in the folder.
	EventLoadedFromCache = "loaded_from_cache"
	// EventInstantiated: a new instance was made.
	EventInstantiated = "instantiated"
	// EventUnloadedIdle: it gave back its compiled code and instances
	// after EngineOptions.UnloadIdleAfter without a call.
	EventUnloadedIdle = "unloaded_idle"
	// EventUnloadedForRoom: it gave them back to make room in the memory
	// budget for another plugin.
	EventUnloadedForRoom = "unloaded_for_room"
)

// CallReport is a call of a plugin's export, as an Observer is told of it.
type CallReport struct {
	Export string
	// Wait is how long the call waited before it ran: for the plugin's
	// build, for room in the memory budget, for an instance.
	Wait time.Duration
	// Run is how long it ran on an instance.
	Run time.Duration
	// Kind is the kind of its error; zero when it succeeded.
	Kind ErrorKind
}
