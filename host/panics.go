package host

import (
	"fmt"
	"runtime/debug"
)

// A panic while serving a request or running a task is a bug of mcphost.
// Unrecovered, it would end the process: every session, and every call of
// every plugin in flight. So the goroutines that serve requests and run
// tasks recover it: the request is answered, or the task fails, with an
// internal error, the panic goes to the log with its stack at error level,
// and the server carries on. (The sandbox recovers the WebAssembly
// runtime's own panics, and fails only the plugin's step:
// sandbox/runtimepanic.go.)

// recoverPanic, deferred by such a goroutine, recovers a panic and sets
// *err to the internal error that answers what (a method, or a task's
// run).
func (s *Server) recoverPanic(what string, err *error) {
	r := recover()
	if r == nil {
		return
	}
	s.log().Error("serving "+what+" panicked: a bug of mcphost; answered with an internal error, the server carries on",
		"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
	*err = rpcErrorf(CodeInternalError, "internal error: mcphost failed serving %s (a bug of the server, logged with its stack)", what)
}
