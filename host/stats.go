package host

// Stats is what a server holds at a moment (Server.Stats): for metrics
// and the status page.
type Stats struct {
	// Sessions counts the open sessions by transport and the protocol
	// version they negotiated ("" for one not initialized yet). A
	// 2026-07-28 request over HTTP opens none.
	Sessions map[SessionKind]int
	// Tasks counts the tasks held, by status: each of working,
	// input_required, completed, failed and cancelled, zero or more;
	// expired ones left out.
	Tasks map[string]int
}

// SessionKind is the transport (SessionOptions.Transport) and protocol
// version of a session.
type SessionKind struct {
	Transport, ProtocolVersion string
}

// Stats returns what the server holds now.
func (s *Server) Stats() Stats {
	sessions := map[SessionKind]int{}
	for _, sess := range s.sessions.all() {
		sessions[SessionKind{Transport: sess.transport, ProtocolVersion: sess.Version()}]++
	}
	tasks := map[string]int{taskWorking: 0, taskInputRequired: 0, taskCompleted: 0, taskFailed: 0, taskCancelled: 0}
	for status, n := range s.tasks.store.counts() {
		tasks[status] += n
	}
	return Stats{Sessions: sessions, Tasks: tasks}
}
