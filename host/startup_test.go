package host

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
)

// initializeIn initializes a session of c and returns the capabilities the
// server answered.
func initializeIn(t *testing.T, c *InProcessClient) map[string]any {
	t.Helper()
	raw, err := c.Request(context.Background(), "initialize", map[string]any{
		"protocolVersion": Version20251125, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "t", "version": "1"},
	})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	var res struct {
		Capabilities map[string]any `json:"capabilities"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	c.Notify(context.Background(), "notifications/initialized", nil)
	return res.Capabilities
}

// TestInitializeWaitsForThePluginsLoading: while plugins load, initialize
// is answered once they are done, with the capabilities of what loaded.
func TestInitializeWaitsForThePluginsLoading(t *testing.T) {
	srv := NewServer(Options{Name: "test", Version: "1"}, nil)
	compiled, done := srv.Loading(1, time.Minute)
	compiled()
	c := NewInProcessClient(srv, InProcessHandlers{})
	defer c.Close()
	answered := make(chan map[string]any)
	go func() { answered <- initializeIn(t, c) }()
	select {
	case caps := <-answered:
		t.Fatalf("initialize answered while the plugins load: %v", caps)
	case <-time.After(100 * time.Millisecond):
	}
	srv.ReplacePlugins(context.Background(), []*Plugin{toolsPlugin("a", abi.Tool{Name: "echo", InputSchema: objectSchema})})
	done()
	caps := <-answered
	if caps["tools"] == nil || caps["prompts"] != nil || caps["resources"] != nil {
		t.Errorf("capabilities once loaded: %v, want tools only", caps)
	}
}

// TestInitializeAllowsForPluginsStillLoading: initialize waits while a
// plugin compiles; once every plugin is compiled and its wait is over, it
// answers while plugins still load, declaring every list that they may
// bring, and a call to a tool of a plugin that arrives later waits for it
// instead of failing as unknown.
func TestInitializeAllowsForPluginsStillLoading(t *testing.T) {
	srv := NewServer(Options{Name: "test", Version: "1"}, nil)
	compiled, done := srv.Loading(2, 50*time.Millisecond)
	defer done()
	c := NewInProcessClient(srv, InProcessHandlers{})
	defer c.Close()
	answered := make(chan map[string]any)
	go func() { answered <- initializeIn(t, c) }()
	compiled()
	select {
	case caps := <-answered:
		t.Fatalf("initialize answered while a plugin compiles: %v", caps)
	case <-time.After(200 * time.Millisecond):
	}
	compiled()
	caps := <-answered
	for _, kind := range []string{"tools", "prompts", "resources"} {
		if !strings.Contains(mustJSONString(caps[kind]), `"listChanged":true`) {
			t.Errorf("capabilities while plugins load: %s is %v, want listChanged", kind, caps[kind])
		}
	}
	called := make(chan error)
	go func() {
		_, err := c.Request(context.Background(), "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{}})
		called <- err
	}()
	select {
	case err := <-called:
		t.Fatalf("a call to a tool still loading ended before it arrived: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	srv.ReplacePlugins(context.Background(), []*Plugin{toolsPlugin("a", abi.Tool{Name: "echo", InputSchema: objectSchema})})
	if err := <-called; err != nil {
		t.Fatalf("a call to a tool that arrived while it waited: %v", err)
	}
	done()
	if _, err := c.Request(context.Background(), "tools/call", map[string]any{"name": "nope"}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("an unknown tool once every plugin loaded: %v", err)
	}
}

func mustJSONString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestInitializeWaitCountsFromTheStart: initialize waits startup_wait from
// when the load started, not from when the last plugin compiled (plugins
// loaded from the compilation cache are compiled within a few hundred
// milliseconds), but at least half of it after the last compile, which is
// what plugins need to start and list once compiled.
func TestInitializeWaitCountsFromTheStart(t *testing.T) {
	start := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	wait := 500 * time.Millisecond
	for _, c := range []struct {
		compiledAfter, want time.Duration
	}{
		{100 * time.Millisecond, 500 * time.Millisecond},        // a warm start
		{300 * time.Millisecond, 550 * time.Millisecond},        // half the wait after the compiles
		{3 * time.Second, 3*time.Second + 250*time.Millisecond}, // a first start compiling for seconds
	} {
		if got := settleTime(start, start.Add(c.compiledAfter), wait).Sub(start); got != c.want {
			t.Errorf("compiled after %v: initialize stops waiting after %v, want %v", c.compiledAfter, got, c.want)
		}
	}
}

// TestDiscoverAnswersWhilePluginsLoad: server/discover does not wait for
// the plugins loading at start-up (clients probe it with a short timeout,
// mcp-go's five seconds, and fall back to initialize; a first start
// compiles for seconds): it answers at once, with the capabilities that
// allow for the plugins still loading. The requests that follow wait for
// them, as initialize would.
func TestDiscoverAnswersWhilePluginsLoad(t *testing.T) {
	h := newHarness(t)
	_, done := h.srv.Loading(1, time.Minute) // a plugin that compiles for as long as the test
	defer done()
	answered := make(chan map[string]any, 1)
	go func() { answered <- modernRequest(t, h, context.Background(), 1, "server/discover", `{}`, `{}`) }()
	select {
	case m := <-answered:
		caps := mustJSONString(result(t, m)["capabilities"])
		for _, kind := range []string{"tools", "prompts", "resources"} {
			if !strings.Contains(caps, `"`+kind+`"`) {
				t.Errorf("discover while plugins load: %s, want %s allowed for", caps, kind)
			}
		}
	case <-time.After(2 * time.Second):
		t.Fatal("server/discover waited for the plugins loading")
	}
}
