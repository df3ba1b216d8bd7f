// Package pdk is the Go plugin development kit for mcphost: it turns a Go
// package into a WebAssembly plugin that serves MCP tools, prompts,
// resources and completions.
//
// A plugin registers what it offers from init functions and leaves main
// empty:
//
//	package main
//
//	import pdk "github.com/mcphost/mcphost/pdk/go"
//
//	type weatherArgs struct {
//		City  string `json:"city" description:"City name"`
//		Units string `json:"units,omitempty" jsonschema:"enum=metric|imperial,default=metric"`
//	}
//
//	type weather struct {
//		TempC   float64 `json:"temp_c"`
//		Summary string  `json:"summary"`
//	}
//
//	func init() {
//		pdk.Tool("weather", "Current weather for a city", func(ctx *pdk.Context, a weatherArgs) (weather, error) {
//			return weather{TempC: 21, Summary: "sunny in " + a.City}, nil
//		}, pdk.ReadOnly())
//	}
//
//	func main() {}
//
// and is built as a WASI reactor:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o plugin.wasm .
//	tinygo build -target wasip1 -buildmode=c-shared -o plugin.wasm .
//
// # Initialisation
//
// With -buildmode=c-shared the module exports _initialize, which runs the
// Go runtime's initialisation and every package's init functions, but never
// main. Extism (with WASI enabled, as mcphost runs plugins) calls
// _initialize once before the first export. Registrations therefore belong
// in init functions (or package-level variable initialisers); code in main
// does not run.
//
// # Exports
//
// The package defines the ABI exports list_tools, call_tool, list_prompts,
// get_prompt, list_resources, list_resource_templates, read_resource and
// complete; each answers from what was registered. Unknown tools and
// prompts fail with -32602, unknown resources with -32002, and no panic
// escapes an export (under the standard Go toolchain; TinyGo cannot
// recover panics on WebAssembly, where they abort the call). It also
// exports mcphost_http_errors (abi.ExportHTTPErrors), never called, which
// tells mcphost that Fetch handles a failed request as an error value.
//
// # Argument schemas
//
// A tool's inputSchema (JSON Schema 2020-12) is derived from its arguments
// struct, following encoding/json: the json tag names a property, "-" and
// unexported fields are skipped, untagged embedded structs are flattened.
// Go types map to JSON types (bool: boolean, integers: integer, unsigned
// ones with minimum 0, floats: number, string, []byte: base64 string,
// slices and arrays: array, maps with string keys and structs: object,
// time.Time: date-time string, interfaces and json.RawMessage: any).
// Pointers stand for their element.
//
// A property is required unless its json tag has omitempty or omitzero or
// its field is a pointer; the jsonschema tag's "required" and "optional"
// override that.
//
// Two tags add schema keywords. description:"..." sets the description
// (any text). jsonschema:"..." holds comma-separated items, each a flag or
// key=value:
//
//	required, optional        override the required rule
//	nullable                  also accept null
//	deprecated, uniqueItems   set the keyword to true
//	description=, title=      text
//	format=, pattern=         string format, regular expression
//	enum=a|b|c                allowed values, parsed as the field's type
//	default=, examples=a|b    likewise (JSON for arrays and objects)
//	minimum=, maximum=, exclusiveMinimum=, exclusiveMaximum=, multipleOf=
//	minLength=, maxLength=, minItems=, maxItems=
//
// Inside a value, escape a comma or a bar with a backslash; as struct tags
// are Go quoted strings, the backslash is doubled in the source
// (jsonschema:"description=Days\\, at most 14"). On a slice field, enum,
// format, pattern, the length and the numeric keywords constrain the items. Unknown keys and values that do not parse make Tool panic, so
// mistakes show at the first run.
//
// Before a handler runs, the PDK checks the arguments against the schema
// (types, required, enum, bounds, lengths, item counts; not format or
// pattern) and answers violations with a tool execution error the model
// can act on.
//
// # Results
//
// A tool's result type decides its output: *abi.CallToolResult as is, a
// string as text, anything else as structured content with an outputSchema
// derived from the type the same way (fields that encoding/json may write
// as null are nullable there). See Tool.
package pdk
