package host

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// x-mcp-header (2026-07-28, Streamable HTTP): a tool's inputSchema may
// mark parameters whose values clients mirror in Mcp-Param-{Name} headers,
// so intermediaries can route on them. mcphost checks the mirror against
// the arguments: a value in the body needs its header, equal to it.

// headerParamPrefix begins the headers that mirror tool parameters.
const headerParamPrefix = "Mcp-Param-"

// headerParam is one parameter mirrored in a header: the header name
// suffix, and the chain of properties keys that leads to it.
type headerParam struct {
	name string
	path []string
}

// headerParams returns the parameters of an inputSchema marked with
// x-mcp-header. Only properties statically reachable from the root (a chain
// of properties keys) count: an annotation under items, a composition, a
// condition or a $ref marks nothing.
func headerParams(schema json.RawMessage) []headerParam {
	var root map[string]any
	if json.Unmarshal(schema, &root) != nil {
		return nil
	}
	var out []headerParam
	var walk func(s map[string]any, path []string)
	walk = func(s map[string]any, path []string) {
		props, _ := s["properties"].(map[string]any)
		for key, v := range props {
			prop, ok := v.(map[string]any)
			if !ok {
				continue
			}
			at := append(path[:len(path):len(path)], key)
			if name, ok := prop["x-mcp-header"].(string); ok && name != "" {
				out = append(out, headerParam{name: name, path: at})
			}
			walk(prop, at)
		}
	}
	walk(root, nil)
	return out
}

// checkHeaderParams checks the Mcp-Param headers of a tools/call against
// the arguments, for the parameters its tool marks.
func checkHeaderParams(r *http.Request, params []headerParam, args json.RawMessage) *RPCError {
	var root any
	if len(params) == 0 || json.Unmarshal(args, &root) != nil {
		return nil
	}
	for _, p := range params {
		v := root
		for _, key := range p.path {
			obj, _ := v.(map[string]any)
			v = obj[key]
		}
		header := headerParamPrefix + p.name
		if v == nil {
			continue // absent or null: no header expected
		}
		got, rpcErr := headerValue(r, header)
		if rpcErr != nil {
			return rpcErr
		}
		if !sameParam(v, got) {
			return rpcErrorf(CodeHeaderMismatch, "header mismatch: %s header value %q does not match the body's argument %v", header, got, v)
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
