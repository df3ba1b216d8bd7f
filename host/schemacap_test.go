package host

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/syncbuf"
)

// TestSchemaBombsAreLeftOut: a tool whose inputSchema nests deeper than
// 64 levels, or is larger than 256 KiB, is left out of the
// catalog with a warning naming the cap, before the schema compiler sees
// it; its neighbour is kept.
func TestSchemaBombsAreLeftOut(t *testing.T) {
	deep := `{"type":"object","properties":{"a":` + strings.Repeat(`{"items":`, 1000) + `{}` + strings.Repeat(`}`, 1000) + `}}`
	large := `{"type":"object","description":"` + strings.Repeat("x", 1<<20) + `"}`
	p := toolsPlugin("p",
		abi.Tool{Name: "deep", InputSchema: json.RawMessage(deep)},
		abi.Tool{Name: "large", InputSchema: json.RawMessage(large)},
		abi.Tool{Name: "fine", InputSchema: objectSchema})
	var logs syncbuf.Buffer
	c := BuildCatalog(context.Background(), []*Plugin{p}, slog.New(slog.NewTextHandler(&logs, nil)))
	if _, ok := c.toolIndex["fine"]; !ok {
		t.Error("the tool with a plain schema was left out")
	}
	for name, want := range map[string]string{"deep": "nests deeper than 64", "large": "larger than"} {
		if _, ok := c.toolIndex[name]; ok {
			t.Errorf("tool %s with a schema bomb was kept", name)
		}
		if !logHas(logs.String(), `msg="tool left out: bad inputSchema"`, "tool="+name, want) {
			t.Errorf("no warning for %s naming %q:\n%.2000s", name, want, logs.String())
		}
	}
}

// logHas reports whether one line of log has every one of parts.
func logHas(log string, parts ...string) bool {
	for line := range strings.Lines(log) {
		if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(line, p) }) {
			return true
		}
	}
	return false
}

func TestJSONDepthSkipsStrings(t *testing.T) {
	for raw, want := range map[string]int{
		`{}`:                          1,
		`{"a":[{"b":[]}]}`:            4,
		`{"a":"[[[{{\"[[\\"}`:         1,
		`{"a":"\\\\"}`:                1,
		`[[],[[]],{"x":"}}}]]]"}]`:    3,
		`{"type":"object","x":"\\""}`: 1,
	} {
		if got := jsonDepth([]byte(raw)); got != want {
			t.Errorf("jsonDepth(%s) = %d, want %d", raw, got, want)
		}
	}
}

// TestAPluginsItemsAreCheckedOncePerListing: a plugin's tools are checked
// (names, schemas compiled) when it is listed, not each time a catalog is
// built: publishing other plugins one after another, as a concurrent
// start-up does, neither warns again about its bad tool nor compiles its
// schemas again.
func TestAPluginsItemsAreCheckedOncePerListing(t *testing.T) {
	var logs syncbuf.Buffer
	srv := NewServer(Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}, nil)
	bad := toolsPlugin("bad", abi.Tool{Name: "broken", InputSchema: json.RawMessage(`{"type":"string"}`)}, abi.Tool{Name: "fine", InputSchema: objectSchema})
	plugins := []*Plugin{bad}
	srv.ReplacePlugins(context.Background(), plugins)
	fine := srv.Catalog().toolIndex["fine"]
	for _, name := range []string{"b", "c", "d"} {
		plugins = append(plugins, toolsPlugin(name, abi.Tool{Name: name, InputSchema: objectSchema}))
		srv.ReplacePlugins(context.Background(), plugins)
	}
	if n := strings.Count(logs.String(), "tool left out: bad inputSchema"); n != 1 {
		t.Errorf("the bad tool was reported %d times over 4 catalogs, want once", n)
	}
	if again := srv.Catalog().toolIndex["fine"]; again == nil || again.inputSchema != fine.inputSchema {
		t.Error("the fine tool's schema was compiled again for a later catalog")
	}
}
