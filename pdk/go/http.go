package pdk

import (
	"encoding/json"
	"errors"
)

// HTTPRequest is an HTTP request made through the Extism host (standard Go
// and TinyGo have no sockets under WASI).
type HTTPRequest struct {
	// Method is GET when empty.
	Method  string
	URL     string
	Headers map[string]string
	Body    []byte
}

// HTTPResponse is the response to an HTTPRequest.
type HTTPResponse struct {
	Status int
	// Headers holds the response headers (lower-case names) when the host
	// lets the plugin see them; nil otherwise.
	Headers map[string]string
	Body    []byte
}

// Fetch sends req through the Extism kernel (http_request). The host only
// lets requests through to the hosts the operator granted: declare them in
// the manifest's needs.hosts.
//
// A request that mcphost refuses or that fails (a host, port or scheme not
// granted, a private address, a connection, TLS or timeout error, a
// response over the size limit) returns an error whose message says why
// and, for a refusal, which grant in [plugins.NAME] would allow it; the
// plugin can handle it and go on. (The PDK exports abi.ExportHTTPErrors
// for that.) Other Extism hosts, such as hyper-mcp, fail the whole plugin
// call instead.
func Fetch(req HTTPRequest) (*HTTPResponse, error) {
	if req.URL == "" {
		return nil, errors.New("pdk: Fetch: empty URL")
	}
	if req.Method == "" {
		req.Method = "GET"
	}
	meta, err := allocJSON(struct {
		Method  string            `json:"method"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers,omitempty"`
	}{req.Method, req.URL, req.Headers})
	if err != nil {
		return nil, err
	}
	// The host frees the request and body blocks.
	offset := extHTTPRequest(meta, allocBytes(req.Body))
	resp := &HTTPResponse{Status: int(extHTTPStatusCode()), Body: takeBlock(offset)}
	if resp.Status == 0 {
		// No HTTP response has status 0: mcphost's answer to a request
		// that failed, with why as the body.
		if len(resp.Body) > 0 {
			return nil, errors.New(string(resp.Body))
		}
		return nil, errors.New("pdk: Fetch: no response from " + req.URL)
	}
	if h := extHTTPHeaders(); h != 0 {
		_ = json.Unmarshal(takeBlock(h), &resp.Headers)
	}
	return resp, nil
}
