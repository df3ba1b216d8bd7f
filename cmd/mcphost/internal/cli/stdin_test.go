//go:build linux || darwin

package cli

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// nonblocking reports whether f's file description is in non-blocking mode.
func nonblocking(t *testing.T, f *os.File) bool {
	t.Helper()
	conn, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var flags int
	var ferr error
	if err := conn.Control(func(fd uintptr) { flags, ferr = unix.FcntlInt(fd, syscall.F_GETFL, 0) }); err != nil {
		t.Fatal(err)
	}
	if ferr != nil {
		t.Fatal(ferr)
	}
	return flags&syscall.O_NONBLOCK != 0
}

// A pipe on stdin (how every MCP client starts a stdio server) is read
// through the runtime's poller: a read that waits for the next request
// then parks a goroutine rather than a thread in read(2), which the
// runtime would hand its processor away from and back at every request.
// Serving restores the pipe's blocking mode, shared with whoever else
// holds it, when it stops.
func TestPipeStdinIsReadThroughThePollerAndRestored(t *testing.T) {
	// A blocking pipe, as a client hands one over (os.Pipe's are not).
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	r, w := os.NewFile(uintptr(fds[0]), "stdin"), os.NewFile(uintptr(fds[1]), "client")
	defer r.Close()
	defer w.Close()
	if nonblocking(t, r) {
		t.Fatal("syscall.Pipe gave a non-blocking pipe; the test needs a blocking one")
	}
	in, restore := pollableStdin(r)
	if in == io.Reader(r) {
		t.Fatal("pollableStdin kept the blocking pipe")
	}
	if !nonblocking(t, r) {
		t.Error("the pipe is still in blocking mode while served")
	}
	if _, err := w.Write([]byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 3)
	if _, err := io.ReadFull(in, buf); err != nil || string(buf) != "{}\n" {
		t.Fatalf("read %q, %v through the pollable stdin; want the line written", buf, err)
	}
	restore()
	if nonblocking(t, r) {
		t.Error("the pipe is left in non-blocking mode after serving")
	}
	if _, err := w.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if n, err := r.Read(buf); err != nil || n != 1 {
		t.Errorf("the original pipe reads %d bytes, %v after restore; want 1", n, err)
	}
}

// A regular file (serve < requests.jsonl) cannot be polled, and a
// terminal is shared with the shell: both are read as they are.
func TestRegularFileStdinIsReadAsItIs(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in, restore := pollableStdin(f)
	defer restore()
	if in != io.Reader(f) {
		t.Error("pollableStdin replaced a regular file")
	}
	if nonblocking(t, f) {
		t.Error("pollableStdin made a regular file non-blocking")
	}
}
