// Package jsonrpc is the JSON-RPC 2.0 codec of mcphost: it decodes and
// checks one message, and encodes responses and notifications. It knows
// nothing of MCP; the engine (host) and the HTTP transport (mcphttp) share
// it.
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// The error codes JSON-RPC 2.0 defines.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// Error is a JSON-RPC error object.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error implements the error interface.
func (e *Error) Error() string { return fmt.Sprintf("%s (%d)", e.Message, e.Code) }

// Errorf returns an error object of code with a formatted message.
func Errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Message is any JSON-RPC 2.0 message: request, notification or response.
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// IsNotification reports whether m is a notification (a method, no id).
func (m *Message) IsNotification() bool { return m.Method != "" && m.ID == nil }

// IsResponse reports whether m is a response (a result or an error, no
// method).
func (m *Message) IsResponse() bool { return m.Method == "" && (m.Result != nil || m.Error != nil) }

// NullID is the id of a response to a message whose id could not be read.
var NullID = json.RawMessage("null")

// ResponseID returns the id of msg, a message the server encoded, when it
// is a response, and ok false when it is a request or a notification. It
// reads only up to the member that tells: "method", or "result" or "error".
func ResponseID(msg []byte) (id json.RawMessage, ok bool) {
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

// Decode parses and checks one JSON-RPC message. On failure it returns the
// error to send and, when the message could be read, the message, whose
// ID is the id to send it with.
func Decode(raw []byte) (*Message, *Error) {
	var m Message
	if err := json.Unmarshal(raw, &m); err != nil {
		if _, ok := err.(*json.UnmarshalTypeError); ok || json.Valid(raw) {
			return nil, Errorf(CodeInvalidRequest, "invalid request: %v", err)
		}
		return nil, Errorf(CodeParseError, "parse error: %v", err)
	}
	if m.JSONRPC != "2.0" {
		return &m, Errorf(CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	if m.ID != nil && !validID(m.ID) {
		m.ID = NullID // answered with "id": null
		return &m, Errorf(CodeInvalidRequest, "invalid request: id must be a string or an integer")
	}
	if m.Method == "" && !m.IsResponse() {
		return &m, Errorf(CodeInvalidRequest, `invalid request: "method" is missing`)
	}
	if len(m.Params) > 0 && m.Params[0] != '{' && !bytes.Equal(m.Params, NullID) {
		if m.IsNotification() {
			return &m, nil // notifications with bad params are ignored by their handlers
		}
		return &m, Errorf(CodeInvalidParams, "invalid params: params must be an object")
	}
	return &m, nil
}

// validID reports whether id, a JSON value as Decode read it, is a string
// or an integer that fits an int64 (a number with a fraction or an
// exponent is not). Decode has checked that it is JSON, so a value that
// opens with a quote is a string.
func validID(id json.RawMessage) bool {
	id = bytes.TrimSpace(id)
	if len(id) > 0 && id[0] == '"' {
		return true
	}
	_, err := strconv.ParseInt(string(id), 10, 64)
	return err == nil
}

// EncodeResponse builds a response to the request with the given id (nil:
// null), with result or, when e is not nil, the error e. The result is
// encoded once, straight into the response: the id was checked by Decode
// and is copied as it came.
func EncodeResponse(id json.RawMessage, result any, e *Error) []byte {
	if id == nil {
		id = NullID
	}
	var body []byte
	if e == nil {
		raw, err := json.Marshal(result)
		if err != nil {
			e = Errorf(CodeInternalError, "internal error: encoding result: %v", err)
		}
		body = raw
	}
	key := `,"result":`
	if e != nil {
		key = `,"error":`
		body, _ = json.Marshal(e)
	}
	out := make([]byte, 0, len(`{"jsonrpc":"2.0","id":`)+len(id)+len(key)+len(body)+1)
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, id...)
	out = append(out, key...)
	out = append(out, body...)
	return append(out, '}')
}

// EncodeNotification builds a notification message.
func EncodeNotification(method string, params any) []byte {
	raw, _ := json.Marshal(params)
	out, _ := json.Marshal(Message{JSONRPC: "2.0", Method: method, Params: raw})
	return out
}

// DecodeParams decodes request params into v; a failure is invalid params.
// Absent or null params decode as an empty object.
func DecodeParams(params json.RawMessage, v any) *Error {
	if len(params) == 0 || bytes.Equal(params, NullID) {
		params = json.RawMessage("{}")
	}
	if err := json.Unmarshal(params, v); err != nil {
		return Errorf(CodeInvalidParams, "invalid params: %v", err)
	}
	return nil
}
