package mcphttp

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/jsonrpc"
)

// x-mcp-header (2026-07-28, Streamable HTTP): a tool's inputSchema may
// mark parameters whose values clients mirror in Mcp-Param-{Name} headers,
// so intermediaries can route on them (host.HeaderParam). The transport
// checks the mirror against the arguments: a value in the body needs its
// header, equal to it.

// headerParamPrefix begins the headers that mirror tool parameters.
const headerParamPrefix = "Mcp-Param-"

// checkHeaderParams checks the Mcp-Param headers of a tools/call against
// the arguments, for the parameters its tool marks.
func checkHeaderParams(r *http.Request, params []host.HeaderParam, args json.RawMessage) *jsonrpc.Error {
	var root any
	if len(params) == 0 || json.Unmarshal(args, &root) != nil {
		return nil
	}
	for _, p := range params {
		v := root
		for _, key := range p.Path {
			obj, _ := v.(map[string]any)
			v = obj[key]
		}
		header := headerParamPrefix + p.Name
		if v == nil {
			continue // absent or null: no header expected
		}
		got, rpcErr := headerValue(r, header)
		if rpcErr != nil {
			return rpcErr
		}
		if !sameParam(v, got) {
			return jsonrpc.Errorf(host.CodeHeaderMismatch, "header mismatch: %s header value %q does not match the body's argument %v", header, got, v)
		}
	}
	return nil
}

// sameParam reports whether a header value mirrors an argument: a string
// as is, a boolean as true or false, a number compared as a number.
func sameParam(v any, header string) bool {
	switch v := v.(type) {
	case string:
		return header == v
	case bool:
		return header == strconv.FormatBool(v)
	case float64:
		n, err := strconv.ParseFloat(header, 64)
		return err == nil && n == v
	}
	return false
}
