package sandbox

import (
	"fmt"
	"log/slog"
	"os"
	"path"
	"time"

	"github.com/gobwas/glob"
)

// Defaults applied to zero (or negative) Limits fields.
const (
	DefaultMemoryMiB      = 128
	DefaultTimeout        = 30 * time.Second
	DefaultMaxOutputBytes = 4 << 20
	DefaultMaxInstances   = 4
	DefaultMaxQueue       = 64
)

// Bounds of Limits.MemoryMiB: what a 32-bit wasm memory can address, and
// enough for the Extism kernel (1 MiB) to hold an input of half the limit.
const (
	minMemoryMiB = 4
	maxMemoryMiB = 4096
)

// Options configures a plugin.
type Options struct {
	Limits        Limits
	Grants        Grants
	HostFunctions []HostFunction
	// Logger receives the plugin's log calls and its stdout and stderr,
	// with the attribute plugin=name. Nil discards them.
	Logger *slog.Logger
}

// Limits bounds what a plugin may consume. A zero field takes its default.
type Limits struct {
	// MemoryMiB caps each linear memory of an instance: the plugin's own and
	// the Extism kernel's, which holds a call's input and output. An
	// instance may therefore use up to twice this much. An input may use
	// half of it. From 4 to 4096. Default DefaultMemoryMiB.
	MemoryMiB uint32
	// Timeout bounds one call, including its wait for an instance and the
	// creation of one. Default DefaultTimeout.
	Timeout time.Duration
	// MaxOutputBytes caps the output of one call. Default
	// DefaultMaxOutputBytes.
	MaxOutputBytes int
	// MaxInstances is how many calls run at once, each on its own
	// instance. Default DefaultMaxInstances.
	MaxInstances int
	// MaxQueue is how many calls may wait for an instance; further calls
	// fail with ErrBusy. Default DefaultMaxQueue.
	MaxQueue int
}

// Grants are what the operator allows a plugin. Anything not granted is
// denied: no network, no filesystem, no environment variables, no
// arguments, and the plugin's stdout and stderr only reach the Logger. Every
// plugin gets the real clocks and cryptographic randomness.
type Grants struct {
	// AllowedHosts are the host names the plugin may send HTTP requests to
	// through Extism's http_request. Extism matches each entry, as a glob
	// ("*.example.com"), against the request URL's host name without its
	// port, for any scheme and port. Redirects are followed only to allowed
	// hosts. Empty denies every request.
	AllowedHosts []string
	// Mounts are the host directories the plugin sees. The plugin cannot
	// create symbolic links in them, but links already there are followed,
	// even out of the mount.
	Mounts []Mount
	// Config is what the plugin reads with Extism's config_get.
	Config map[string]string
}

// Mount makes the host directory HostPath visible to the plugin as
// GuestPath.
type Mount struct {
	HostPath  string
	GuestPath string
	ReadOnly  bool
}

// withDefaults returns l with its zero fields set to their defaults.
func (l Limits) withDefaults() (Limits, error) {
	if l.MemoryMiB == 0 {
		l.MemoryMiB = DefaultMemoryMiB
	}
	if l.MemoryMiB < minMemoryMiB || l.MemoryMiB > maxMemoryMiB {
		return l, fmt.Errorf("memory limit %d MiB is not between %d and %d MiB", l.MemoryMiB, minMemoryMiB, maxMemoryMiB)
	}
	l.Timeout = orDefault(l.Timeout, DefaultTimeout)
	l.MaxOutputBytes = orDefault(l.MaxOutputBytes, DefaultMaxOutputBytes)
	l.MaxInstances = orDefault(l.MaxInstances, DefaultMaxInstances)
	l.MaxQueue = orDefault(l.MaxQueue, DefaultMaxQueue)
	return l, nil
}

func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// check reports the first grant that cannot work: a host pattern that is
// not a valid glob, or a mount whose host path is not a directory or whose
// guest path is not absolute.
func (g Grants) check() error {
	for _, h := range g.AllowedHosts {
		if _, err := glob.Compile(h); err != nil {
			return fmt.Errorf("allowed host %q: %w", h, err)
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
