//go:build wasip1

// Command attacker is a test plugin that tries to get at what it was not
// granted: host functions, network hosts, private addresses, files outside
// its mount, the host environment, secrets it logs; and that floods the
// client and the host log, or holds its instance forever. The hostile
// tests in internal/testrig/e2e check that each attempt fails and that the host
// keeps serving.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	pdk "github.com/mcphost/mcphost/pdk/go"
)

func main() {}

type none struct{}

type countArgs struct {
	N int `json:"n" jsonschema:"minimum=0"`
}

type urlArgs struct {
	URL string `json:"url"`
}

type pathArgs struct {
	Path string `json:"path"`
}

type keyArgs struct {
	Key string `json:"key"`
}

func init() {
	pdk.Tool("ok", "Answers ok.", func(*pdk.Context, none) (string, error) { return "ok", nil })

	// Floods through host functions: progress and log notifications.
	pdk.Tool("progress_flood", "Sends n progress notifications.", func(ctx *pdk.Context, a countArgs) (string, error) {
		for i := range a.N {
			ctx.Progress(float64(i+1), 0, "flooding")
		}
		return "flooded", nil
	})
	pdk.Tool("log_flood", "Sends n log notifications.", func(ctx *pdk.Context, a countArgs) (string, error) {
		for i := range a.N {
			ctx.Log(pdk.LevelInfo, fmt.Sprintf("flood %d", i), nil)
		}
		return "flooded", nil
	})
	// Floods the host's own log through stderr.
	pdk.Tool("stderr_flood", "Writes n lines of 1 KiB to stderr.", func(_ *pdk.Context, a countArgs) (string, error) {
		line := strings.Repeat("e", 1023) + "\n"
		for range a.N {
			os.Stderr.WriteString(line)
		}
		return "flooded", nil
	})

	// A host function it was not granted (list_roots answers an error).
	pdk.Tool("roots", "Lists the client's roots.", func(ctx *pdk.Context, _ none) (string, error) {
		roots, err := ctx.ListRoots()
		if err != nil {
			return "", err
		}
		return fmt.Sprint(roots), nil
	})

	pdk.Tool("fetch", "Fetches a URL.", func(_ *pdk.Context, a urlArgs) (string, error) {
		resp, err := pdk.Fetch(pdk.HTTPRequest{URL: a.URL})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%d %s", resp.Status, resp.Body), nil
	})

	pdk.Tool("read", "Reads a file.", func(_ *pdk.Context, a pathArgs) (string, error) {
		b, err := os.ReadFile(a.Path)
		return string(b), err
	})
	pdk.Tool("write", "Writes a file.", func(_ *pdk.Context, a pathArgs) (string, error) {
		return "written", os.WriteFile(a.Path, []byte("pwned"), 0o644)
	})

	pdk.Tool("environ", "Reports the environment and arguments it sees.", func(*pdk.Context, none) (string, error) {
		return fmt.Sprintf("env=%q args=%q", os.Environ(), os.Args), nil
	})

	pdk.Tool("getenv", "Reads a variable of the host's environment.", func(_ *pdk.Context, a keyArgs) (string, error) {
		v, ok := os.LookupEnv(a.Key)
		if !ok {
			return "", fmt.Errorf("environment variable %s is not set", a.Key)
		}
		return v, nil
	})

	// Reads a config value and leaks it everywhere it can but its result.
	pdk.Tool("leak", "Reads a config key and puts it in the log and an error.", func(ctx *pdk.Context, a keyArgs) (string, error) {
		v, ok := pdk.Config(a.Key)
		if !ok {
			return "", errors.New("no config value " + a.Key)
		}
		fmt.Fprintln(os.Stderr, "stderr has", v)
		ctx.Log(pdk.LevelInfo, "log has "+v, nil)
		return "", errors.New("error has " + v)
	})

	// Holds its instance until the host takes it away.
	pdk.Tool("hold", "Sleeps forever.", func(*pdk.Context, none) (string, error) {
		fmt.Fprintln(os.Stderr, "hold: started") // what a test waits for to know the call holds its instance
		for {
			time.Sleep(time.Hour)
		}
	})
}
