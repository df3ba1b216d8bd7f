//go:build wasip1

// Command bench is the plugin of the PDK's end-to-end benchmarks
// (bench_test.go): tools that take or return large texts.
package main

import (
	"strconv"
	"strings"

	pdk "github.com/mcphost/mcphost/pdk/go"
)

func main() {}

type textArgs struct {
	Text string `json:"text"`
}

type sizeArgs struct {
	Bytes int `json:"bytes" jsonschema:"minimum=0"`
}

type document struct {
	Text string `json:"text"`
}

func init() {
	pdk.Tool("size", "Returns the size of a text.", func(_ *pdk.Context, a textArgs) (string, error) {
		return strconv.Itoa(len(a.Text)), nil
	})
	pdk.Tool("text", "Returns a text of the given size.", func(_ *pdk.Context, a sizeArgs) (string, error) {
		return strings.Repeat("x", a.Bytes), nil
	})
	pdk.Tool("document", "Returns a document holding a text of the given size.", func(_ *pdk.Context, a sizeArgs) (document, error) {
		return document{Text: strings.Repeat("x", a.Bytes)}, nil
	})
}
