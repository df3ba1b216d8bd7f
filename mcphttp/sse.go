package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/jsonrpc"
)

// eventStream is one SSE stream of an HTTP session: the standalone stream
// (id 0: the Streamable HTTP GET stream, or the legacy /sse stream) or the
// stream answering one POST, which ends with the POST's response.
//
// Messages are appended to a buffer and written by the connection attached
// to the stream, at most one at a time; appending never blocks. The buffer
// also keeps written events so that a client can resume the stream on a new
// connection (GET with Last-Event-ID). It holds at most MaxStreamBuffer
// bytes of messages: the oldest events go first, and a connection whose
// unwritten events would go is dropped as too slow. Event ids are
// "<stream name>-<seq>", seq counting the stream's events from 1: unique
// within the session, and they name the stream to resume. With a shared
// stream log (host.Options.StreamLog) a POST stream's events are logged
// too, and its name (host.Session.StreamName) lets any replica resume it
// (replayStream).
type eventStream struct {
	id    int
	name  string // in its event ids
	hs    *httpSession
	limit int64
	wake  chan struct{} // signals the attached connection

	mu     sync.Mutex
	events []sseEvent // oldest first
	size   int64      // message bytes in events
	seq    int        // seq of the last event appended
	sent   int        // seq of the last event written to a connection
	conn   *sseConn   // the attached connection, if any
	primed bool       // the priming event went out
	final  bool       // the POST's response was appended: the stream takes no more
	closed bool       // the session ended or the stream was let go
}

type sseEvent struct {
	seq  int
	name string
	data []byte
}

var errSessionEnded = errors.New("the session has ended")

func newEventStream(hs *httpSession, id int, limit int64) *eventStream {
	return &eventStream{id: id, hs: hs, limit: limit, wake: make(chan struct{}, 1)}
}

// Send appends a message. A POST stream that has ended passes it on to the
// standalone stream, so that it still reaches the client, on one stream.
func (st *eventStream) Send(msg []byte) error {
	st.mu.Lock()
	if st.final || st.closed {
		st.mu.Unlock()
		if st.id == 0 {
			return errSessionEnded
		}
		return st.hs.standalone.Send(msg)
	}
	st.final = st.id != 0 && isResponse(msg)
	st.appendLocked("message", msg)
	if st.id != 0 {
		st.hs.sess.LogEvent(st.name, st.seq, msg, st.final)
	}
	st.mu.Unlock()
	return nil
}

// appendLocked adds an event, lets the oldest go beyond the limit, and wakes
// the connection.
func (st *eventStream) appendLocked(name string, data []byte) {
	st.seq++
	st.events = append(st.events, sseEvent{st.seq, name, data})
	st.size += int64(len(data))
	for st.size > st.limit && len(st.events) > 1 {
		old := st.events[0]
		st.events[0] = sseEvent{}
		st.events = st.events[1:]
		st.size -= int64(len(old.data))
		if c := st.conn; c != nil && old.seq > c.taken {
			c.drop(st)
		}
	}
	st.signal()
}

// signal wakes the attached connection, if it waits.
func (st *eventStream) signal() {
	select {
	case st.wake <- struct{}{}:
	default:
	}
}

// isResponse reports whether an outgoing message is a response, or a batch
// of them: what ends a POST's stream.
func isResponse(msg []byte) bool {
	var m struct {
		Method string `json:"method"`
	}
	return bytes.HasPrefix(msg, []byte("[")) || json.Unmarshal(msg, &m) == nil && m.Method == ""
}

// close ends the stream: its connection writes what is left and returns.
// A logged stream that did not get its response leaves a reader elsewhere
// to take its request for lost.
func (st *eventStream) close() {
	st.mu.Lock()
	st.closed = true
	if st.id != 0 && !st.final {
		st.hs.sess.EndLog(st.name)
	}
	st.mu.Unlock()
	st.signal()
}

var errStreamBusy = errors.New("the stream already has a connection")

// attach makes c the stream's connection, to write the events after seq
// from; a negative from means after the last event written.
func (st *eventStream) attach(c *sseConn, from int) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.conn != nil {
		return errStreamBusy
	}
	if from < 0 {
		from = st.sent
	}
	c.taken = min(from, st.seq)
	st.conn = c
	return nil
}

// pump writes start, then the stream's events, to c until the stream is
// over, the client goes away (ctx) or c is dropped. The first write goes out
// at once, to send the response headers. It reports whether the POST's
// response was written: the stream is then done with.
func (st *eventStream) pump(ctx context.Context, c *sseConn, start []byte) bool {
	defer func() {
		st.mu.Lock()
		if st.conn == c {
			st.conn = nil
		}
		st.mu.Unlock()
	}()
	for first := true; ; first = false {
		st.mu.Lock()
		var batch []sseEvent
		if n := len(st.events); n > 0 {
			batch = slices.Clone(st.events[max(0, min(n, c.taken-st.events[0].seq+1)):])
		}
		if len(batch) > 0 {
			c.taken = batch[len(batch)-1].seq
		}
		over, answered := st.closed, st.final && c.taken == st.seq
		st.mu.Unlock()
		if first || len(batch) > 0 {
			if err := c.write(formatEvents(start, st.name, batch)); err != nil {
				return false
			}
			start = nil
			st.mu.Lock()
			st.sent = max(st.sent, c.taken)
			st.mu.Unlock()
			continue
		}
		if over || answered {
			return answered
		}
		select {
		case <-st.wake:
		case <-c.dropped:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// prologue is what a connection of a 2025-11-25 session starts with: the
// retry delay, and on the stream's first connection a priming event (an id
// and empty data) that the client can resume from.
func (st *eventStream) prologue(retry time.Duration) []byte {
	st.mu.Lock()
	defer st.mu.Unlock()
	buf := retryField(retry)
	if st.primed {
		return append(buf, '\n')
	}
	st.primed = true
	return formatEvents(buf, st.name, []sseEvent{{}})
}

// formatEvents appends events in the SSE format.
func formatEvents(buf []byte, stream string, events []sseEvent) []byte {
	for _, e := range events {
		buf = fmt.Appendf(buf, "id: %s-%d\n", stream, e.seq)
		if e.name != "" {
			buf = fmt.Appendf(buf, "event: %s\n", e.name)
		}
		for line := range bytes.SplitSeq(e.data, []byte("\n")) {
			buf = fmt.Appendf(buf, "data: %s\n", line)
		}
		buf = append(buf, '\n')
	}
	return buf
}

// sseConn is the HTTP response an event stream is written to.
type sseConn struct {
	w     http.ResponseWriter
	rc    *http.ResponseController
	taken int // seq of the last event handed to write; guarded by the stream's mu

	mu        sync.Mutex
	isDropped bool
	dropped   chan struct{}
}

var errDropped = errors.New("the connection was dropped")

// write writes and flushes, giving the client sseWriteTimeout to take it.
// The deadline is lifted after a write that succeeds, for later responses
// on the same connection; after a failure it stays, so that the server
// does not wait on the client to end the response.
func (c *sseConn) write(data []byte) error {
	if err := c.setWriteDeadline(time.Now().Add(sseWriteTimeout)); err != nil {
		return err
	}
	if _, err := c.w.Write(data); err != nil {
		return err
	}
	if err := c.rc.Flush(); err != nil {
		return err
	}
	return c.setWriteDeadline(time.Time{})
}

func (c *sseConn) setWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.isDropped {
		return errDropped
	}
	_ = c.rc.SetWriteDeadline(t)
	return nil
}

// drop ends a connection that fell behind its stream, interrupting a write
// in progress. The stream stays, to be resumed.
func (c *sseConn) drop(st *eventStream) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.isDropped {
		return
	}
	c.isDropped = true
	close(c.dropped)
	_ = c.rc.SetWriteDeadline(time.Now())
	st.hs.log.Warn("dropping a slow SSE connection: its client does not keep up", "stream", st.id, "buffer", st.limit)
}

// serveStream answers a request with stream st, starting after event seq
// from (negative: after the last event written), until the stream is over,
// the client goes away or falls behind. A stream that has a connection
// already gets 409.
func (h *Handler) serveStream(w http.ResponseWriter, r *http.Request, hs *httpSession, st *eventStream, from int) {
	c := newSSEConn(w)
	if err := st.attach(c, from); err != nil {
		writeRPCError(w, http.StatusConflict, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "conflict: %v", err))
		return
	}
	startSSE(w)
	var start []byte
	if hs.sess.Version() >= host.Version20251125 {
		start = st.prologue(h.opts.ReconnectDelay)
	}
	if st.pump(r.Context(), c, start) {
		hs.removeStream(st)
		hs.sess.Delivered(st.name)
	}
}

// newSSEConn returns the connection of an SSE response on w.
func newSSEConn(w http.ResponseWriter) *sseConn {
	return &sseConn{w: w, rc: http.NewResponseController(w), dropped: make(chan struct{})}
}

// startSSE sends the status and headers of an SSE response.
func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

// retryField is the SSE retry field a 2025-11-25 stream starts with: how
// long its client waits before it resumes a broken one.
func retryField(retry time.Duration) []byte {
	return fmt.Appendf(nil, "retry: %d\n", retry.Milliseconds())
}

// newStream opens a stream for a POST of requests of ids (one id, or an
// array of them for a batch). Beyond maxIdleStreams POST streams with no
// connection, the oldest is let go: what it would still carry goes to the
// standalone stream.
func (hs *httpSession) newStream(ids json.RawMessage) *eventStream {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.lastStream++
	st := newEventStream(hs, hs.lastStream, hs.standalone.limit)
	st.name = hs.sess.StreamName(st.id, ids)
	hs.sess.StartLog(st.name)
	var idle []int
	for id, s := range hs.streams {
		s.mu.Lock()
		if id != 0 && s.conn == nil {
			idle = append(idle, id)
		}
		s.mu.Unlock()
	}
	slices.Sort(idle)
	for _, id := range idle[:max(0, len(idle)-maxIdleStreams+1)] {
		hs.streams[id].close()
		delete(hs.streams, id)
	}
	hs.streams[st.id] = st
	return st
}

func (hs *httpSession) removeStream(st *eventStream) {
	hs.mu.Lock()
	delete(hs.streams, st.id)
	hs.mu.Unlock()
}

// parseEventID splits an event id into the name of its stream and its
// seq; ok is false when it is not one.
func parseEventID(id string) (stream string, seq int, ok bool) {
	i := strings.LastIndexByte(id, '-')
	if i <= 0 {
		return "", 0, false
	}
	seq, err := strconv.Atoi(id[i+1:])
	return id[:i], seq, err == nil && seq >= 0
}

// resume finds the stream of this session here whose name a
// Last-Event-ID gives; nil when the stream is unknown or over.
func (hs *httpSession) resume(stream string) *eventStream {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	for _, st := range hs.streams {
		if st.name == stream {
			return st
		}
	}
	return nil
}

// getSSE opens a session of the legacy HTTP+SSE transport (2024-11-05): its
// stream starts with an endpoint event naming the URL to POST messages to,
// then carries every message of the session, responses included. The
// session ends with the stream.
func (h *Handler) getSSE(w http.ResponseWriter, r *http.Request) {
	hs, err := h.newSession(r, true)
	if err != nil {
		writeRPCError(w, http.StatusServiceUnavailable, jsonrpc.Errorf(jsonrpc.CodeInternalError, "%v", err))
		return
	}
	defer h.end(hs)
	held, err := hs.sess.HoldStream(hs.subject)
	if err != nil {
		writeRPCError(w, http.StatusServiceUnavailable, jsonrpc.Errorf(jsonrpc.CodeInternalError, "session state unavailable: %v", err))
		return
	}
	hs.standalone.mu.Lock()
	hs.standalone.appendLocked("endpoint", []byte(hs.endpoint.messages+"?sessionId="+hs.id))
	hs.standalone.mu.Unlock()
	if held {
		go h.keepRecord(hs)
	}
	h.serveStream(w, r, hs, hs.standalone, 0)
}

// keepRecord touches the record of a legacy session in a shared store
// while its stream is open, whichever replicas serve its POSTs, so that
// the store keeps it for them (host.Session.HoldStream).
func (h *Handler) keepRecord(hs *httpSession) {
	tick := time.NewTicker(h.opts.SessionIdleTimeout / 3)
	defer tick.Stop()
	for {
		select {
		case <-hs.done:
			return
		case <-tick.C:
			if err := hs.sess.Refresh(); err != nil {
				h.log.Warn("touching a legacy session's record in the shared session store failed", "err", err)
			}
		}
	}
}

// postMessages takes one message of a legacy HTTP+SSE session (202); what
// it causes goes out on the session's stream, through the inbox of the
// replica that holds it when that is another (host.Server.ResumeLegacy).
func (h *Handler) postMessages(w http.ResponseWriter, r *http.Request) {
	body, ok := h.readBody(w, r)
	if !ok {
		return
	}
	hs := h.acquire(w, r, r.URL.Query().Get("sessionId"), true)
	if hs == nil {
		return
	}
	defer h.release(hs)
	var out host.Outbound = hs.standalone
	if hs.relay != nil {
		out = hs.relay
	}
	if k, ok := h.classify(w, body, hs.sess.Version()); ok && h.handOver(w, r, hs, body, out, k.requests) {
		w.WriteHeader(http.StatusAccepted)
	}
}

// replayStream answers a GET that resumes, after event seq after, the
// stream name that another replica logs (host.Session.OtherReplicasStream): the
// events logged after it, then those logged as they come, until the
// response of its requests (ids). When the log says the replica that runs
// them was lost, or cannot be read, the requests are answered here with
// that error (and it is logged for a later resume): a client never waits
// in silence for a dead replica.
func (h *Handler) replayStream(w http.ResponseWriter, r *http.Request, hs *httpSession, name string, ids json.RawMessage, after int) {
	hs.mu.Lock()
	busy := hs.replays >= maxReplays
	if !busy {
		hs.replays++
	}
	hs.mu.Unlock()
	if busy {
		writeRPCError(w, http.StatusServiceUnavailable, jsonrpc.Errorf(jsonrpc.CodeInternalError, "too many streams of this session are being resumed from other replicas at once (%d)", maxReplays))
		return
	}
	defer func() {
		hs.mu.Lock()
		hs.replays--
		hs.mu.Unlock()
	}()
	c := newSSEConn(w)
	startSSE(w)
	start := []byte("\n")
	if hs.sess.Version() >= host.Version20251125 {
		start = append(retryField(h.opts.ReconnectDelay), '\n')
	}
	if c.write(start) != nil {
		return
	}
	last, err := hs.sess.ReplayLog(r.Context(), name, after, func(seq int, msg []byte) error {
		return c.write(formatEvents(nil, name, []sseEvent{{seq: seq, name: "message", data: msg}}))
	})
	if err == nil || r.Context().Err() != nil || errors.Is(err, errDropped) {
		return
	}
	answer := lostAnswer(ids, jsonrpc.Errorf(jsonrpc.CodeInternalError, "%v", err))
	if answer == nil {
		h.log.Warn("a resumed stream's requests cannot be answered: their ids were too long to carry in its name", "err", err)
		return
	}
	h.log.Warn("answering the requests of a stream resumed from another replica's log with an error", "err", err)
	hs.sess.LogEvent(name, last+1, answer, true)
	_ = c.write(formatEvents(nil, name, []sseEvent{{seq: last + 1, name: "message", data: answer}}))
}

// lostAnswer answers the requests of ids (one id, or a batch's array)
// with rpcErr; nil without ids.
func lostAnswer(ids json.RawMessage, rpcErr *jsonrpc.Error) []byte {
	var batch []json.RawMessage
	switch {
	case len(ids) == 0:
		return nil
	case json.Unmarshal(ids, &batch) != nil:
		return jsonrpc.EncodeResponse(ids, nil, rpcErr)
	}
	out := []byte("[")
	for i, id := range batch {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, jsonrpc.EncodeResponse(id, nil, rpcErr)...)
	}
	return append(out, ']')
}
