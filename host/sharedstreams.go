package host

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// SharedStreamLog keeps the events of the SSE streams that answer the
// requests of 2025-era HTTP sessions where every replica of the service
// can read them (Options.StreamLog), so that a client whose stream broke
// (its replica was killed, its connection cut) resumes it with
// Last-Event-ID on any replica: what was logged is replayed, and the rest
// follows as it is logged. Entries are sealed by the replica that writes
// them, bound to their log, so that whoever can write to the backend
// cannot make up a message to a client.
type SharedStreamLog interface {
	// Append adds each entry, entries[i], to its log, logs[i], in order,
	// in one round trip. A log should keep its last thousand entries or
	// so, for minutes after its last (the store's bounds).
	Append(ctx context.Context, logs []string, entries [][]byte) error
	// Read calls each with the entries of log, all it holds and then
	// those appended from now on, until ctx ends.
	Read(ctx context.Context, log string, each func(entry []byte)) error
}

// The replica that runs a logged stream's request beats in its log every
// streamBeat while the request runs; a reader that finds nothing new in
// it for streamSilence takes the replica for lost, and answers the
// request with an error (ReplicaLostError).
const (
	streamBeat    = time.Second
	streamSilence = 5 * time.Second
	// maxPendingLog bounds the bytes of entries waiting to be logged
	// (a backend slower than the streams): beyond it, entries that are
	// not a request's response are dropped.
	maxPendingLog = 32 << 20
	// logBatchDelay is how long the logger lets entries gather before
	// it writes them: at 2 ms, a pipeline after nearly every call made
	// sequential calls 55 µs slower on 2 cores; at 10 ms, no slower.
	logBatchDelay = 10 * time.Millisecond
	// maxStreamIDs bounds the request ids a stream's name carries
	// (base64url of their JSON): longer ones are left out, and a
	// request whose replica is lost cannot then be answered.
	maxStreamIDs = 128
)

// ReplicaLostError says the replica that ran a request whose stream a
// client resumed elsewhere stopped logging it before its response: it
// was lost (killed, or cut off from the shared backend), and whether the
// call took effect there is unknown.
type ReplicaLostError struct {
	Replica string // how the lost replica named itself; "" if it never said
}

func (e *ReplicaLostError) Error() string {
	who := "the replica that ran it"
	if e.Replica != "" {
		who += " (" + e.Replica + ")"
	}
	return fmt.Sprintf("%s was lost before it answered (nothing came from it for %v): the request may or may not have taken effect there, and is not run again elsewhere", who, streamSilence)
}

// logRecord is an entry of a stream log, before it is sealed: an event of
// the stream, or a beat of the replica that runs its request.
type logRecord struct {
	Seq   int             `json:"seq,omitempty"`
	Msg   json.RawMessage `json:"msg,omitempty"`
	Final bool            `json:"final,omitempty"` // the request's response: the stream takes no more
	Beat  bool            `json:"beat,omitempty"`  // the replica still runs the request
	From  string          `json:"from"`            // the replica that wrote it
}

// streamName is the name of a stream, as its event ids carry it: n alone
// without a stream log; with one, "<n>.<replica>.<ids>", where replica is
// the origin of the replica that holds it and ids the base64url JSON of
// the ids of the requests it answers (none for the standalone stream,
// n = 0), so that any replica can find its log and answer its requests.
var streamName = regexp.MustCompile(`^([0-9]{1,9})\.([A-Za-z0-9_-]{12})\.([A-Za-z0-9_-]{0,` + strconv.Itoa(maxStreamIDs) + `})$`)

// StreamName names the n-th stream of the session on this replica,
// which answers the requests of ids (a JSON id, or an array of them for a
// batch; nil for the standalone stream, n = 0).
func (sess *Session) StreamName(n int, ids json.RawMessage) string {
	if sess.srv.opts.StreamLog == nil {
		return strconv.Itoa(n)
	}
	enc := base64.RawURLEncoding.EncodeToString(ids)
	if len(enc) > maxStreamIDs {
		enc = ""
	}
	return strconv.Itoa(n) + "." + sess.srv.origin + "." + enc
}

// OtherReplicasStream reports whether name (from Last-Event-ID) names a
// stream of the session that another replica holds: its standalone stream,
// which is not logged (it carries what each replica sends on its own), or
// a request's stream, which it logs, answering the requests of ids if its
// name carries them.
func (sess *Session) OtherReplicasStream(name string) (ids json.RawMessage, standalone, ok bool) {
	m := streamName.FindStringSubmatch(name)
	switch {
	case sess.srv.opts.StreamLog == nil || m == nil || m[2] == sess.srv.origin:
		return nil, false, false
	case m[1] == "0":
		return nil, true, true
	}
	ids, err := base64.RawURLEncoding.DecodeString(m[3])
	if err != nil || len(ids) > 0 && !json.Valid(ids) {
		return nil, false, true
	}
	return ids, false, true
}

// logKey is the key of a stream's log: its session and name.
func (sess *Session) logKey(stream string) string { return sess.id + ":" + stream }

// LogEvent logs the seq-th event of the session's stream (StreamName),
// msg, final when it is the response that ends the stream. It does not
// wait: entries are written in the background, in order. A stream that
// is not logged (no Options.StreamLog, the standalone stream) is left
// alone.
func (sess *Session) LogEvent(stream string, seq int, msg []byte, final bool) {
	if l := sess.logger(stream); l != nil {
		l.add(sess, stream, logRecord{Seq: seq, Msg: msg, Final: final})
	}
}

// logger returns the stream logger when the session's stream, named by
// StreamName, is one to log: a request's, with a stream log.
func (sess *Session) logger(stream string) *streamLogger {
	if l := sess.srv.streamLog; l != nil && !strings.HasPrefix(stream, "0.") {
		return l
	}
	return nil
}

// StartLog opens the log of the session's stream (StreamName) as it
// begins, naming this replica, which then beats in it until its response
// (LogEvent) or EndLog. It does not wait, as LogEvent.
func (sess *Session) StartLog(stream string) {
	if l := sess.logger(stream); l != nil {
		l.mu.Lock()
		l.open[sess.logKey(stream)] = time.Time{} // a beat at the next write
		l.mu.Unlock()
		l.signal()
	}
}

// Delivered says that the client took the whole of the session's stream,
// its response last: what of its log is not written yet is let go, since
// no client will resume it (a client that did not get what its
// connection was given gets the lost-replica error when it resumes
// elsewhere). Most streams are delivered before their log is written.
func (sess *Session) Delivered(stream string) {
	if l := sess.logger(stream); l != nil {
		key := sess.logKey(stream)
		l.mu.Lock()
		delete(l.open, key)
		l.delivered[key] = true
		l.mu.Unlock()
	}
}

// EndLog stops the beats of a stream that ended without its response (the
// session ended), so that a reader takes its request for lost.
func (sess *Session) EndLog(stream string) {
	if l := sess.srv.streamLog; l != nil {
		l.end(sess.logKey(stream))
	}
}

// ReplayLog calls each with the events of the session's stream that
// another replica logs (OtherReplicasStream), after the one of seq after, as they
// come, until its response: then it returns nil. It returns each's error,
// ctx's, the backend's, or a *ReplicaLostError when nothing came for
// streamSilence before the response; last is the seq of the last event
// passed to each (or after).
func (sess *Session) ReplayLog(ctx context.Context, stream string, after int, each func(seq int, msg []byte) error) (last int, err error) {
	srv := sess.srv
	key := sess.logKey(stream)
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var lost ReplicaLostError
	silence := time.AfterFunc(streamSilence, func() { stop(&lost) })
	defer silence.Stop()
	errDone := errors.New("the stream's response was replayed")
	last = after
	readErr := srv.opts.StreamLog.Read(ctx, key, func(entry []byte) {
		silence.Reset(streamSilence)
		var rec logRecord
		if err := srv.seal.openJSON("stream log", key, entry, &rec); err != nil {
			srv.log().Warn("an entry of a stream log is refused", "err", err)
			return
		}
		lost.Replica = rec.From
		switch {
		case rec.Beat, rec.Seq <= last || context.Cause(ctx) != nil:
		default:
			if err := each(rec.Seq, rec.Msg); err != nil {
				stop(err)
				return
			}
			last = rec.Seq
			if rec.Final {
				stop(errDone)
			}
		}
	})
	switch cause := context.Cause(ctx); {
	case cause == errDone:
		return last, nil
	case cause != nil:
		return last, cause
	default:
		return last, readErr
	}
}

// streamLogger writes the entries of the logged streams to the backend in
// the background, in order, in batches, and beats for the streams whose
// request still runs (Server.LogStreams runs it).
type streamLogger struct {
	srv  *Server
	wake chan struct{}

	mu      sync.Mutex
	pending []pendingEntry
	size    int // bytes of the pending entries' messages
	dropped int
	open    map[string]time.Time // logs whose request runs, by key: when last written (zero: never)
	// delivered are the logs whose streams their clients took whole
	// since the last take: their pending entries are not written.
	delivered map[string]bool
}

// pendingEntry is an entry to write to the log of key.
type pendingEntry struct {
	key string
	rec logRecord
}

func newStreamLogger(s *Server) *streamLogger {
	return &streamLogger{srv: s, wake: make(chan struct{}, 1), open: map[string]time.Time{}, delivered: map[string]bool{}}
}

// add queues rec for the log of sess's stream. It is encoded and sealed
// when it is written, off the request's path, and not at all when the
// stream is delivered first.
func (l *streamLogger) add(sess *Session, stream string, rec logRecord) {
	key := sess.logKey(stream)
	l.mu.Lock()
	switch {
	case rec.Final:
		delete(l.open, key)
	case l.size+len(rec.Msg) > maxPendingLog:
		l.dropped++
		l.mu.Unlock()
		return
	default:
		l.open[key] = time.Now()
	}
	l.pending = append(l.pending, pendingEntry{key, rec})
	l.size += len(rec.Msg)
	l.mu.Unlock()
	l.signal()
}

// signal wakes run.
func (l *streamLogger) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// end forgets an open log.
func (l *streamLogger) end(key string) {
	l.mu.Lock()
	delete(l.open, key)
	l.mu.Unlock()
}

// LogStreams writes the logged streams' events to Options.StreamLog, and
// beats for the requests this replica runs, until ctx ends. Without
// Options.StreamLog it returns at once.
func (s *Server) LogStreams(ctx context.Context) {
	if s.streamLog != nil {
		s.streamLog.run(ctx)
	}
}

// run writes what is queued, and the beats, until ctx ends.
func (l *streamLogger) run(ctx context.Context) {
	beats := time.NewTicker(streamBeat / 2)
	defer beats.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.wake:
			// What comes meanwhile goes in the same pipeline; a request
			// answered meanwhile needs no opening beat.
			time.Sleep(logBatchDelay)
		case <-beats.C:
		}
		entries, dropped := l.take()
		if dropped > 0 {
			l.srv.log().Warn("stream log entries dropped: the shared backend does not keep up", "dropped", dropped)
		}
		if len(entries) == 0 {
			continue
		}
		logs, batch := make([]string, 0, len(entries)), make([][]byte, 0, len(entries))
		for _, e := range entries {
			e.rec.From = l.srv.replica
			sealed, err := l.srv.seal.sealedJSON("stream log", e.key, e.rec)
			if err != nil {
				continue
			}
			logs, batch = append(logs, e.key), append(batch, sealed)
		}
		wctx, cancel := context.WithTimeout(ctx, sharedStoreTimeout)
		err := l.srv.opts.StreamLog.Append(wctx, logs, batch)
		cancel()
		if err != nil && ctx.Err() == nil {
			l.srv.log().Warn("writing the stream logs to the shared backend failed: streams of this replica resumed on another may end with an error", "entries", len(batch), "err", err)
		}
	}
}

// take returns the queued entries, with a beat for each open log not
// written for streamBeat, and how many were dropped since the last take.
func (l *streamLogger) take() (entries []pendingEntry, dropped int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.pending {
		if !l.delivered[e.key] {
			entries = append(entries, e)
		}
	}
	dropped = l.dropped
	l.pending, l.size, l.dropped = nil, 0, 0
	clear(l.delivered)
	now := time.Now()
	for key, at := range l.open {
		if now.Sub(at) < streamBeat {
			continue
		}
		entries = append(entries, pendingEntry{key, logRecord{Beat: true}})
		l.open[key] = now
	}
	return entries, dropped
}
