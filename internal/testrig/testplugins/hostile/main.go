//go:build wasip1

// Command hostile is a test plugin that misbehaves on request: it loops
// forever, exits the instance, exhausts its memory, recurses without end,
// floods its output, or works slowly. The end-to-end tests check that the
// host contains each of these and keeps serving.
package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	pdk "github.com/mcphost/mcphost/pdk/go"
)

func main() {}

type none struct{}

type slowArgs struct {
	Millis int `json:"millis" jsonschema:"description=how long to work,minimum=0"`
}

type floodArgs struct {
	Bytes int `json:"bytes" jsonschema:"minimum=0"`
}

var sink [][]byte

func init() {
	pdk.Tool("ok", "Answers ok.", func(*pdk.Context, none) (string, error) { return "ok", nil })
	pdk.Tool("spin", "Loops forever.", func(*pdk.Context, none) (string, error) {
		for {
		}
	})
	pdk.Tool("crash", "Ends its instance abruptly.", func(*pdk.Context, none) (string, error) {
		os.Exit(3)
		return "", nil
	})
	pdk.Tool("panic", "Panics on a goroutine of its own, where the PDK cannot recover it.", func(*pdk.Context, none) (string, error) {
		go func() { panic("the disk is full") }()
		select {}
	})
	pdk.Tool("hog", "Allocates memory until there is none.", func(*pdk.Context, none) (string, error) {
		for {
			sink = append(sink, make([]byte, 1<<20))
		}
	})
	pdk.Tool("recurse", "Recurses without end.", func(*pdk.Context, none) (string, error) {
		return "", recurse(0)
	})
	pdk.Tool("flood", "Returns a text of the given size.", func(_ *pdk.Context, a floodArgs) (string, error) {
		return strings.Repeat("x", a.Bytes), nil
	})
	pdk.Tool("slow", "Works (busily) for the given time, then answers done.", func(_ *pdk.Context, a slowArgs) (string, error) {
		fmt.Fprintln(os.Stderr, "slow: started") // what a test waits for to know the call is running
		end := time.Now().Add(time.Duration(a.Millis) * time.Millisecond)
		for time.Now().Before(end) {
		}
		return "done", nil
	})
}

func recurse(n int) error {
	var pad [256]byte
	pad[n%256] = byte(n)
	if pad[0] == 255 {
		return nil
	}
	return recurse(n + 1)
}
