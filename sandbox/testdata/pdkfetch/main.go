//go:build wasip1

// Command pdkfetch is the sandbox test plugin that sends HTTP requests
// through mcphost's Go PDK and handles a failed one as an error value.
package main

import (
	"fmt"

	pdk "github.com/mcphost/mcphost/pdk/go"
)

func main() {}

type fetchArgs struct {
	URL string `json:"url"`
}

func init() {
	pdk.Tool("fetch", "Fetches a URL; a request that fails gives the fallback.", func(_ *pdk.Context, a fetchArgs) (string, error) {
		resp, err := pdk.Fetch(pdk.HTTPRequest{URL: a.URL})
		if err != nil {
			return "fallback: " + err.Error(), nil
		}
		return fmt.Sprintf("%d %s", resp.Status, resp.Body), nil
	})
}
