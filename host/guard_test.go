package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/sandbox"
)

// fakeClock is a settable time source.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// syncBuffer is a log destination safe for concurrent use.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestTokenBucket(t *testing.T) {
	clock := &fakeClock{t: time.Unix(0, 0)}
	b := newTokenBucket(2, clock.now)
	if !b.take() || !b.take() || b.take() {
		t.Fatal("a bucket of 2 does not allow exactly 2 calls at once")
	}
	clock.add(500 * time.Millisecond)
	if !b.take() || b.take() {
		t.Fatal("half a second at 2/s does not refill exactly one call")
	}
	slow := newTokenBucket(0.5, clock.now)
	if !slow.take() || slow.take() {
		t.Fatal("a rate below 1 still allows one call at once")
	}
	clock.add(2 * time.Second)
	if !slow.take() {
		t.Fatal("2 s at 0.5/s does not refill one call")
	}
}

func TestBreakerOpensProbesAndCloses(t *testing.T) {
	clock := &fakeClock{t: time.Unix(0, 0)}
	var logs syncBuffer
	b := newBreaker("flaky", breakerSettings{failures: 3, window: 10 * time.Second, backoff: time.Second, maxBackoff: 3 * time.Second},
		slog.New(slog.NewTextHandler(&logs, nil)).With("plugin", "flaky"), clock.now)
	fail := func() {
		t.Helper()
		probe, err := b.allow("call_tool")
		if err != nil {
			t.Fatalf("refused while it should run: %v", err)
		}
		b.done(probe, failure, "plugin trapped: boom\nwasm stack trace: ...")
	}
	// Failures spread wider than the window do not open it.
	fail()
	fail()
	clock.add(11 * time.Second)
	fail()
	fail()
	if _, err := b.allow("call_tool"); err != nil {
		t.Fatalf("opened by failures outside the window: %v", err)
	}
	b.done(false, success, "")
	fail() // the third within the window
	_, err := b.allow("call_tool")
	if sandbox.KindOf(err) != sandbox.KindUnavailable || !strings.Contains(err.Error(),
		"circuit breaker open after repeated failures (last: plugin trapped: boom); calls fail at once until a probe succeeds: next probe in 1s") {
		t.Fatalf("open breaker: %v", err)
	}
	// Half-open: one probe runs, the others are refused.
	clock.add(time.Second)
	probe, err := b.allow("call_tool")
	if err != nil || !probe {
		t.Fatalf("half-open: probe=%v err=%v", probe, err)
	}
	if _, err := b.allow("call_tool"); err == nil || !strings.Contains(err.Error(), "a probe call is running") {
		t.Fatalf("second call while probing: %v", err)
	}
	// A failed probe doubles the back-off, up to the cap.
	b.done(true, failure, "plugin call timed out")
	for _, backoff := range []time.Duration{2 * time.Second, 3 * time.Second} {
		if _, err := b.allow("call_tool"); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("next probe in %s", backoff)) {
			t.Fatalf("after a failed probe: %v, want a back-off of %v", err, backoff)
		}
		clock.add(backoff)
		probe, _ := b.allow("call_tool")
		b.done(probe, failure, "plugin call timed out")
	}
	if _, err := b.allow("call_tool"); err == nil || !strings.Contains(err.Error(), "next probe in 3s") {
		t.Fatalf("back-off not capped: %v", err)
	}
	// A neutral probe (cancelled) decides nothing; a good one closes it.
	clock.add(3 * time.Second)
	probe, _ = b.allow("call_tool")
	b.done(probe, neutral, "")
	probe, err = b.allow("call_tool")
	if !probe || err != nil {
		t.Fatalf("after a neutral probe: probe=%v err=%v", probe, err)
	}
	b.done(probe, success, "")
	if probe, err := b.allow("call_tool"); probe || err != nil {
		t.Fatalf("closed breaker: probe=%v err=%v", probe, err)
	}
	// Closed again with the first back-off.
	fail()
	fail()
	fail()
	if _, err := b.allow("call_tool"); err == nil || !strings.Contains(err.Error(), "next probe in 1s") {
		t.Fatalf("reopened: %v", err)
	}
	log := logs.String()
	for _, want := range []string{
		`msg="circuit breaker opened: the plugin keeps failing" plugin=flaky failures=3 window=10s backoff=1s last_error="plugin trapped: boom"`,
		`msg="circuit breaker half-open: the next call probes the plugin" plugin=flaky`,
		`msg="circuit breaker reopened: the probe call failed" plugin=flaky failures=3 window=10s backoff=2s`,
		`msg="circuit breaker closed: the probe call succeeded" plugin=flaky`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %s:\n%s", want, log)
		}
	}
}

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		out  string
		err  error
		want outcome
	}{
		{`{"ok":true}`, nil, success},
		{`{"truncated`, nil, failure},
		{"\xff\xfe", nil, failure},
		{"", &sandbox.CallError{Kind: sandbox.KindPlugin}, success},
		{"", &sandbox.CallError{Kind: sandbox.KindTrap}, failure},
		{"", &sandbox.CallError{Kind: sandbox.KindTimeout}, failure},
		{"", &sandbox.CallError{Kind: sandbox.KindOutputTooLarge}, failure},
		{"", &sandbox.CallError{Kind: sandbox.KindCanceled}, neutral},
		{"", &sandbox.CallError{Kind: sandbox.KindBusy}, neutral},
		{"", errors.New("plugin closed"), neutral},
	} {
		if got, _ := classify(abi.ExportCallTool, []byte(c.out), c.err); got != c.want {
			t.Errorf("classify(%q, %v) = %v, want %v", c.out, c.err, got, c.want)
		}
	}
}

// guardedPlugin returns a plugin with the fake runtime rt, guarded by pc.
func guardedPlugin(name string, pc config.PluginConfig, rt Runtime, logger *slog.Logger) *Plugin {
	if pc.Limits.MaxListItems == 0 {
		pc.Limits.MaxListItems = 1000
	}
	return NewPlugin(name, "", guardRuntime(name, pc, rt, logger))
}

func TestRateLimitAnswersAtOnce(t *testing.T) {
	var calls int
	rt := fakeRuntime{
		abi.ExportListTools: returns(abi.ListToolsResult{Tools: []abi.Tool{{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}}}),
		abi.ExportCallTool: func(context.Context, []byte) ([]byte, error) {
			calls++
			return json.Marshal(abi.CallToolResult{Content: []abi.Content{{Type: "text", Text: "done"}}})
		},
	}
	pc := config.PluginConfig{Limits: config.Limits{CallsPerSecond: 0.001}} // one call, then none for a long time
	h := newHarness(t, guardedPlugin("slow", pc, rt, nil))
	h.init(t, "2025-11-25")
	first := h.call(t, 1, "tools/call", map[string]any{"name": "t", "arguments": map[string]any{}})
	if res := first["result"].(map[string]any); res["isError"] == true {
		t.Fatalf("first call refused: %v", first)
	}
	start := time.Now()
	second := h.call(t, 2, "tools/call", map[string]any{"name": "t", "arguments": map[string]any{}})
	msg := fmt.Sprint(second)
	if !strings.Contains(msg, "plugin slow: plugin rate limit exceeded: more than 0.001 calls per second (calls_per_second of [plugins.slow]); try again shortly") {
		t.Errorf("second call: %v", second)
	}
	if calls != 1 || time.Since(start) > time.Second {
		t.Errorf("the refused call ran (%d calls) or waited (%v)", calls, time.Since(start))
	}
}

func TestAllowListsAndMaxListItems(t *testing.T) {
	schema := json.RawMessage(`{"type":"object"}`)
	var tools []abi.Tool
	for _, n := range []string{"search_a", "search_b", "delete_all", "search_c", "fetch"} {
		tools = append(tools, abi.Tool{Name: n, InputSchema: schema})
	}
	var read []string
	rt := fakeRuntime{
		abi.ExportListTools:   returns(abi.ListToolsResult{Tools: tools}),
		abi.ExportListPrompts: returns(abi.ListPromptsResult{Prompts: []abi.Prompt{{Name: "public"}, {Name: "internal"}}}),
		abi.ExportListResources: returns(abi.ListResourcesResult{Resources: []abi.Resource{
			{URI: "docs://guide", Name: "guide"}, {URI: "secret://keys", Name: "keys"}}}),
		abi.ExportListResourceTemplates: returns(abi.ListResourceTemplatesResult{ResourceTemplates: []abi.ResourceTemplate{
			{URITemplate: "docs://{page}", Name: "page"}, {URITemplate: "{+anything}", Name: "any"}}}),
		abi.ExportReadResource: func(_ context.Context, in []byte) ([]byte, error) {
			var i struct {
				Request abi.ReadResourceParams `json:"request"`
			}
			_ = json.Unmarshal(in, &i)
			read = append(read, i.Request.URI)
			return json.Marshal(abi.ReadResourceResult{Contents: []abi.ResourceContents{{URI: i.Request.URI, Text: "x"}}})
		},
	}
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	pc := config.PluginConfig{
		Limits:    config.Limits{MaxListItems: 2},
		Tools:     []string{"search_*", "fetch"},
		Prompts:   []string{},
		Resources: []string{"docs://*"},
	}
	c := BuildCatalog(context.Background(), []*Plugin{guardedPlugin("p", pc, rt, logger)}, logger)
	var names []string
	for _, e := range c.tools {
		names = append(names, e.tool.Name)
	}
	if strings.Join(names, ",") != "search_a,search_b" {
		t.Errorf("tools exposed: %v; want the first 2 allowed", names)
	}
	if len(c.prompts) != 0 {
		t.Errorf("prompts = [] still exposed %d prompts", len(c.prompts))
	}
	if len(c.resources) != 1 || c.resources[0].resource.URI != "docs://guide" || len(c.templates) != 1 || c.templates[0].template.URITemplate != "docs://{page}" {
		t.Errorf("resources %d, templates %d", len(c.resources), len(c.templates))
	}
	if !strings.Contains(logs.String(), `msg="plugin lists too many tools; the rest are left out" plugin=p listed=4 kept=2 max_list_items=2`) {
		t.Errorf("no truncation warning:\n%s", logs.String())
	}
	// A read of a URI outside the allow-list is refused even if it reached
	// the plugin's runtime.
	p := c.plugins[0]
	var res abi.ReadResourceResult
	err := p.call(context.Background(), abi.ExportReadResource, abi.Input{Request: json.RawMessage(`{"uri":"secret://keys"}`)}, &res)
	if err == nil || !strings.Contains(err.Error(), `resource "secret://keys" is not exposed: it is not in the resources allow-list of [plugins.p]`) {
		t.Errorf("read outside the allow-list: %v", err)
	}
	if err := p.call(context.Background(), abi.ExportReadResource, abi.Input{Request: json.RawMessage(`{"uri":"docs://guide"}`)}, &res); err != nil {
		t.Errorf("read inside the allow-list: %v", err)
	}
	if strings.Join(read, ",") != "docs://guide" {
		t.Errorf("reads that reached the plugin: %v", read)
	}
}

func TestCheckPin(t *testing.T) {
	const abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if err := checkPin(config.PluginConfig{Name: "p", SHA256: abc}, []byte("abc")); err != nil {
		t.Errorf("matching pin: %v", err)
	}
	if err := checkPin(config.PluginConfig{Name: "p"}, []byte("abc")); err != nil {
		t.Errorf("no pin: %v", err)
	}
	err := checkPin(config.PluginConfig{Name: "p", SHA256: abc}, []byte("abd"))
	want := "plugin file does not match its sha256 pin: expected " + abc + ", actual a52d159f262b2c6ddb724a61840befc36eb30c88877a4030b65cbe86298449c9"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("mismatch: %v\nwant %s", err, want)
	}
}

func TestMissingGrantsMatchesPatternsAndSecrets(t *testing.T) {
	m := &abi.Manifest{ABI: abi.Version, Needs: abi.Needs{
		Hosts:  []string{"api.example.com", "files.example.org:8443"},
		Config: []string{"token"},
	}}
	pc := config.PluginConfig{
		AllowedHosts: []string{"https://api.example.com", "*.example.org:8443"},
		Secrets:      map[string]config.Secret{"token": {Env: "TOKEN"}},
	}
	if got := missingGrants("p", m, pc); got != "" {
		t.Errorf("granted by pattern and secret, still missing:\n%s", got)
	}
	pc.AllowedHosts = []string{"*.example.org"}
	if got := missingGrants("p", m, pc); !strings.Contains(got, `allowed_hosts = ["*.example.org", "api.example.com", "files.example.org:8443"]`) {
		t.Errorf("port not granted, got:\n%s", got)
	}
}
