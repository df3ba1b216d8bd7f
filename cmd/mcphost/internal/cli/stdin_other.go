//go:build !(linux || darwin)

package cli

import (
	"io"
	"os"
)

// pollableStdin returns f as it is: only Linux and macOS read a pipe on
// stdin through the runtime's poller (stdin_unix.go).
func pollableStdin(f *os.File) (io.Reader, func()) { return f, func() {} }
