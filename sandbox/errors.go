package sandbox

import (
	"errors"
	"fmt"
)

// ErrorKind classifies why a plugin call failed.
type ErrorKind int

// The kinds of CallError. The zero ErrorKind means "not a CallError".
const (
	// KindPlugin: the export failed on its own terms, by returning a
	// non-zero status or setting an error with error_set.
	KindPlugin ErrorKind = iota + 1
	// KindTrap: the plugin crashed: a wasm trap, a panic, exiting, or a
	// host function that stopped the call (a block over its cap, too many
	// host calls a second).
	KindTrap
	// KindTimeout: the call ran past Limits.Timeout or the caller's deadline.
	KindTimeout
	// KindCanceled: the caller canceled the call's context.
	KindCanceled
	// KindInputTooLarge: the input exceeded half of Limits.MemoryMiB.
	KindInputTooLarge
	// KindOutputTooLarge: the output exceeded Limits.MaxOutputBytes.
	KindOutputTooLarge
	// KindBusy: every instance was in use and the queue was full, or the
	// Engine's memory budget had no room for a new instance
	// (CallError.SpentBudget).
	KindBusy
	// KindNoExport: the plugin has no such export.
	KindNoExport
	// KindMalformedOutput: the output failed Options.CheckOutput.
	KindMalformedOutput
	// KindOutOfMemory: the plugin crashed for want of memory, having used
	// up its Limits.MemoryMiB.
	KindOutOfMemory
	// KindDenied: the plugin's grants refused what it asked for, and that
	// stopped the call: an HTTP request to a host, port, scheme or address
	// its allowed_hosts do not grant, under Extism's contract, which fails
	// the call rather than answer the plugin.
	KindDenied
)

// Sentinels matching CallErrors of each kind with errors.Is.
var (
	ErrPlugin          = errors.New("plugin error")
	ErrTrap            = errors.New("plugin trapped")
	ErrTimeout         = errors.New("plugin call timed out")
	ErrCanceled        = errors.New("plugin call canceled")
	ErrInputTooLarge   = errors.New("plugin input too large")
	ErrOutputTooLarge  = errors.New("plugin output too large")
	ErrBusy            = errors.New("plugin busy")
	ErrNoExport        = errors.New("no such plugin export")
	ErrMalformedOutput = errors.New("plugin output malformed")
	ErrOutOfMemory     = errors.New("plugin ran out of memory")
	ErrDenied          = errors.New("denied by the plugin's grants")
)

// ErrClosed is returned by calls on a closed Plugin.
var ErrClosed = errors.New("plugin closed")

var kindErrors = [...]error{
	KindPlugin:          ErrPlugin,
	KindTrap:            ErrTrap,
	KindTimeout:         ErrTimeout,
	KindCanceled:        ErrCanceled,
	KindInputTooLarge:   ErrInputTooLarge,
	KindOutputTooLarge:  ErrOutputTooLarge,
	KindBusy:            ErrBusy,
	KindNoExport:        ErrNoExport,
	KindMalformedOutput: ErrMalformedOutput,
	KindOutOfMemory:     ErrOutOfMemory,
	KindDenied:          ErrDenied,
}

// sentinel returns the sentinel error of k, nil for an unknown kind.
func (k ErrorKind) sentinel() error {
	if k <= 0 || int(k) >= len(kindErrors) {
		return nil
	}
	return kindErrors[k]
}

// String describes k.
func (k ErrorKind) String() string {
	if err := k.sentinel(); err != nil {
		return err.Error()
	}
	return fmt.Sprintf("ErrorKind(%d)", int(k))
}

// CallError is the error of a failed Plugin.Call. errors.Is(err, ErrTimeout)
// and the like test its Kind.
type CallError struct {
	Plugin  string
	Export  string
	Kind    ErrorKind
	Message string
	// SpentBudget is true for a KindBusy call that found the Engine's
	// memory budget without room for a new instance, false for one that
	// found every instance busy and the queue full.
	SpentBudget bool
}

// Error implements the error interface.
func (e *CallError) Error() string {
	return fmt.Sprintf("sandbox: plugin %s: %s: %s: %s", e.Plugin, e.Export, e.Kind, e.Message)
}

// Unwrap returns the sentinel of the error's kind.
func (e *CallError) Unwrap() error { return e.Kind.sentinel() }

// KindOf returns the kind of the CallError in err's chain, or zero when there
// is none.
func KindOf(err error) ErrorKind {
	var ce *CallError
	if errors.As(err, &ce) {
		return ce.Kind
	}
	return 0
}
