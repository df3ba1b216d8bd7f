//go:build linux || darwin

package cli

import (
	"io"
	"os"
	"syscall"
)

// pollableStdin returns what serve reads stdin f through: for a pipe or a
// socket (how MCP clients start a stdio server), a duplicate of f in
// non-blocking mode, which the runtime's poller waits on, and a function
// that puts f back in blocking mode and closes the duplicate. Waiting for
// each request in a blocking read(2) instead costs a third of a small
// call's CPU: the runtime hands the reading thread's processor to another
// thread and back at every request (RATIONALE.md, "Why is a pipe on stdin
// read in non-blocking mode?"). Anything else (a terminal, shared with the
// shell; a regular file, which cannot be polled) is returned as it is.
func pollableStdin(f *os.File) (io.Reader, func()) {
	keep := func() {}
	info, err := f.Stat()
	if err != nil || info.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return f, keep
	}
	conn, err := f.SyscallConn()
	if err != nil {
		return f, keep
	}
	dup := -1
	var derr error
	if err := conn.Control(func(fd uintptr) { dup, derr = syscall.Dup(int(fd)) }); err != nil || derr != nil {
		return f, keep
	}
	// O_NONBLOCK belongs to the file description, which f and the
	// duplicate share: it was blocking (os.Stdin reads it so).
	if err := syscall.SetNonblock(dup, true); err != nil {
		syscall.Close(dup)
		return f, keep
	}
	polled := os.NewFile(uintptr(dup), f.Name())
	return polled, func() {
		_ = syscall.SetNonblock(dup, false)
		polled.Close()
	}
}
