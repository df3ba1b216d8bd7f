package pdk

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcphost/mcphost/abi"
)

// ProtocolError returns an error that the PDK reports to the host as an ABI
// error: the export fails and the host answers the MCP request with a
// JSON-RPC error carrying code and message. Use it for errors in the request
// itself (abi.CodeInvalidParams, abi.CodeResourceNotFound).
//
// Any other error a tool handler returns is a tool execution error: the tool
// call succeeds with a result marked isError, so that the model sees the
// message. Any other error from a prompt, resource or completion handler
// becomes an internal error (abi.CodeInternalError).
func ProtocolError(code int, message string) error {
	return &abi.Error{Code: code, Message: message}
}

// InvalidParams returns a ProtocolError with code abi.CodeInvalidParams
// (-32602) and a formatted message.
func InvalidParams(format string, args ...any) error {
	return &abi.Error{Code: abi.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// ResourceNotFound returns a ProtocolError with code
// abi.CodeResourceNotFound (-32002) naming uri.
func ResourceNotFound(uri string) error {
	data, _ := json.Marshal(map[string]string{"uri": uri})
	return &abi.Error{Code: abi.CodeResourceNotFound, Message: "resource not found: " + uri, Data: data}
}

// protocolError returns the *abi.Error in err's chain, if any.
func protocolError(err error) (*abi.Error, bool) {
	var e *abi.Error
	if errors.As(err, &e) && e != nil {
		return e, true
	}
	return nil, false
}

// errorText is the Extism error text the PDK sets for err: an abi.Error as
// JSON, the code defaulting to abi.CodeInternalError.
func errorText(err error) string {
	e, ok := protocolError(err)
	if !ok {
		e = &abi.Error{Code: abi.CodeInternalError, Message: err.Error()}
	}
	b, merr := json.Marshal(e)
	if merr != nil {
		b, _ = json.Marshal(&abi.Error{Code: e.Code, Message: e.Message})
	}
	return string(b)
}

// panicError turns a recovered panic value into an error.
func panicError(r any) error {
	if err, ok := r.(error); ok {
		return fmt.Errorf("panic: %w", err)
	}
	return fmt.Errorf("panic: %v", r)
}
