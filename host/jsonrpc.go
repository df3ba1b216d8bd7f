package host

import (
	"encoding/json"
	"fmt"

	"github.com/mcphost/mcphost/internal/jsonrpc"
)

// JSON-RPC 2.0 and MCP error codes.
const (
	CodeParseError       = jsonrpc.CodeParseError
	CodeInvalidRequest   = jsonrpc.CodeInvalidRequest
	CodeMethodNotFound   = jsonrpc.CodeMethodNotFound
	CodeInvalidParams    = jsonrpc.CodeInvalidParams
	CodeInternalError    = jsonrpc.CodeInternalError
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
func (e *RPCError) Error() string { return (*jsonrpc.Error)(e).Error() }

func rpcErrorf(code int, format string, args ...any) *RPCError {
	return &RPCError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// message is any JSON-RPC 2.0 message: request, notification or response.
type message = jsonrpc.Message

// decodeMessage parses and checks one JSON-RPC message (jsonrpc.Decode).
func decodeMessage(raw []byte) (*message, *RPCError) {
	m, err := jsonrpc.Decode(raw)
	return m, (*RPCError)(err)
}

// encodeResponse builds a response to the request with the given id.
func encodeResponse(id json.RawMessage, result any, rpcErr *RPCError) []byte {
	return jsonrpc.EncodeResponse(id, result, (*jsonrpc.Error)(rpcErr))
}

// encodeNotification builds a notification message.
func encodeNotification(method string, params any) []byte {
	return jsonrpc.EncodeNotification(method, params)
}

// decodeParams decodes request params into v, mapping failures to
// CodeInvalidParams. Absent params decode as an empty object.
func decodeParams(params json.RawMessage, v any) *RPCError {
	return (*RPCError)(jsonrpc.DecodeParams(params, v))
}
