package host

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Streamable HTTP for 2026-07-28 requests: each POST is served on its own,
// with no session (no Mcp-Session-Id is minted, and one sent is ignored).
// The headers must mirror the body: MCP-Protocol-Version its _meta
// version, Mcp-Method its method and, for tools/call, prompts/get and
// resources/read, Mcp-Name its name or URI (plain or =?base64?…?=); a
// missing or different header is 400 with HeaderMismatch (-32020). Request
// errors map to HTTP statuses: method not found 404; malformed _meta,
// unsupported version and missing client capability 400. The answer is one
// application/json body, unless the request sends notifications (progress,
// log messages) first: then it is an SSE stream of those that ends with the
// response. Closing the connection cancels the request; nothing is
// resumable. GET and DELETE from a 2026-07-28 client that names no session
// get 405.

// Request headers of 2026-07-28 that mirror the body.
const (
	headerMethod = "Mcp-Method"
	headerName   = "Mcp-Name"
)

// namedMethods are the methods whose params.name or params.uri is mirrored
// in Mcp-Name, and the params field it comes from.
var namedMethods = map[string]string{
	"tools/call": "name", "prompts/get": "name", "resources/read": "uri",
	"tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId",
}

// modernPOST serves a POST whose body is one 2026-07-28 request: isModern,
// or any request when MCP-Protocol-Version names a modern version. It
// reports false, having written nothing, for any other body.
func (h *HTTPHandler) modernPOST(w http.ResponseWriter, r *http.Request, body []byte) bool {
	m, rpcErr := decodeMessage(body)
	if rpcErr != nil || m.IsNotification() || m.IsResponse() {
		return false
	}
	if !isModern(m) && !slices.Contains(modernVersions, r.Header.Get(headerVersion)) {
		return false
	}
	era, rpcErr := checkModernHeaders(r, m, h.srv.Catalog(), h.viewOf(r))
	if rpcErr != nil {
		writeJSON(w, http.StatusBadRequest, encodeResponse(m.ID, nil, rpcErr))
		return true
	}
	reply := &modernReply{w: w, rc: http.NewResponseController(w), answered: make(chan struct{})}
	c := h.srv.newConn(reply, endpointOf(r))
	defer c.close() // cancels the request if the client left first
	if resp := c.serve(r.Context(), m, era, reply, nil); resp != nil {
		_ = reply.Send(resp)
	}
	select {
	case <-reply.answered:
	case <-r.Context().Done():
	}
	reply.end()
	return true
}

// checkModernHeaders checks a modern request's _meta, and that its headers
// mirror its body, including the x-mcp-header parameters of the catalog's
// tools that v sees (a hidden tool is checked as an unknown one is, when
// it is called). The headers are compared first, so that a version that
// differs from its header is a mismatch before it is unsupported.
func checkModernHeaders(r *http.Request, m *message, c *Catalog, v view) (*era20260728, *RPCError) {
	var p struct {
		requestMeta
		Name      *string         `json:"name"`
		URI       *string         `json:"uri"`
		TaskID    *string         `json:"taskId"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if rpcErr := decodeParams(m.Params, &p); rpcErr != nil {
		return nil, rpcErr
	}
	if raw, ok := p.Meta[metaProtocolVersion]; ok {
		var v string
		_ = json.Unmarshal(raw, &v)
		if rpcErr := headerMatches(r, headerVersion, v, false); rpcErr != nil {
			return nil, rpcErr
		}
	}
	era, rpcErr := readModern(m.Params)
	if rpcErr != nil {
		return nil, rpcErr
	}
	if rpcErr := headerMatches(r, headerMethod, m.Method, false); rpcErr != nil {
		return nil, rpcErr
	}
	if field, ok := namedMethods[m.Method]; ok {
		name := map[string]*string{"name": p.Name, "uri": p.URI, "taskId": p.TaskID}[field]
		if name != nil {
			if rpcErr := headerMatches(r, headerName, *name, true); rpcErr != nil {
				return nil, rpcErr
			}
		}
	}
	if m.Method == "tools/call" && p.Name != nil {
		if e, ok := c.tool(*p.Name, v); ok {
			if rpcErr := checkHeaderParams(r, e.headerParams, p.Arguments); rpcErr != nil {
				return nil, rpcErr
			}
		}
	}
	return era, nil
}

// headerMatches checks that a request has the header and that it equals
// the body's value, decoded first from =?base64?…?= when encoded allows it.
func headerMatches(r *http.Request, header, body string, encoded bool) *RPCError {
	var got string
	var rpcErr *RPCError
	if encoded {
		got, rpcErr = headerValue(r, header)
	} else {
		got, rpcErr = oneHeader(r, header)
	}
	if rpcErr != nil {
		return rpcErr
	}
	if got != body {
		return rpcErrorf(CodeHeaderMismatch, "header mismatch: %s header value %q does not match body value %q", header, got, body)
	}
	return nil
}

// oneHeader returns the value of a header the request must have once.
func oneHeader(r *http.Request, header string) (string, *RPCError) {
	values := r.Header.Values(header)
	if len(values) != 1 {
		return "", rpcErrorf(CodeHeaderMismatch, "header mismatch: the request must have one %s header, mirroring the body; it has %d", header, len(values))
	}
	return values[0], nil
}

// headerValue returns the value of a header that may be base64-encoded as
// =?base64?…?=, decoded; a value without both markers is literal.
func headerValue(r *http.Request, header string) (string, *RPCError) {
	got, rpcErr := oneHeader(r, header)
	if rpcErr != nil {
		return "", rpcErr
	}
	inner, ok := strings.CutPrefix(got, "=?base64?")
	if !ok || !strings.HasSuffix(inner, "?=") {
		return got, nil
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(inner, "?="))
	if err != nil {
		return "", rpcErrorf(CodeHeaderMismatch, "header mismatch: %s %q is not valid base64: %v", header, got, err)
	}
	return string(raw), nil
}

// modernReply writes the answer to one modern request: the response as a
// JSON body, or, once the request sends a notification first, an SSE
// stream of its messages that ends with the response.
type modernReply struct {
	w        http.ResponseWriter
	rc       *http.ResponseController
	answered chan struct{} // closed once the response is written or writing failed

	mu     sync.Mutex
	stream bool // the answer is an SSE stream
	over   bool // nothing more may be written: answered, or the handler returned
}

var errReplyOver = errors.New("the request's HTTP exchange is over")

func (mr *modernReply) Send(msg []byte) error {
	mr.mu.Lock()
	defer mr.mu.Unlock()
	if mr.over {
		return errReplyOver
	}
	final := isResponse(msg)
	var err error
	if final && !mr.stream {
		writeJSON(mr.w, modernStatus(msg), msg)
	} else {
		if !mr.stream {
			mr.stream = true
			mr.w.Header().Set("Content-Type", "text/event-stream")
			mr.w.Header().Set("Cache-Control", "no-cache")
			mr.w.Header().Set("X-Accel-Buffering", "no")
			mr.w.WriteHeader(http.StatusOK)
		}
		_ = mr.rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
		if _, err = fmt.Fprintf(mr.w, "event: message\ndata: %s\n\n", msg); err == nil {
			err = mr.rc.Flush()
		}
	}
	if final || err != nil {
		mr.over = true
		close(mr.answered)
	}
	return err
}

// end forbids further writes: the handler is returning.
func (mr *modernReply) end() {
	mr.mu.Lock()
	mr.over = true
	mr.mu.Unlock()
}

// modernStatus is the HTTP status of a response to a modern request: 404
// for method not found, 400 for the errors 2026-07-28 sends with it, else
// 200.
func modernStatus(msg []byte) int {
	var m struct {
		Error *RPCError `json:"error"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Error == nil {
		return http.StatusOK
	}
	switch m.Error.Code {
	case CodeMethodNotFound:
		return http.StatusNotFound
	case CodeHeaderMismatch, CodeMissingClientCapability, CodeUnsupportedProtocolVersion:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// modernNotAllowed answers 405 to a GET or DELETE from a client that says
// it speaks 2026-07-28 and names no session: that revision has neither a
// GET stream nor sessions to end. It reports whether it answered.
func modernNotAllowed(w http.ResponseWriter, r *http.Request) bool {
	v := r.Header.Get(headerVersion)
	if r.Header.Get(headerSessionID) != "" || !slices.Contains(modernVersions, v) {
		return false
	}
	w.Header().Set("Allow", http.MethodPost)
	writeRPCError(w, http.StatusMethodNotAllowed, rpcErrorf(CodeInvalidRequest, "method not allowed: protocol version %s has no %s at this endpoint; send each request with POST", v, r.Method))
	return true
}
