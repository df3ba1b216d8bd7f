package host

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/syncbuf"
)

// A tool whose x-mcp-header annotations break the rules of 2026-07-28 is
// left out of the catalog with a warning naming the rule, as clients must
// reject it anyway: an empty or non-token name, two names equal but for
// case, a type other than string, integer or boolean, or an annotation not
// reachable through properties alone. A tool with valid ones is kept.
func TestToolsWithBadXMCPHeaderAnnotationsAreLeftOut(t *testing.T) {
	prop := func(p string) json.RawMessage {
		return json.RawMessage(`{"type":"object","properties":{` + p + `}}`)
	}
	bad := map[string]struct {
		schema json.RawMessage
		want   string
	}{
		"empty":      {prop(`"a":{"type":"string","x-mcp-header":""}`), "must be a non-empty token"},
		"not_token":  {prop(`"a":{"type":"string","x-mcp-header":"Re gion"}`), "must be a non-empty token"},
		"twice":      {prop(`"a":{"type":"string","x-mcp-header":"Region"},"b":{"type":"string","x-mcp-header":"region"}`), "used twice"},
		"number":     {prop(`"a":{"type":"number","x-mcp-header":"N"}`), "string, integer or boolean"},
		"untyped":    {prop(`"a":{"x-mcp-header":"N"}`), "string, integer or boolean"},
		"in_items":   {prop(`"a":{"type":"array","items":{"type":"string","x-mcp-header":"I"}}`), "reachable through properties"},
		"in_anyOf":   {json.RawMessage(`{"type":"object","anyOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`), "reachable through properties"},
		"not_string": {prop(`"a":{"type":"string","x-mcp-header":7}`), "must be a non-empty token"},
	}
	tools := []abi.Tool{{Name: "good", InputSchema: prop(`"region":{"type":"string","x-mcp-header":"Region"},"o":{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"}}}`)}}
	for name, b := range bad {
		tools = append(tools, abi.Tool{Name: name, InputSchema: b.schema})
	}
	var logs syncbuf.Buffer
	c := BuildCatalog(context.Background(), []*Plugin{toolsPlugin("p", tools...)}, slog.New(slog.NewTextHandler(&logs, nil)))
	if _, ok := c.toolIndex["good"]; !ok {
		t.Errorf("the tool with valid annotations was left out:\n%.3000s", logs.String())
	}
	for name, b := range bad {
		if _, ok := c.toolIndex[name]; ok {
			t.Errorf("tool %s was kept", name)
		}
		if !logHas(logs.String(), `msg="tool left out: bad x-mcp-header"`, "tool="+name, b.want) {
			t.Errorf("no warning for %s naming %q:\n%.3000s", name, b.want, logs.String())
		}
	}
}
