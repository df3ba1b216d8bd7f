package mcphttp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/jsonrpc"
)

// Streamable HTTP (2025-03-26 and later) at /mcp:
//
//   - POST carries one client message, or a batch in sessions on 2025-03-26.
//     Notifications and responses get 202 Accepted with no body. A request
//     to a method in streamingMethods is answered with an SSE stream that
//     carries the messages the request causes (progress, logging, requests
//     to the client) and ends with its response; any other request gets its
//     response as one application/json body, and anything else it causes
//     goes to the standalone stream. A batch is answered with a stream when
//     one of its requests would be.
//   - initialize, sent without a session id, starts a session; its response
//     carries the session id in Mcp-Session-Id, which every later request
//     must send (400 without, 404 once the session has ended).
//   - GET opens the session's standalone stream, which carries the messages
//     the server sends on its own; one at a time (409). With Last-Event-ID
//     it resumes the stream the id names, standalone or POST, after that
//     event.
//   - DELETE ends the session.
//   - MCP-Protocol-Version, when sent, must be a supported version (400
//     otherwise); the version the session negotiated still governs it.

// streamingMethods are the requests answered with an SSE stream: those that
// run plugin code, which can send progress, log messages and requests to the
// client while the request runs.
var streamingMethods = map[string]bool{
	"tools/call":          true,
	"prompts/get":         true,
	"resources/read":      true,
	"completion/complete": true,
	"tasks/result":        true, // carries the requests of input_required tasks
}

var missingSessionID = jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "bad request: missing session id (the %s header; sessionId on /messages)", headerSessionID)

func (h *Handler) postMCP(w http.ResponseWriter, r *http.Request) {
	if !accepts(r, "application/json", "text/event-stream") {
		writeRPCError(w, http.StatusNotAcceptable, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "not acceptable: Accept must list application/json and text/event-stream"))
		return
	}
	body, ok := h.readBody(w, r)
	if !ok || h.post20260728(w, r, body) {
		return
	}
	if r.Header.Get(headerSessionID) == "" {
		h.initialize(w, r, body)
		return
	}
	hs := h.session(w, r)
	if hs == nil {
		return
	}
	defer h.release(hs)
	k, ok := h.classify(w, body, hs.sess.Version())
	switch {
	case !ok:
	case k.stream:
		st := hs.newStream(k.ids)
		if h.handOver(w, r, hs, body, st, true) {
			h.serveStream(w, r, hs, st, 0)
		} else {
			hs.removeStream(st)
		}
	case k.requests:
		if msg, ok := h.awaitJSON(w, r, hs, body); ok {
			writeJSON(w, http.StatusOK, msg)
		}
	default:
		if h.handOver(w, r, hs, body, hs.standalone, false) {
			w.WriteHeader(http.StatusAccepted)
		}
	}
}

// initialize starts a session with an initialize request. The session is
// kept, and its id sent, only when initialize succeeds.
func (h *Handler) initialize(w http.ResponseWriter, r *http.Request, body []byte) {
	k, ok := h.classify(w, body, "")
	switch {
	case !ok:
		return
	case !k.init:
		writeRPCError(w, http.StatusBadRequest, missingSessionID)
		return
	}
	if rpcErr := versionError(r); rpcErr != nil {
		writeRPCError(w, http.StatusBadRequest, rpcErr)
		return
	}
	hs, err := h.newSession(r, false)
	if err != nil {
		writeRPCError(w, http.StatusServiceUnavailable, jsonrpc.Errorf(jsonrpc.CodeInternalError, "%v", err))
		return
	}
	defer h.release(hs)
	msg, ok := h.awaitJSON(w, r, hs, body)
	var m jsonrpc.Message
	if !ok || json.Unmarshal(msg, &m) != nil || m.Error != nil {
		h.end(hs)
	} else {
		w.Header().Set(headerSessionID, hs.id)
		h.log.Debug("HTTP session started", "protocolVersion", hs.sess.Version())
	}
	if ok {
		writeJSON(w, http.StatusOK, msg)
	}
}

// awaitJSON hands a request to the session and waits for its response.
// Other messages the request causes go to the standalone stream. When the
// session ends first it answers 404; when the client leaves, nothing.
func (h *Handler) awaitJSON(w http.ResponseWriter, r *http.Request, hs *httpSession, body []byte) ([]byte, bool) {
	reply := &jsonReply{standalone: hs.standalone, resp: make(chan []byte, 1)}
	if !h.handOver(w, r, hs, body, reply, true) {
		return nil, false
	}
	select {
	case msg := <-reply.resp:
		return msg, true
	case <-hs.done:
		http.Error(w, "session not found: it ended", http.StatusNotFound)
	case <-r.Context().Done():
	}
	return nil, false
}

// jsonReply takes the response to a request answered with JSON; anything
// else goes to the standalone stream.
type jsonReply struct {
	standalone *eventStream
	resp       chan []byte
}

func (j *jsonReply) Send(msg []byte) error {
	if isResponse(msg) {
		select {
		case j.resp <- msg:
			return nil
		default:
		}
	}
	return j.standalone.Send(msg)
}

func (h *Handler) getMCP(w http.ResponseWriter, r *http.Request) {
	if notAllowed20260728(w, r) {
		return
	}
	if !accepts(r, "text/event-stream") {
		writeRPCError(w, http.StatusNotAcceptable, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "not acceptable: Accept must list text/event-stream"))
		return
	}
	hs := h.session(w, r)
	if hs == nil {
		return
	}
	defer h.release(hs)
	st, from := hs.standalone, -1
	if last := r.Header.Get(headerLastEventID); last != "" {
		name, seq, ok := parseEventID(last)
		ids, standalone, elsewhere := hs.sess.OtherReplicasStream(name)
		switch {
		case !ok:
			st = nil
		case elsewhere && standalone:
			// Another replica's standalone stream: what this one sends
			// on its own goes on here.
		case elsewhere:
			h.replayStream(w, r, hs, name, ids, seq)
			return
		default:
			st, from = hs.resume(name), seq
		}
		if st == nil {
			writeRPCError(w, http.StatusBadRequest, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "bad request: %s %q names no stream of this session that can be resumed", headerLastEventID, last))
			return
		}
	}
	h.serveStream(w, r, hs, st, from)
}

func (h *Handler) deleteMCP(w http.ResponseWriter, r *http.Request) {
	if notAllowed20260728(w, r) {
		return
	}
	hs := h.session(w, r)
	if hs == nil {
		return
	}
	defer h.release(hs)
	h.end(hs)
	w.WriteHeader(http.StatusNoContent)
}

// session finds the session a Streamable HTTP request names and checks its
// protocol version header. When it cannot, it answers the request and
// returns nil.
func (h *Handler) session(w http.ResponseWriter, r *http.Request) *httpSession {
	hs := h.acquire(w, r, r.Header.Get(headerSessionID), false)
	if hs == nil {
		return nil
	}
	if rpcErr := versionError(r); rpcErr != nil {
		h.release(hs)
		writeRPCError(w, http.StatusBadRequest, rpcErr)
		return nil
	}
	return hs
}

// versionError applies the MCP-Protocol-Version rule: a version mcphost
// does not support is refused. A supported version other than the
// session's is accepted, as the spec asks only for the first (the official
// conformance suite sends 2025-03-26 on 2025-11-25 sessions); the session's
// negotiated version governs either way.
func versionError(r *http.Request) *jsonrpc.Error {
	v := r.Header.Get(headerVersion)
	if v != "" && !slices.Contains(host.SupportedVersions(), v) {
		return jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "bad request: unsupported %s %q (supported: %s)", headerVersion, v, strings.Join(host.SupportedVersions(), ", "))
	}
	return nil
}

// postKind is what a POST body holds.
type postKind struct {
	requests bool            // requests, to be answered
	stream   bool            // a request answered with an SSE stream
	init     bool            // an initialize request
	ids      json.RawMessage // of the requests: one, or an array of a batch's
}

// classify reads what a POST body holds, for a session on version. An
// invalid message, a batch outside 2025-03-26 and a batched initialize are
// refused with 400.
func (h *Handler) classify(w http.ResponseWriter, body []byte, version string) (postKind, bool) {
	k, rpcErr := classifyBody(body, version)
	if rpcErr != nil {
		writeRPCError(w, http.StatusBadRequest, rpcErr)
		return k, false
	}
	return k, true
}

func classifyBody(body []byte, version string) (postKind, *jsonrpc.Error) {
	items := []json.RawMessage{body}
	if bytes.HasPrefix(body, []byte("[")) {
		items = nil // decoding into body's own bytes would overwrite them
		if version != host.Version20250326 {
			return postKind{}, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "invalid request: JSON-RPC batches are only accepted on protocol version %s (this session: %q)", host.Version20250326, version)
		}
		if err := json.Unmarshal(body, &items); err != nil {
			return postKind{}, jsonrpc.Errorf(jsonrpc.CodeParseError, "parse error: %v", err)
		}
		if len(items) == 0 {
			return postKind{}, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "invalid request: empty batch")
		}
	}
	var k postKind
	var ids []json.RawMessage
	for _, item := range items {
		m, rpcErr := jsonrpc.Decode(item)
		switch {
		case rpcErr != nil:
			return postKind{}, rpcErr
		case m.IsNotification() || m.IsResponse():
			continue
		case m.Method == "initialize" && len(items) > 1:
			return postKind{}, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "invalid request: initialize must not be batched")
		}
		k.requests = true
		k.stream = k.stream || streamingMethods[m.Method]
		k.init = m.Method == "initialize"
		ids = append(ids, m.ID)
	}
	switch {
	case body[0] == '[':
		k.ids, _ = json.Marshal(ids)
	case len(ids) == 1:
		k.ids = ids[0]
	}
	return k, nil
}
