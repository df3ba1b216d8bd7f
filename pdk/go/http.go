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
// the manifest's needs.hosts. A request to a host not granted, or one that
// fails on the network, aborts the whole plugin call (the Extism host traps
// rather than returning an error).
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
		return nil, errors.New("pdk: Fetch: no response from " + req.URL)
	}
	if h := extHTTPHeaders(); h != 0 {
		_ = json.Unmarshal(takeBlock(h), &resp.Headers)
	}
	return resp, nil
}
