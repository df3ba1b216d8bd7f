//go:build !wasm

package pdk_test

import (
	"fmt"

	"github.com/mcphost/mcphost/abi"
	pdk "github.com/mcphost/mcphost/pdk/go"
)

// callExport runs a plugin's export with a JSON input as mcphost does and
// returns the JSON it gets back: here natively, on the fake Extism kernel of
// the PDK's tests; in a plugin, inside its sandbox.
var callExport = pdk.CallExport

// addArgs are the arguments of the add tool: the PDK derives the tool's
// input schema from the struct and checks every call against it.
type addArgs struct {
	A int `json:"a" description:"The first number"`
	B int `json:"b" description:"The second number"`
}

// sum is the add tool's result: a struct becomes structured content (with
// its JSON as text too).
type sum struct {
	Sum int `json:"sum"`
}

// A tool is a typed function: its arguments are decoded into A and
// validated against the schema derived from it before the function runs;
// its result is encoded as the tool's content.
func ExampleTool() {
	// In a plugin, register tools in init.
	pdk.Tool("add", "Adds two numbers.", func(_ *pdk.Context, a addArgs) (sum, error) {
		return sum{Sum: a.A + a.B}, nil
	}, pdk.ReadOnly())

	fmt.Println(callExport("call_tool", `{"request": {"name": "add", "arguments": {"a": 2, "b": 3}}, "context": {"id": 1}}`))
	// Invalid arguments are a tool error, which the model sees.
	fmt.Println(callExport("call_tool", `{"request": {"name": "add", "arguments": {"a": "two", "b": 3}}, "context": {"id": 2}}`))
	// Output:
	// {"content":[{"type":"text","text":"{\"sum\":5}"}],"structuredContent":{"sum":5}}
	// {"content":[{"type":"text","text":"invalid arguments: \"a\": must be an integer, not a string"}],"isError":true}
}

// A prompt returns messages built from its arguments; the PDK refuses a
// call missing a required one.
func ExamplePrompt() {
	pdk.Prompt("review", "Asks for a code review.", []pdk.PromptArg{
		{Name: "language", Description: "The code's language", Required: true},
	}, func(_ *pdk.Context, args map[string]string) (*abi.GetPromptResult, error) {
		return &abi.GetPromptResult{Messages: []abi.PromptMessage{
			pdk.UserMessage("Review this " + args["language"] + " code for bugs."),
		}}, nil
	})

	fmt.Println(callExport("get_prompt", `{"request": {"name": "review", "arguments": {"language": "Go"}}, "context": {"id": 1}}`))
	// A missing argument fails the request (-32602, invalid params).
	fmt.Println(callExport("get_prompt", `{"request": {"name": "review"}, "context": {"id": 2}}`))
	// Output:
	// {"description":"Asks for a code review.","messages":[{"role":"user","content":{"type":"text","text":"Review this Go code for bugs."}}]}
	// error: {"code":-32602,"message":"prompt \"review\": missing required argument \"language\""}
}

// A resource is read by its function; the result's contents get the
// resource's URI and MIME type when they have none.
func ExampleResource() {
	pdk.Resource(abi.Resource{URI: "docs://greeting", Name: "greeting", MimeType: "text/plain"},
		func(_ *pdk.Context, uri string) (*abi.ReadResourceResult, error) {
			return pdk.TextResource("", "", "Hello from "+uri), nil
		})

	fmt.Println(callExport("read_resource", `{"request": {"uri": "docs://greeting"}, "context": {"id": 1}}`))
	// An unknown URI fails the request (-32002, resource not found).
	fmt.Println(callExport("read_resource", `{"request": {"uri": "docs://nothing"}, "context": {"id": 2}}`))
	// Output:
	// {"contents":[{"uri":"docs://greeting","mimeType":"text/plain","text":"Hello from docs://greeting"}]}
	// error: {"code":-32002,"message":"resource not found: docs://nothing","data":{"uri":"docs://nothing"}}
}
