//go:build wasip1

// Command metaecho is a test plugin that answers with the _meta of the
// request context it receives, as JSON text: the tool "meta", the prompt
// "meta" and the resources of the template "meta://{name}". internal/testrig/e2e
// checks with it which _meta keys reach a plugin, such as the
// OpenTelemetry trace context (TestTraceContextReachesPlugins).
package main

import (
	"encoding/json"

	"github.com/mcphost/mcphost/abi"
	pdk "github.com/mcphost/mcphost/pdk/go"
)

type none struct{}

// metaJSON is the request's _meta as JSON.
func metaJSON(ctx *pdk.Context) string {
	b, _ := json.Marshal(ctx.Meta)
	return string(b)
}

func init() {
	pdk.Tool("meta", "Returns the request's _meta as JSON.", func(ctx *pdk.Context, _ none) (string, error) {
		return metaJSON(ctx), nil
	})
	pdk.Prompt("meta", "A message holding the request's _meta as JSON.", nil,
		func(ctx *pdk.Context, _ map[string]string) (*abi.GetPromptResult, error) {
			return &abi.GetPromptResult{Messages: []abi.PromptMessage{{Role: "user", Content: abi.Content{Type: abi.ContentText, Text: metaJSON(ctx)}}}}, nil
		})
	pdk.ResourceTemplate(abi.ResourceTemplate{URITemplate: "meta://{name}", Name: "meta", MimeType: "application/json"},
		func(ctx *pdk.Context, uri string, _ map[string]string) (*abi.ReadResourceResult, error) {
			return &abi.ReadResourceResult{Contents: []abi.ResourceContents{{URI: uri, MimeType: "application/json", Text: metaJSON(ctx)}}}, nil
		})
}

// main never runs: the host calls the exports of the c-shared module after
// _initialize.
func main() {}
