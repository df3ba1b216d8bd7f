// Command native is the benchmark's reference: an MCP server written with
// the official Go SDK (github.com/modelcontextprotocol/go-sdk) whose one
// tool, greet, does what the greet tool of an `mcphost new` template does,
// natively. The benchmark builds it and serves it over stdio, as mcphost
// serves the plugins, and compares the two.
package main

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// greetArgs are the template's: the struct is the input schema.
type greetArgs struct {
	Name  string `json:"name" jsonschema:"Who to greet"`
	Shout bool   `json:"shout,omitempty" jsonschema:"Greet in capitals"`
}

func greet(_ context.Context, _ *mcp.CallToolRequest, a greetArgs) (*mcp.CallToolResult, any, error) {
	s := fmt.Sprintf("Hello, %s!", a.Name)
	if a.Shout {
		s = strings.ToUpper(s)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}, nil, nil
}

func main() {
	server := mcp.NewServer(&mcp.Implementation{Name: "native", Version: "1"}, nil)
	no := false
	mcp.AddTool(server, &mcp.Tool{
		Name:        "greet",
		Description: "Greets someone by name.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &no},
	}, greet)
	if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
