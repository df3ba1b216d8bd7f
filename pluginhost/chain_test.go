package pluginhost

import (
	"context"
	"crypto/sha256"
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
	"github.com/mcphost/mcphost/host"
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

// wantBreakerState fails unless the breaker reports state.
func wantBreakerState(t *testing.T, b *breaker, state string) {
	t.Helper()
	if got := b.stateName(); got != state {
		t.Errorf("breaker state %q, want %q", got, state)
	}
}

func TestBreakerOpensProbesAndCloses(t *testing.T) {
	clock := &fakeClock{t: time.Unix(0, 0)}
	var logs strings.Builder // the breaker logs from the test's goroutine only
	b := newBreaker("flaky", breakerSettings{failures: 3, window: 10 * time.Second, backoff: time.Second, maxBackoff: 3 * time.Second},
		slog.New(slog.NewTextHandler(&logs, nil)).With("plugin", "flaky"), clock.now)
	fail := func() {
		t.Helper()
		probe, err := b.allow()
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
	if _, err := b.allow(); err != nil {
		t.Fatalf("opened by failures outside the window: %v", err)
	}
	b.done(false, success, "")
	wantBreakerState(t, b, BreakerClosed)
	fail() // the third within the window
	wantBreakerState(t, b, BreakerOpen)
	_, err := b.allow()
	var ce *host.CallError
	if !errors.As(err, &ce) || ce.Reason != reasonUnavailable || ce.Outcome != "breaker_open" || !strings.Contains(err.Error(),
		"circuit breaker open after repeated failures (last: plugin trapped: boom); calls fail at once until a probe succeeds: next probe in 1s") {
		t.Fatalf("open breaker: %v", err)
	}
	// Half-open: one probe runs, the others are refused.
	clock.add(time.Second)
	wantBreakerState(t, b, BreakerHalfOpen) // before the next call finds it so
	probe, err := b.allow()
	if err != nil || !probe {
		t.Fatalf("half-open: probe=%v err=%v", probe, err)
	}
	if _, err := b.allow(); err == nil || !strings.Contains(err.Error(), "a probe call is running") {
		t.Fatalf("second call while probing: %v", err)
	}
	// A failed probe doubles the back-off, up to the cap.
	b.done(true, failure, "plugin call timed out")
	for _, backoff := range []time.Duration{2 * time.Second, 3 * time.Second} {
		if _, err := b.allow(); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("next probe in %s", backoff)) {
			t.Fatalf("after a failed probe: %v, want a back-off of %v", err, backoff)
		}
		clock.add(backoff)
		probe, _ := b.allow()
		b.done(probe, failure, "plugin call timed out")
	}
	if _, err := b.allow(); err == nil || !strings.Contains(err.Error(), "next probe in 3s") {
		t.Fatalf("back-off not capped: %v", err)
	}
	// A neutral probe (cancelled) decides nothing; a good one closes it.
	clock.add(3 * time.Second)
	probe, _ = b.allow()
	b.done(probe, neutral, "")
	probe, err = b.allow()
	if !probe || err != nil {
		t.Fatalf("after a neutral probe: probe=%v err=%v", probe, err)
	}
	b.done(probe, success, "")
	if probe, err := b.allow(); probe || err != nil {
		t.Fatalf("closed breaker: probe=%v err=%v", probe, err)
	}
	// Closed again with the first back-off.
	fail()
	fail()
	fail()
	if _, err := b.allow(); err == nil || !strings.Contains(err.Error(), "next probe in 1s") {
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
		err  error
		want outcome
	}{
		{nil, success},
		{&sandbox.CallError{Kind: sandbox.KindPlugin}, success},
		{&sandbox.CallError{Kind: sandbox.KindTrap}, failure},
		{&sandbox.CallError{Kind: sandbox.KindTimeout}, failure},
		{&sandbox.CallError{Kind: sandbox.KindOutputTooLarge}, failure},
		{&sandbox.CallError{Kind: sandbox.KindMalformedOutput}, failure},
		{&sandbox.CallError{Kind: sandbox.KindDenied}, failure},
		{&sandbox.CallError{Kind: sandbox.KindCanceled}, neutral},
		{&sandbox.CallError{Kind: sandbox.KindBusy}, neutral},
		{errors.New("plugin closed"), neutral},
	} {
		if got, _ := classify(c.err); got != c.want {
			t.Errorf("classify(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestCheckOutputRefusesWhatIsNotJSON(t *testing.T) {
	for out, ok := range map[string]bool{`{"ok":true}`: true, `{"truncated`: false, "\xff\xfe": false} {
		if err := checkOutput(abi.ExportCallTool, []byte(out)); (err == nil) != ok {
			t.Errorf("checkOutput(%q) = %v", out, err)
		}
	}
	if err := checkOutput(abi.ExportOnRootsListChanged, []byte("anything")); err != nil {
		t.Errorf("the roots notification answers nothing in particular: %v", err)
	}
}

func TestRateLimitAnswersAtOnce(t *testing.T) {
	var calls int
	rt := fakeRuntime{
		abi.ExportListTools: returns(abi.ListToolsResult{}),
		abi.ExportCallTool: func(context.Context, []byte) ([]byte, error) {
			calls++
			return []byte(`{"content":[]}`), nil
		},
	}
	pc := config.PluginConfig{Limits: config.Limits{CallsPerSecond: 0.001}} // one call, then none for a long time
	limited, _ := chain("slow", pc, rt, nil, slog.New(slog.DiscardHandler))
	if _, err := limited.Call(t.Context(), abi.ExportCallTool, nil); err != nil {
		t.Fatalf("first call refused: %v", err)
	}
	start := time.Now()
	_, err := limited.Call(t.Context(), abi.ExportCallTool, nil)
	var ce *host.CallError
	if !errors.As(err, &ce) || ce.Reason != reasonRateLimited || ce.Outcome != "rate_limited" ||
		ce.Message != "more than 0.001 calls per second (calls_per_second of [plugins.slow]); try again shortly" {
		t.Errorf("second call: %#v", err)
	}
	if calls != 1 || time.Since(start) > time.Second {
		t.Errorf("the refused call ran (%d calls) or waited (%v)", calls, time.Since(start))
	}
	if _, err := limited.Call(t.Context(), abi.ExportListTools, nil); err != nil {
		t.Errorf("a listing the host makes is not rate limited: %v", err)
	}
}

func TestEngineErrorsCarryTheSandboxKind(t *testing.T) {
	rt := fakeRuntime{
		"own": func(context.Context, []byte) ([]byte, error) {
			return nil, &sandbox.CallError{Kind: sandbox.KindPlugin, Message: "mine"}
		},
		"trap": func(context.Context, []byte) ([]byte, error) {
			return nil, &sandbox.CallError{Kind: sandbox.KindTrap, Message: "boom"}
		},
		"gone": func(context.Context, []byte) ([]byte, error) {
			return nil, &sandbox.CallError{Kind: sandbox.KindCanceled, Message: "x"}
		},
		"plain": func(context.Context, []byte) ([]byte, error) { return nil, errors.New("plain") },
	}
	c, _ := chain("p", config.PluginConfig{}, rt, nil, slog.New(slog.DiscardHandler))
	for export, want := range map[string]host.CallError{
		"own":  {Own: true, Reason: "plugin error", Message: "mine", Outcome: "plugin_error"},
		"trap": {Reason: "plugin trapped", Message: "boom", Outcome: "trap"},
		"gone": {Reason: "plugin call canceled", Message: "x", Canceled: true, Outcome: "canceled"},
	} {
		_, err := c.Call(t.Context(), export, nil)
		var ce *host.CallError
		if !errors.As(err, &ce) || *ce != want {
			t.Errorf("%s: %#v, want %#v", export, err, want)
		}
	}
	if _, err := c.Call(t.Context(), "plain", nil); err == nil || err.Error() != "plain" {
		t.Errorf("an error that is no sandbox error passes as is: %v", err)
	}
}

func TestExposureFollowsTheAllowLists(t *testing.T) {
	e := exposure(config.PluginConfig{
		Limits:    config.Limits{MaxListItems: 2},
		Tools:     []string{"search_*", "fetch"},
		Prompts:   []string{},
		Resources: []string{"docs://*"},
	})
	for _, c := range []struct {
		allow func(string) bool
		name  string
		want  bool
	}{
		{e.Tool, "search_a", true}, {e.Tool, "fetch", true}, {e.Tool, "delete_all", false},
		{e.Prompt, "public", false},
		{e.Resource, "docs://guide", true}, {e.Resource, "docs://{page}", true}, {e.Resource, "secret://keys", false},
	} {
		if got := c.allow(c.name); got != c.want {
			t.Errorf("%s: allowed %v, want %v", c.name, got, c.want)
		}
	}
	if e.MaxListItems != 2 {
		t.Errorf("MaxListItems %d", e.MaxListItems)
	}
	if all := exposure(config.PluginConfig{}); all.Tool != nil || all.Prompt != nil || all.Resource != nil {
		t.Error("lists left out of the config must allow everything")
	}
}

func TestCheckPin(t *testing.T) {
	const abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if err := checkPin(config.PluginConfig{Name: "p", SHA256: abc}, sha256.Sum256([]byte("abc"))); err != nil {
		t.Errorf("matching pin: %v", err)
	}
	if err := checkPin(config.PluginConfig{Name: "p"}, sha256.Sum256([]byte("abc"))); err != nil {
		t.Errorf("no pin: %v", err)
	}
	err := checkPin(config.PluginConfig{Name: "p", SHA256: abc}, sha256.Sum256([]byte("abd")))
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

// fakeRuntime is a plugin runtime made of Go functions, one per export.
type fakeRuntime map[string]func(ctx context.Context, in []byte) ([]byte, error)

func (f fakeRuntime) Call(ctx context.Context, export string, in []byte) ([]byte, error) {
	fn, ok := f[export]
	if !ok {
		return nil, &sandbox.CallError{Export: export, Kind: sandbox.KindNoExport, Message: "no such export"}
	}
	return fn(ctx, in)
}
func (f fakeRuntime) HasExport(name string) bool  { _, ok := f[name]; return ok }
func (f fakeRuntime) Close(context.Context) error { return nil }

// returns makes an export that always answers v as JSON.
func returns(v any) func(context.Context, []byte) ([]byte, error) {
	return func(context.Context, []byte) ([]byte, error) { return json.Marshal(v) }
}

func TestEitherNameOfElicitationCompleteGrantsBoth(t *testing.T) {
	for _, need := range []string{abi.HostNotifyElicitationComplete, abi.HostNotifyURLElicitationCompleted} {
		for _, grant := range []string{abi.HostNotifyElicitationComplete, abi.HostNotifyURLElicitationCompleted} {
			m := &abi.Manifest{ABI: abi.Version, Needs: abi.Needs{HostFunctions: []string{need}}}
			if got := missingGrants("p", m, config.PluginConfig{HostFunctions: []string{grant}}); got != "" {
				t.Errorf("needs %s, granted %s: missing\n%s", need, grant, got)
			}
			impl := map[string]host.HostFunc{need: func(context.Context, []byte) ([]byte, error) { return nil, nil }}
			for _, f := range hostFunctions("p", []string{grant}, impl) {
				if f.Name == need {
					if _, err := f.Fn(t.Context(), []byte(`{"elicitationId":"x"}`)); err != nil {
						t.Errorf("needs %s, granted %s: %v", need, grant, err)
					}
				}
			}
		}
	}
}

// TestHostFunctionsNotGrantedAreMarkedDenied: a function the plugin is not
// granted, or that this mcphost lacks, is marked Denied, for the sandbox's
// Observer to count its calls as denials; a granted one is not.
func TestHostFunctionsNotGrantedAreMarkedDenied(t *testing.T) {
	impl := map[string]host.HostFunc{
		abi.HostCreateMessage:     func(context.Context, []byte) ([]byte, error) { return nil, nil },
		abi.HostCreateElicitation: func(context.Context, []byte) ([]byte, error) { return nil, nil },
	}
	fns := hostFunctions("p", []string{abi.HostCreateMessage, abi.HostListRoots}, impl)
	if len(fns) == 0 {
		t.Fatal("no host functions")
	}
	for _, f := range fns {
		if want := f.Name != abi.HostCreateMessage; f.Denied != want {
			t.Errorf("%s: Denied = %v, want %v", f.Name, f.Denied, want)
		}
	}
}

// TestEngineErrorsNameTheSettingToChange: an error that a limit caused
// names the key of the plugin's table that would raise it.
func TestEngineErrorsNameTheSettingToChange(t *testing.T) {
	fail := func(kind sandbox.ErrorKind, msg string) func(context.Context, []byte) ([]byte, error) {
		return func(context.Context, []byte) ([]byte, error) {
			return nil, &sandbox.CallError{Kind: kind, Message: msg}
		}
	}
	rt := fakeRuntime{
		"oom":     fail(sandbox.KindOutOfMemory, "all 16 MiB of its memory were in use"),
		"slow":    fail(sandbox.KindTimeout, "exceeded the 2s timeout"),
		"big":     fail(sandbox.KindOutputTooLarge, "output of 9 bytes exceeds the limit of 8"),
		"input":   fail(sandbox.KindInputTooLarge, "input of 9 bytes exceeds the limit of 8"),
		"queue":   fail(sandbox.KindBusy, "4 calls running and 64 waiting"),
		"crashed": fail(sandbox.KindTrap, "wasm error: unreachable"),
		"budget": func(context.Context, []byte) ([]byte, error) {
			return nil, &sandbox.CallError{Kind: sandbox.KindBusy, SpentBudget: true, Message: "memory_budget_mib = 64 is spent: ..."}
		},
	}
	c, _ := chain("notes", config.PluginConfig{}, rt, nil, slog.New(slog.DiscardHandler))
	for export, want := range map[string]string{
		"oom":     "plugin ran out of memory: all 16 MiB of its memory were in use; raise memory_mib in [plugins.notes] (or [defaults]) of the server's config",
		"slow":    "plugin call timed out: exceeded the 2s timeout; raise timeout in [plugins.notes] (or [defaults]) of the server's config",
		"big":     "plugin output too large: output of 9 bytes exceeds the limit of 8; raise max_output_bytes in [plugins.notes] (or [defaults]) of the server's config",
		"input":   "plugin input too large: input of 9 bytes exceeds the limit of 8; the input may take half of memory_mib: raise memory_mib in [plugins.notes] (or [defaults]) of the server's config",
		"queue":   "plugin busy: 4 calls running and 64 waiting; raise max_instances or max_queue in [plugins.notes] (or [defaults]) of the server's config",
		"budget":  "plugin busy: memory_budget_mib = 64 is spent: ...",
		"crashed": "plugin trapped: wasm error: unreachable",
	} {
		_, err := c.Call(t.Context(), export, nil)
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v\nwant %s", export, err, want)
		}
	}
}

// Each way a sandbox call fails has an outcome of its own for the metrics
// (host.PluginCall); a spent memory budget is told apart from a full queue,
// though both are the sandbox's KindBusy.
func TestEngineErrorsNameTheOutcome(t *testing.T) {
	for kind, want := range map[sandbox.ErrorKind]string{
		sandbox.KindPlugin: "plugin_error", sandbox.KindTrap: "trap", sandbox.KindTimeout: "timeout",
		sandbox.KindCanceled: "canceled", sandbox.KindInputTooLarge: "input_too_large",
		sandbox.KindOutputTooLarge: "output_too_large", sandbox.KindNoExport: "no_export",
		sandbox.KindMalformedOutput: host.OutcomeMalformedOutput, sandbox.KindOutOfMemory: "out_of_memory",
		sandbox.KindDenied: "denied",
	} {
		if got := callOutcome(&sandbox.CallError{Kind: kind}); got != want {
			t.Errorf("%v: outcome %q, want %q", kind, got, want)
		}
	}
	if got := callOutcome(&sandbox.CallError{Kind: sandbox.KindBusy, Message: "4 calls running and 64 waiting"}); got != "queue_full" {
		t.Errorf("a full queue: %q, want queue_full", got)
	}
	if got := callOutcome(&sandbox.CallError{Kind: sandbox.KindBusy, SpentBudget: true, Message: "no room"}); got != "memory_budget" {
		t.Errorf("a spent budget: %q, want memory_budget", got)
	}
}

// A failed load is named in a word: its load budget, a module that is
// not valid WebAssembly, a plugin that failed starting, or another cause.
func TestFailureReasons(t *testing.T) {
	for err, want := range map[error]string{
		fmt.Errorf("listing: %w", context.DeadlineExceeded):                FailedLoadBudget,
		fmt.Errorf("not a valid wasm module: %w", sandbox.ErrBadMagic):     FailedInvalidModule,
		fmt.Errorf("sandbox: load x: %w", sandbox.ErrInvalidModule):        FailedInvalidModule,
		&sandbox.CallError{Kind: sandbox.KindTrap, Message: "unreachable"}: FailedStart,
		errors.New("plugin is built for mcphost ABI 9"):                    FailedOther,
	} {
		if got := failureReason(err); got != want {
			t.Errorf("%v: %q, want %q", err, got, want)
		}
	}
}
