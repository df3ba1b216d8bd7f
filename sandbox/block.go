package sandbox

import (
	"bytes"
	"fmt"

	extism "github.com/extism/go-sdk"
)

// Bounds on what the sandbox copies out of a plugin's kernel memory, so
// that a plugin cannot grow the host's heap by passing huge blocks to the
// functions the sandbox serves. Each is checked against the block's length
// before anything is copied.
const (
	// maxKernelKeyBytes bounds a config key or variable name.
	maxKernelKeyBytes = 4 << 10
	// outputLimit names Limits.MaxOutputBytes, which bounds every other
	// block: an error message, a host function's input, an HTTP request
	// and its body. Nothing larger may leave the sandbox anyway.
	outputLimit = "max_output_bytes"
)

// blockLen returns the length of the block at offset, described by what;
// an offset that names no block stops the call.
func blockLen(cp *extism.CurrentPlugin, offset uint64, what string) uint64 {
	n, err := cp.Length(offset)
	if err != nil {
		panic(fmt.Errorf("%s: %w", what, err))
	}
	return n
}

// blockLength returns the length of the block at offset, described by
// what. A block longer than limit stops the call with lengthError's error.
func blockLength(cp *extism.CurrentPlugin, offset uint64, what string, limit int, setting string) uint64 {
	n := blockLen(cp, offset, what)
	if err := lengthError(n, what, limit, setting); err != nil {
		panic(err)
	}
	return n
}

// lengthError returns the error of a block of n bytes, described by what,
// that is longer than limit: it names the limit and, unless empty, the
// setting it comes from. It returns nil when the block fits.
func lengthError(n uint64, what string, limit int, setting string) error {
	if n <= uint64(limit) {
		return nil
	}
	if setting != "" {
		setting = " (" + setting + ")"
	}
	return fmt.Errorf("%s of %d bytes exceeds the limit of %d%s", what, n, limit, setting)
}

// blockView returns the first n bytes of the block at offset, as a view of
// the kernel memory that is valid until the plugin runs again.
func blockView(cp *extism.CurrentPlugin, offset, n uint64, what string) []byte {
	b, ok := cp.Memory().Read(uint32(offset), uint32(n))
	if !ok {
		panic(fmt.Errorf("%s: invalid memory block", what))
	}
	return b
}

// readBlock copies the block at offset out of the kernel memory, once
// blockLength accepts its length.
func readBlock(cp *extism.CurrentPlugin, offset uint64, what string, limit int, setting string) []byte {
	return bytes.Clone(blockView(cp, offset, blockLength(cp, offset, what, limit, setting), what))
}
