package sandbox

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"time"
)

// Defaults applied to zero (or negative) Limits fields.
const (
	DefaultMemoryMiB      = 128
	DefaultTimeout        = 30 * time.Second
	DefaultMaxOutputBytes = 4 << 20
	DefaultMaxInstances   = 4
	DefaultMaxQueue       = 64
	DefaultHostCallRate   = 1000
	DefaultMaxModuleMiB   = 20
)

// NoQueue is the Limits.MaxQueue of a plugin whose calls never wait for an
// instance: when every instance is busy, a call fails at once.
const NoQueue = -1

// Bounds of the Limits fields (Validate). Those of MemoryMiB are what a
// 32-bit wasm memory can address, and enough for the Extism kernel (1 MiB)
// to hold an input of half the limit.
const (
	minMemoryMiB       = 4
	maxMemoryMiB       = 4096
	maxTimeout         = time.Hour
	maxOutputBytes     = 1 << 30
	maxInstances       = 64
	maxQueue           = 10000
	maxHostCallsPerSec = 100000
	maxModuleMiB       = 1024
)

// Options configures a plugin.
type Options struct {
	Limits        Limits
	Grants        Grants
	HostFunctions []HostFunction
	// Logger receives the plugin's log calls and its stdout and stderr,
	// with the attribute plugin=name. Nil discards them.
	Logger *slog.Logger
	// CheckOutput, when set, checks the output of every successful call
	// of export: output it rejects fails the call with a
	// KindMalformedOutput CallError (the error's text as its message), and
	// the instance that wrote it is discarded rather than reused.
	CheckOutput func(export string, output []byte) error
	// Interpret runs the plugin on wazero's interpreter, which compiles a
	// module in a fraction of the time the compiler takes and runs it
	// many times slower, with the same rewrite, limits and grants: for a
	// plugin run once or twice, such as one listed while the compiler has
	// not seen it yet. Its code goes to no compilation cache.
	Interpret bool
	// Reread, when set, gives the module's bytes again each time the
	// plugin is built, so that the plugin does not hold them: not before
	// its first call (Engine.Defer), not once compiled, and not after
	// EngineOptions.UnloadIdleAfter without calls, when it gives back its
	// compiled code and instances and is built again on its next call. It
	// must give the bytes the plugin was loaded from, or fail; a failure
	// fails the call that needed the build, and the next call tries again.
	Reread func() ([]byte, error)
	// Redactions, when set, are secret values the plugin is handed while
	// it runs (a token broker's access tokens), replaced by "[REDACTED]"
	// wherever Grants.Secrets are.
	Redactions *Redactions
	// Observer, when set, is told of every call, host function call and
	// HTTP request the plugin makes.
	Observer Observer
}

// Limits bounds what a plugin may consume. A zero field takes its default;
// Validate tells the bounds of the others.
type Limits struct {
	// MemoryMiB caps each linear memory of an instance: the plugin's own and
	// the Extism kernel's, which holds a call's input and output. An
	// instance may therefore use up to twice this much, which it reserves
	// (with its tables and host copies) from the Engine's memory budget. An
	// input may use half of it. From 4 to 4096. Default DefaultMemoryMiB.
	MemoryMiB uint32
	// Timeout bounds one call, including its wait for an instance and the
	// creation of one. Up to an hour. Default DefaultTimeout.
	Timeout time.Duration
	// MaxOutputBytes caps the output of one call, and each block the
	// plugin hands the host: its error message is cut to this size, and a
	// larger host function input, HTTP request or request body stops the
	// call. Up to 1 GiB. Default DefaultMaxOutputBytes.
	MaxOutputBytes int
	// MaxInstances is how many calls run at once, each on its own
	// instance. Up to 64. Default DefaultMaxInstances.
	MaxInstances int
	// MaxQueue is how many calls may wait for an instance; further calls
	// fail with ErrBusy. Up to 10000. Default DefaultMaxQueue; negative
	// means none may wait (NoQueue).
	MaxQueue int
	// HostCallsPerSecond bounds the host function calls (HostFunctions)
	// of one call: a token bucket of this many calls, refilled at this
	// rate. A call that goes beyond it is stopped with a trap, so that a
	// plugin cannot flood the client with notifications or the host with
	// work. Up to 100000. Default DefaultHostCallRate.
	HostCallsPerSecond int
	// MaxModuleMiB caps the size of the plugin's wasm module, which bounds
	// the time and memory of compiling it (internal/wasmpass/compilecaps.go): a larger
	// module is refused at load. Up to 1024. Default DefaultMaxModuleMiB.
	MaxModuleMiB int
	// WazeroChecks compiles wazero's own look at the call's context
	// (RuntimeConfig.WithCloseOnContextDone) into the plugin's code too,
	// at every loop head: a second line should the sandbox's countdown
	// (internal/wasmpass/interrupt.go) ever be escaped, which costs some 30 ns a loop
	// iteration (RATIONALE.md, "When should a plugin have wazero's checks
	// too?").
	WazeroChecks bool
}

// Grants are what the operator allows a plugin. Anything not granted is
// denied: no network, no filesystem, no environment variables, no
// arguments, and the plugin's stdout and stderr only reach the Logger. Every
// plugin gets the real clocks and cryptographic randomness.
type Grants struct {
	// AllowedHosts are what the plugin may send HTTP requests to through
	// Extism's http_request, each "[scheme://]host[:port]": scheme http or
	// https (either when left out); host a name, a glob of names
	// ("*.example.com", "*"), an IPv4 address or a bracketed IPv6 address;
	// port a number, "*" for any, or, when left out, the scheme's default
	// port (443 for https, 80 for http). Only http and https are ever
	// allowed. Every redirect is checked the same way. Empty denies every
	// request.
	AllowedHosts []string
	// AllowPrivateNetwork lets the plugin connect to addresses that are not
	// on the public internet: loopback, private, link-local (where cloud
	// metadata services live), CGNAT, unique local IPv6 and other special
	// ranges. Without it such an address is refused when the connection is
	// made, whatever name resolved to it, unless an AllowedHosts entry
	// names the address itself (e.g. "127.0.0.1:8080").
	AllowPrivateNetwork bool
	// Mounts are the host directories the plugin sees. The plugin cannot
	// create symbolic links in them, nor climb out of them with "..";
	// links already there are followed, even out of the mount: mount only
	// directories whose links you trust.
	Mounts []Mount
	// Config is what the plugin reads with Extism's config_get.
	Config map[string]string
	// Secrets are read with config_get like Config (a key may not be in
	// both), but their values are replaced by "[REDACTED]" wherever they
	// appear verbatim in what leaves the sandbox: the plugin's output, its
	// log lines and output streams, its error and trap messages, and what
	// the sandbox logs for it. This stops accidental disclosure only: a
	// plugin granted a secret can still disclose it encoded.
	Secrets map[string]string
	// Redacted are values replaced by "[REDACTED]" like Secrets' but that
	// config_get does not read: secrets the plugin gets otherwise, through
	// a host function (get_keyring_secret's OS keyring entries).
	Redacted []string
}

// Mount makes the host directory HostPath visible to the plugin as
// GuestPath.
type Mount struct {
	HostPath  string
	GuestPath string
	ReadOnly  bool
}

// Validate reports every field of l out of its bounds: MemoryMiB from 4 to
// 4096, Timeout up to an hour, MaxOutputBytes up to 1 GiB, MaxInstances up
// to 64, MaxQueue up to 10000, HostCallsPerSecond up to 100000 and
// MaxModuleMiB up to 1024. Zero and negative fields are within bounds:
// they take their defaults (or, for MaxQueue, mean NoQueue). A plugin
// loads only with limits Validate accepts.
func (l Limits) Validate() error {
	var errs []error
	if l.MemoryMiB != 0 && (l.MemoryMiB < minMemoryMiB || l.MemoryMiB > maxMemoryMiB) {
		errs = append(errs, fmt.Errorf("memory limit %d MiB is not between %d and %d MiB", l.MemoryMiB, minMemoryMiB, maxMemoryMiB))
	}
	if l.Timeout > maxTimeout {
		errs = append(errs, fmt.Errorf("timeout %v is longer than %v", l.Timeout, maxTimeout))
	}
	for _, f := range []struct {
		what     string
		n, limit int
	}{
		{"output limit %d bytes", l.MaxOutputBytes, maxOutputBytes},
		{"instance limit %d", l.MaxInstances, maxInstances},
		{"queue limit %d", l.MaxQueue, maxQueue},
		{"host call rate %d per second", l.HostCallsPerSecond, maxHostCallsPerSec},
		{"module size limit %d MiB", l.MaxModuleMiB, maxModuleMiB},
	} {
		if f.n > f.limit {
			errs = append(errs, fmt.Errorf(f.what+" is more than %d", f.n, f.limit))
		}
	}
	return errors.Join(errs...)
}

// withDefaults returns l with its zero fields set to their defaults, or
// Validate's error.
func (l Limits) withDefaults() (Limits, error) {
	if err := l.Validate(); err != nil {
		return l, err
	}
	if l.MemoryMiB == 0 {
		l.MemoryMiB = DefaultMemoryMiB
	}
	l.Timeout = orDefault(l.Timeout, DefaultTimeout)
	l.MaxOutputBytes = orDefault(l.MaxOutputBytes, DefaultMaxOutputBytes)
	l.MaxInstances = orDefault(l.MaxInstances, DefaultMaxInstances)
	switch {
	case l.MaxQueue == 0:
		l.MaxQueue = DefaultMaxQueue
	case l.MaxQueue < 0:
		l.MaxQueue = 0
	}
	l.HostCallsPerSecond = orDefault(l.HostCallsPerSecond, DefaultHostCallRate)
	l.MaxModuleMiB = orDefault(l.MaxModuleMiB, DefaultMaxModuleMiB)
	return l, nil
}

func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// check reports the first grant that cannot work: a host pattern that
// does not parse, a key both in Config and Secrets, or a mount whose host path is not a directory or whose
// guest path is not absolute.
func (g Grants) check() error {
	for _, h := range g.AllowedHosts {
		if _, err := parseHostRule(h); err != nil {
			return err
		}
	}
	for k := range g.Secrets {
		if _, ok := g.Config[k]; ok {
			return fmt.Errorf("config key %q is both a config value and a secret", k)
		}
	}
	for _, m := range g.Mounts {
		if !path.IsAbs(m.GuestPath) {
			return fmt.Errorf("mount %s: guest path %q is not absolute", m.HostPath, m.GuestPath)
		}
		st, err := os.Stat(m.HostPath)
		if err != nil {
			return fmt.Errorf("mount %s: %w", m.HostPath, err)
		}
		if !st.IsDir() {
			return fmt.Errorf("mount %s: not a directory", m.HostPath)
		}
	}
	return nil
}
