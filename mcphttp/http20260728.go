package mcphttp

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

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/jsonrpc"
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

// metaProtocolVersion is the _meta key of a 2026-07-28 request's
// protocol version, which MCP-Protocol-Version mirrors.
const metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"

// post20260728 serves a POST whose body is one 2026-07-28 request:
// host.IsPerRequest, or any request when MCP-Protocol-Version names a
// version served per request. It reports false, having written nothing,
// for any other body.
func (h *Handler) post20260728(w http.ResponseWriter, r *http.Request, body []byte) bool {
	m, rpcErr := jsonrpc.Decode(body)
	if rpcErr != nil || m.IsNotification() || m.IsResponse() {
		return false
	}
	if !host.IsPerRequest(m.Method, m.Params) && !slices.Contains(host.PerRequestVersions(), r.Header.Get(headerVersion)) {
		return false
	}
	ep := endpointOf(r)
	if rpcErr := h.checkHeaders20260728(r, m, ep); rpcErr != nil {
		writeJSON(w, http.StatusBadRequest, jsonrpc.EncodeResponse(m.ID, nil, rpcErr))
		return true
	}
	reply := &reply20260728{w: w, rc: http.NewResponseController(w), answered: make(chan struct{})}
	end := h.srv.ServeRequest(h.requestContext(r.Context(), r), body, reply, ep.plugins)
	defer end() // cancels the request if the client left first
	select {
	case <-reply.answered:
	case <-r.Context().Done():
	}
	reply.end()
	return true
}

// checkHeaders20260728 checks a 2026-07-28 request's _meta, and that its
// headers mirror its body, including the x-mcp-header parameters of the
// tool it calls, as the endpoint ep finds it (a hidden tool is checked as
// an unknown one is). The headers are compared first, so that a version
// that differs from its header is a mismatch before it is unsupported.
func (h *Handler) checkHeaders20260728(r *http.Request, m *jsonrpc.Message, ep *endpoint) *jsonrpc.Error {
	var p struct {
		Meta      map[string]json.RawMessage `json:"_meta"`
		Name      *string                    `json:"name"`
		URI       *string                    `json:"uri"`
		TaskID    *string                    `json:"taskId"`
		Arguments json.RawMessage            `json:"arguments"`
	}
	if rpcErr := jsonrpc.DecodeParams(m.Params, &p); rpcErr != nil {
		return rpcErr
	}
	if raw, ok := p.Meta[metaProtocolVersion]; ok {
		var v string
		_ = json.Unmarshal(raw, &v)
		if rpcErr := headerMatches(r, headerVersion, v, false); rpcErr != nil {
			return rpcErr
		}
	}
	if rpcErr := host.CheckRequestMeta(m.Params); rpcErr != nil {
		return (*jsonrpc.Error)(rpcErr)
	}
	if rpcErr := headerMatches(r, headerMethod, m.Method, false); rpcErr != nil {
		return rpcErr
	}
	if field, ok := namedMethods[m.Method]; ok {
		name := map[string]*string{"name": p.Name, "uri": p.URI, "taskId": p.TaskID}[field]
		if name != nil {
			if rpcErr := headerMatches(r, headerName, *name, true); rpcErr != nil {
				return rpcErr
			}
		}
	}
	if m.Method == "tools/call" && p.Name != nil {
		if params, ok := h.srv.ToolHeaderParams(r.Context(), *p.Name, ep.plugins); ok {
			if rpcErr := checkHeaderParams(r, params, p.Arguments); rpcErr != nil {
				return rpcErr
			}
		}
	}
	return nil
}

// headerMatches checks that a request has the header and that it equals
// the body's value, decoded first from =?base64?…?= when encoded allows it.
func headerMatches(r *http.Request, header, body string, encoded bool) *jsonrpc.Error {
	var got string
	var rpcErr *jsonrpc.Error
	if encoded {
		got, rpcErr = headerValue(r, header)
	} else {
		got, rpcErr = oneHeader(r, header)
	}
	if rpcErr != nil {
		return rpcErr
	}
	if got != body {
		return jsonrpc.Errorf(host.CodeHeaderMismatch, "header mismatch: %s header value %q does not match body value %q", header, got, body)
	}
	return nil
}

// oneHeader returns the value of a header the request must have once.
func oneHeader(r *http.Request, header string) (string, *jsonrpc.Error) {
	values := r.Header.Values(header)
	if len(values) != 1 {
		return "", jsonrpc.Errorf(host.CodeHeaderMismatch, "header mismatch: the request must have one %s header, mirroring the body; it has %d", header, len(values))
	}
	return values[0], nil
}

// headerValue returns the value of a header that may be base64-encoded as
// =?base64?…?=, decoded; a value without both markers is literal.
func headerValue(r *http.Request, header string) (string, *jsonrpc.Error) {
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
		return "", jsonrpc.Errorf(host.CodeHeaderMismatch, "header mismatch: %s %q is not valid base64: %v", header, got, err)
	}
	return string(raw), nil
}

// reply20260728 writes the answer to one 2026-07-28 request: the response as a
// JSON body, or, once the request sends a notification first, an SSE
// stream of its messages that ends with the response.
type reply20260728 struct {
	w        http.ResponseWriter
	rc       *http.ResponseController
	answered chan struct{} // closed once the response is written or writing failed

	mu     sync.Mutex
	stream bool // the answer is an SSE stream
	over   bool // nothing more may be written: answered, or the handler returned
}

var errReplyOver = errors.New("the request's HTTP exchange is over")

func (mr *reply20260728) Send(msg []byte) error {
	mr.mu.Lock()
	defer mr.mu.Unlock()
	if mr.over {
		return errReplyOver
	}
	final := isResponse(msg)
	var err error
	if final && !mr.stream {
		writeJSON(mr.w, status20260728(msg), msg)
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
func (mr *reply20260728) end() {
	mr.mu.Lock()
	mr.over = true
	mr.mu.Unlock()
}

// status20260728 is the HTTP status of a response to a 2026-07-28 request: 404
// for method not found, 400 for the errors 2026-07-28 sends with it, else
// 200.
func status20260728(msg []byte) int {
	var m struct {
		Error *jsonrpc.Error `json:"error"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Error == nil {
		return http.StatusOK
	}
	switch m.Error.Code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case host.CodeHeaderMismatch, host.CodeMissingClientCapability, host.CodeUnsupportedProtocolVersion:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// notAllowed20260728 answers 405 to a GET or DELETE from a client that says
// it speaks 2026-07-28 and names no session: that revision has neither a
// GET stream nor sessions to end. It reports whether it answered.
func notAllowed20260728(w http.ResponseWriter, r *http.Request) bool {
	v := r.Header.Get(headerVersion)
	if r.Header.Get(headerSessionID) != "" || !slices.Contains(host.PerRequestVersions(), v) {
		return false
	}
	w.Header().Set("Allow", http.MethodPost)
	writeRPCError(w, http.StatusMethodNotAllowed, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "method not allowed: protocol version %s has no %s at this endpoint; send each request with POST", v, r.Method))
	return true
}
