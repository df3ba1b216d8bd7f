// Command native is the benchmark's reference: an MCP server written with
// the official Go SDK (github.com/modelcontextprotocol/go-sdk) whose one
// tool, greet, does what the greet tool of an `mcphost new` template does,
// natively. The benchmark builds it and serves it as mcphost serves the
// plugins: over stdio, or with -http ADDR over Streamable HTTP at
// http://ADDR/mcp (the address it listens on is logged to stderr as
// url=…, as mcphost serve logs it).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
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
	addr := flag.String("http", "", "serve Streamable HTTP on this address (e.g. 127.0.0.1:0) instead of stdio")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile to this file when stdin ends (stdio only)")
	flag.Parse()
	if *cpuProfile != "" {
		out, err := os.Create(*cpuProfile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(out); err != nil {
			log.Fatal(err)
		}
		defer func() { pprof.StopCPUProfile(); _ = out.Close() }()
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "native", Version: "1"}, nil)
	no := false
	mcp.AddTool(server, &mcp.Tool{
		Name:        "greet",
		Description: "Greets someone by name.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &no},
	}, greet)
	if *addr == "" {
		if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			log.Print(err)
		}
		return
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "msg=listening url=http://%s/mcp\n", ln.Addr())
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
	log.Fatal(http.Serve(ln, mux))
}
