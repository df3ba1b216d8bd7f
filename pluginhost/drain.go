package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/sandbox"
)

// drain is the link of a plugin's call chain that lets a hot swap close a
// replaced version without failing the calls running on it. It counts
// those calls, so that the version is closed only after they ended:
// sandbox.Plugin.Close lets calls that hold an instance finish, but fails
// those still waiting for one. A call that reaches a version already closed
// (it took the plugin from a catalog older than the swap, and was slower
// than DrainGrace to call it) goes to the version now serving the same
// plugin name, which successor finds.
type drain struct {
	name string
	next host.Runtime

	mu        sync.Mutex
	calls     int
	retired   bool
	closed    bool
	onClose   func()
	successor func() *drain // the drain of the version now serving the name; nil when none
	// refreshListing, when not nil, lists the plugin again (the Loader's
	// listingRefresh): the Reloader runs it once, when it first serves the
	// plugin.
	refreshListing func(context.Context)
	// sandbox and breaker are the version's sandboxed plugin and circuit
	// breaker (nil when it has none), for PluginStats.
	sandbox *sandbox.Plugin
	breaker *breaker
	// about is what the version was loaded from and with, for
	// PluginStats.
	about PluginAbout
}

// wrap is the drain as a Middleware.
func (d *drain) wrap(next host.Runtime) host.Runtime {
	d.next = next
	return runtimeFunc{next, d.call}
}

// errRemoved is the error of a call that reaches a plugin that was removed.
var errRemoved = errors.New("the plugin was removed")

func (d *drain) call(ctx context.Context, export string, input []byte) ([]byte, error) {
	d.mu.Lock()
	if d.closed {
		successor := d.successor
		d.mu.Unlock()
		if successor != nil {
			if next := successor(); next != nil && next != d {
				return next.call(ctx, export, input)
			}
		}
		return nil, fmt.Errorf("plugin %s: %w", d.name, errRemoved)
	}
	d.calls++
	d.mu.Unlock()
	defer d.done()
	return d.next.Call(ctx, export, input)
}

func (d *drain) done() {
	d.mu.Lock()
	d.calls--
	closeNow := d.retired && d.calls == 0 && !d.closed
	if closeNow {
		d.closed = true
	}
	d.mu.Unlock()
	if closeNow {
		d.close()
	}
}

// retire closes the runtime now if no call runs on it, else when the last
// one ends; onClose runs then. Later calls go to the version successor
// returns.
func (d *drain) retire(successor func() *drain, onClose func()) {
	d.mu.Lock()
	d.retired, d.onClose, d.successor = true, onClose, successor
	closeNow := d.calls == 0 && !d.closed
	if closeNow {
		d.closed = true
	}
	d.mu.Unlock()
	if closeNow {
		d.close()
	}
}

func (d *drain) close() {
	_ = d.next.Close(context.Background()) // closing only frees memory
	if d.onClose != nil {
		d.onClose()
	}
}
