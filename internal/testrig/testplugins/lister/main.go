//go:build wasip1

// Command lister is a test plugin whose list_tools is as large or as slow
// as its config says: config "pages" pages of "per_page" tools each, every
// page after "delay_ms" milliseconds of sleep. Loaded under two names, it
// is the list bomb and the slow list of the start-up tests in
// internal/testrig/e2e. With config "names_file", it lists instead one tool
// for each line of that file (in a mount), as read at each listing: a
// listing that depends on the world outside the plugin. It is written with
// the Extism Go PDK, as a third-party plugin would be.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	pdk "github.com/extism/go-pdk"
)

func main() {}

// setting returns the config value key as a number, def when it is unset.
func setting(key string, def int) int {
	if v, ok := pdk.GetConfig(key); ok {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return def
}

//go:wasmexport list_tools
func listTools() int32 {
	var in struct {
		Request *struct {
			Cursor string `json:"cursor"`
		} `json:"request"`
	}
	_ = json.Unmarshal(pdk.Input(), &in)
	page := 0
	if in.Request != nil {
		page, _ = strconv.Atoi(in.Request.Cursor)
	}
	if path, ok := pdk.GetConfig("names_file"); ok {
		return listFile(path)
	}
	time.Sleep(time.Duration(setting("delay_ms", 0)) * time.Millisecond)
	perPage := setting("per_page", 1)
	tools := make([]string, perPage)
	for i := range tools {
		tools[i] = fmt.Sprintf(`{"name":"t%d_%d","inputSchema":{"type":"object"}}`, page, i)
	}
	next := ""
	if page+1 < setting("pages", 1) {
		next = fmt.Sprintf(`,"nextCursor":"%d"`, page+1)
	}
	pdk.OutputString(`{"tools":[` + strings.Join(tools, ",") + `]` + next + `}`)
	return 0
}

// listFile answers list_tools with one tool for each line of the file at
// path, or fails.
func listFile(path string) int32 {
	b, err := os.ReadFile(path)
	if err != nil {
		pdk.SetError(err)
		return 1
	}
	var tools []string
	for name := range strings.FieldsSeq(string(b)) {
		tools = append(tools, fmt.Sprintf(`{"name":%q,"inputSchema":{"type":"object"}}`, name))
	}
	pdk.OutputString(`{"tools":[` + strings.Join(tools, ",") + `]}`)
	return 0
}

//go:wasmexport call_tool
func callTool() int32 {
	pdk.OutputString(`{"content":[{"type":"text","text":"listed"}]}`)
	return 0
}
