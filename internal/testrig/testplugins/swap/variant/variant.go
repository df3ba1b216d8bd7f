//go:build wasip1

// Package variant is the body of the hot-swap test plugins, swap/a and
// swap/b: two builds of one plugin whose lists differ, so that replacing
// one by the other changes what clients see. Both have echo (which names
// the variant that ran it) and slow (a call that lasts long enough to be
// running during a swap); each has a tool and a resource of its own.
package variant

import (
	"time"

	"github.com/mcphost/mcphost/abi"
	pdk "github.com/mcphost/mcphost/pdk/go"
)

type echoArgs struct {
	Text string `json:"text,omitempty"`
}

type slowArgs struct {
	Millis int `json:"millis,omitempty" jsonschema:"minimum=0,maximum=10000"`
}

// Register registers the tools and resource of variant name.
func Register(name string) {
	pdk.Tool("echo", "Returns the variant that served the call and the text.",
		func(_ *pdk.Context, a echoArgs) (string, error) { return name + ":" + a.Text, nil })
	pdk.Tool("slow", "Sleeps for millis milliseconds, then returns the variant.",
		func(_ *pdk.Context, a slowArgs) (string, error) {
			time.Sleep(time.Duration(a.Millis) * time.Millisecond)
			return name, nil
		})
	pdk.Tool("only_"+name, "A tool only variant "+name+" has.",
		func(_ *pdk.Context, _ struct{}) (string, error) { return name, nil })
	pdk.Resource(abi.Resource{URI: "swap://" + name, Name: "variant " + name, MimeType: "text/plain"},
		func(_ *pdk.Context, uri string) (*abi.ReadResourceResult, error) {
			return pdk.TextResource(uri, "text/plain", name), nil
		})
}
