package host

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// JSON-RPC 2.0 and MCP error codes.
const (
	CodeParseError       = -32700
	CodeInvalidRequest   = -32600
	CodeMethodNotFound   = -32601
	CodeInvalidParams    = -32602
	CodeInternalError    = -32603
	CodeResourceNotFound = -32002 // up to 2025-11-25; -32602 in 2026-07-28

	CodeHeaderMismatch             = -32020
	CodeMissingClientCapability    = -32021
	CodeUnsupportedProtocolVersion = -32022
)

// RPCError is a JSON-RPC error object. Handlers return it to choose the code
// the client sees; any other error becomes CodeInternalError.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error implements the error interface.
func (e *RPCError) Error() string { return fmt.Sprintf("%s (%d)", e.Message, e.Code) }

func rpcErrorf(code int, format string, args ...any) *RPCError {
	return &RPCError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// message is any JSON-RPC 2.0 message: request, notification or response.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// responseID returns the id of msg, a message the server encoded, when it
// is a response, and ok false when it is a request or a notification. It
// reads only up to the member that tells: "method", or "result" or "error".
func responseID(msg []byte) (id json.RawMessage, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(msg))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, false
		}
		switch key {
		case "method":
			return nil, false
		case "result", "error":
			return id, true
		case "id":
			if dec.Decode(&id) != nil {
				return nil, false
			}
		default:
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil, false
			}
		}
	}
	return nil, false
}

// isNotification reports whether m is a notification (a method, no id).
func (m *message) isNotification() bool { return m.Method != "" && m.ID == nil }

// isResponse reports whether m answers a request the server sent.
func (m *message) isResponse() bool { return m.Method == "" && (m.Result != nil || m.Error != nil) }

// nullID is the id of a response to a message whose id could not be read.
var nullID = json.RawMessage("null")

// decodeMessage parses and checks one JSON-RPC message. On failure it
// returns the error to send and the id to send it with.
func decodeMessage(raw []byte) (*message, *RPCError) {
	var m message
	if err := json.Unmarshal(raw, &m); err != nil {
		if _, ok := err.(*json.UnmarshalTypeError); ok || json.Valid(raw) {
			return nil, rpcErrorf(CodeInvalidRequest, "invalid request: %v", err)
		}
		return nil, rpcErrorf(CodeParseError, "parse error: %v", err)
	}
	if m.JSONRPC != "2.0" {
		return &m, rpcErrorf(CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	if m.ID != nil && !validID(m.ID) {
		m.ID = nullID // answered with "id": null
		return &m, rpcErrorf(CodeInvalidRequest, "invalid request: id must be a string or an integer")
	}
	if m.Method == "" && !m.isResponse() {
		return &m, rpcErrorf(CodeInvalidRequest, `invalid request: "method" is missing`)
	}
	if len(m.Params) > 0 && m.Params[0] != '{' && !bytes.Equal(m.Params, nullID) {
		if m.isNotification() {
			return &m, nil // notifications with bad params are ignored by their handlers
		}
		return &m, rpcErrorf(CodeInvalidParams, "invalid params: params must be an object")
	}
	return &m, nil
}

// validID reports whether id is a JSON string or an integer.
func validID(id json.RawMessage) bool {
	var v any
	d := json.NewDecoder(bytes.NewReader(id))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return false
	}
	switch v := v.(type) {
	case string:
		return true
	case json.Number:
		_, err := v.Int64()
		return err == nil
	}
	return false
}

// encodeResponse builds a response to the request with the given id. The
// result is encoded once, straight into the response: the id was checked
// by decodeMessage and is copied as it came.
func encodeResponse(id json.RawMessage, result any, rpcErr *RPCError) []byte {
	if id == nil {
		id = nullID
	}
	var body []byte
	if rpcErr == nil {
		raw, err := json.Marshal(result)
		if err != nil {
			rpcErr = rpcErrorf(CodeInternalError, "internal error: encoding result: %v", err)
		}
		body = raw
	}
	key := `,"result":`
	if rpcErr != nil {
		key = `,"error":`
		body, _ = json.Marshal(rpcErr)
	}
	out := make([]byte, 0, len(`{"jsonrpc":"2.0","id":`)+len(id)+len(key)+len(body)+1)
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, id...)
	out = append(out, key...)
	out = append(out, body...)
	return append(out, '}')
}

// encodeNotification builds a notification message.
func encodeNotification(method string, params any) []byte {
	raw, _ := json.Marshal(params)
	out, _ := json.Marshal(message{JSONRPC: "2.0", Method: method, Params: raw})
	return out
}

// decodeParams decodes request params into v, mapping failures to
// CodeInvalidParams. Absent params decode as an empty object.
func decodeParams(params json.RawMessage, v any) *RPCError {
	if len(params) == 0 || bytes.Equal(params, nullID) {
		params = json.RawMessage("{}")
	}
	if err := json.Unmarshal(params, v); err != nil {
		return rpcErrorf(CodeInvalidParams, "invalid params: %v", err)
	}
	return nil
}
