package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host"
)

// funcRuntime is a host.Runtime whose exports are Go functions: a stand-in
// for a sandboxed WebAssembly plugin (*sandbox.Plugin) in examples.
type funcRuntime map[string]func(input []byte) ([]byte, error)

func (r funcRuntime) Call(_ context.Context, export string, input []byte) ([]byte, error) {
	fn, ok := r[export]
	if !ok {
		return nil, fmt.Errorf("no export %s", export)
	}
	return fn(input)
}

func (r funcRuntime) HasExport(name string) bool { _, ok := r[name]; return ok }

func (r funcRuntime) Close(context.Context) error { return nil }

// A plugin with one tool, served over stdio: the client initializes the
// session and calls the tool; the server writes one response a line.
func ExampleServer_ServeStdio() {
	weather := funcRuntime{
		abi.ExportListTools: func([]byte) ([]byte, error) {
			return json.Marshal(abi.ListToolsResult{Tools: []abi.Tool{{
				Name:        "forecast",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
			}}})
		},
		abi.ExportCallTool: func(input []byte) ([]byte, error) {
			var in struct {
				Request struct {
					Arguments struct {
						City string `json:"city"`
					} `json:"arguments"`
				} `json:"request"`
			}
			if err := json.Unmarshal(input, &in); err != nil {
				return nil, err
			}
			text := "Sunny in " + in.Request.Arguments.City
			return json.Marshal(abi.CallToolResult{Content: []abi.Content{{Type: abi.ContentText, Text: text}}})
		},
	}
	ctx := context.Background()
	catalog := host.BuildCatalog(ctx, []*host.Plugin{host.NewPlugin("weather", "", weather)}, nil)
	srv := host.NewServer(host.Options{Name: "example", Version: "1.0.0"}, catalog)

	stdin := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"client","version":"1.0.0"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"forecast","arguments":{"city":"Paris"}}}
`)
	var stdout bytes.Buffer
	// ServeStdio returns at the end of stdin, once the requests in flight
	// have answered (or after the grace period).
	if err := srv.ServeStdio(ctx, stdin, &stdout, time.Second); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(stdout.String())
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"logging":{},"tasks":{"cancel":{},"list":{},"requests":{"tools":{"call":{}}}},"tools":{"listChanged":true}},"serverInfo":{"name":"example","version":"1.0.0"}}}
	// {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Sunny in Paris"}]}}
}
