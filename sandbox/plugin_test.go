package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/mcphost/mcphost/internal/testrig/wasmtest"
)

type hostFn = func(context.Context, []byte) ([]byte, error)

// hostcallFns returns the host functions the hostcall plugin imports, one of
// each signature, implemented by fns or else doing nothing.
func hostcallFns(fns map[string]hostFn) []HostFunction {
	out := []HostFunction{
		{Name: "roundtrip", Input: true, Output: true},
		{Name: "notify", Input: true},
		{Name: "ask", Output: true},
		{Name: "wait"},
	}
	for i := range out {
		out[i].Fn = fns[out[i].Name]
		if out[i].Fn == nil {
			out[i].Fn = func(context.Context, []byte) ([]byte, error) { return nil, nil }
		}
	}
	return out
}

func TestEcho(t *testing.T) {
	t.Parallel()
	p := load(t, "guest", Options{})
	if p.Name() != "guest" || !p.HasExport("echo") || p.HasExport("nope") || !p.Info().HasExport("echo") {
		t.Error("wrong name or exports")
	}
	for _, in := range []string{"", "hello", strings.Repeat("0123456789abcdef", 1<<14) + "xyz"} {
		if out := call(t, p, "echo", in); out != in {
			t.Errorf("echo of %d bytes returned %d bytes", len(in), len(out))
		}
	}
}

func TestPluginErrors(t *testing.T) {
	t.Parallel()
	p := load(t, "guest", Options{Limits: Limits{MaxInstances: 1}})

	_, err := p.Call(t.Context(), "fail", []byte("x"))
	if ce := wantKind(t, err, KindPlugin); ce.Message != "bad input: x" || ce.Plugin != "guest" || ce.Export != "fail" {
		t.Errorf("got %+v", ce)
	}
	_, err = p.Call(t.Context(), "status", nil)
	if ce := wantKind(t, err, KindPlugin); !strings.Contains(ce.Message, "returned 7") {
		t.Errorf("got %q", ce.Message)
	}
	_, err = p.Call(t.Context(), "nope", nil)
	wantKind(t, err, KindNoExport)
	if KindOf(err) != KindNoExport || KindOf(errors.New("x")) != 0 {
		t.Error("KindOf")
	}
	call(t, p, "echo", "still serving")
}

func TestTrap(t *testing.T) {
	t.Parallel()
	logs := &logRecorder{}
	p := load(t, "guest", Options{Limits: Limits{MaxInstances: 1}, Logger: logs.logger()})
	_, err := p.Call(t.Context(), "trap", nil)
	wantKind(t, err, KindTrap)
	if len(logs.records(t, "panic: boom")) != 1 {
		t.Error("the panic message did not reach the log")
	}
	// With one instance, the next call needs the trapped one replaced.
	call(t, p, "echo", "fresh instance")

	_, err = p.Call(t.Context(), "exit", []byte("3"))
	if ce := wantKind(t, err, KindTrap); ce.Message != "exited with status 3" {
		t.Errorf("got %q", ce.Message)
	}
	call(t, p, "echo", "fresh instance")

	// Extism takes exiting with status 0 as success, leaving a dead instance.
	call(t, p, "exit", "0")
	call(t, p, "echo", "fresh instance")
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	const timeout = time.Second
	p := load(t, "guest", Options{Limits: Limits{Timeout: timeout, MaxInstances: 1}})
	for _, export := range []string{"loop", "sleep"} {
		start := time.Now()
		_, err := p.Call(t.Context(), export, nil)
		if ce := wantKind(t, err, KindTimeout); !strings.Contains(ce.Message, "1s timeout") {
			t.Errorf("got %q", ce.Message)
		}
		if d := time.Since(start); d > timeout+5*time.Second {
			t.Errorf("%s ran %v past its %v timeout", export, d, timeout)
		}
		call(t, p, "echo", "still serving")
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	p := load(t, "guest", Options{Limits: Limits{MaxInstances: 1}})
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(200*time.Millisecond, cancel)
	_, err := p.Call(ctx, "loop", nil)
	wantKind(t, err, KindCanceled)
	_, err = p.Call(ctx, "echo", nil)
	wantKind(t, err, KindCanceled)
	call(t, p, "echo", "still serving")
}

func TestMemoryLimit(t *testing.T) {
	t.Parallel()
	p := load(t, "guest", Options{Limits: Limits{MemoryMiB: 32, MaxInstances: 1}})
	call(t, p, "grow", "8")
	_, err := p.Call(t.Context(), "grow", []byte("64"))
	wantKind(t, err, KindOutOfMemory)
	call(t, p, "echo", "still serving")
	// The kernel memory, which holds the input, has the same limit, and
	// Extism would run the plugin with an empty input if it did not fit.
	if got := call(t, p, "size", string(make([]byte, 16<<20))); got != "16777216" {
		t.Errorf("plugin got %s bytes of input", got)
	}
	_, err = p.Call(t.Context(), "size", make([]byte, 16<<20+1))
	wantKind(t, err, KindInputTooLarge)
}

func TestOutputTooLarge(t *testing.T) {
	t.Parallel()
	p := load(t, "guest", Options{Limits: Limits{MaxOutputBytes: 1 << 20, MaxInstances: 1}})
	if out := call(t, p, "bigout", "1048576"); len(out) != 1<<20 {
		t.Errorf("got %d bytes", len(out))
	}
	_, err := p.Call(t.Context(), "bigout", []byte("1048577"))
	wantKind(t, err, KindOutputTooLarge)
	call(t, p, "echo", "still serving")
}

func TestParallelCalls(t *testing.T) {
	t.Parallel()
	// Two plugins with two instances each; every call waits in a host
	// function until all four are in flight, which they only reach if the
	// calls run in parallel (else they time out).
	const perPlugin, total = 2, 4
	var inflight, most atomic.Int32
	allIn := make(chan struct{})
	var once sync.Once
	wait := func(ctx context.Context, _ []byte) ([]byte, error) {
		n := inflight.Add(1)
		defer inflight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		if n == total {
			once.Do(func() { close(allIn) })
		}
		select {
		case <-allIn:
		case <-ctx.Done():
		}
		return nil, nil
	}
	opts := Options{
		Limits:        Limits{MaxInstances: perPlugin, Timeout: 10 * time.Second},
		HostFunctions: hostcallFns(map[string]hostFn{"wait": wait}),
	}
	plugins := []*Plugin{load(t, "hostcall", opts), load(t, "hostcall", opts)}
	var wg sync.WaitGroup
	errs := make([]error, total)
	for i := range total {
		wg.Go(func() { _, errs[i] = plugins[i%2].Call(t.Context(), "call_wait", nil) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if got := most.Load(); got != total {
		t.Errorf("at most %d calls were in flight, want %d", got, total)
	}
}

func TestBusy(t *testing.T) {
	t.Parallel()
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	wait := func(ctx context.Context, _ []byte) ([]byte, error) {
		select {
		case entered <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil, nil
	}
	p := load(t, "hostcall", Options{
		Limits:        Limits{MaxInstances: 1, MaxQueue: 1},
		HostFunctions: hostcallFns(map[string]hostFn{"wait": wait}),
	})
	running := make(chan error, 1)
	go func() { _, err := p.Call(t.Context(), "call_wait", nil); running <- err }()
	<-entered
	queuedCtx, cancelQueued := context.WithCancel(t.Context())
	queued := make(chan error, 1)
	go func() { _, err := p.Call(queuedCtx, "call_wait", nil); queued <- err }()
	poll.Until(t, 10*time.Second, "a call waits in the queue", func() bool { return p.pool.waiting.Load() == 1 })

	_, err := p.Call(t.Context(), "call_wait", nil)
	if wantKind(t, err, KindBusy).SpentBudget {
		t.Error("a full queue is reported as a spent memory budget")
	}
	if !errors.Is(err, ErrBusy) {
		t.Error("not ErrBusy")
	}
	cancelQueued()
	wantKind(t, <-queued, KindCanceled)
	close(release)
	if err := <-running; err != nil {
		t.Fatal(err)
	}
	call(t, p, "call_wait", "")
}

func TestHostFunctions(t *testing.T) {
	t.Parallel()
	type sessionKey struct{}
	notes := make(chan string, 1)
	logs := &logRecorder{}
	p := load(t, "hostcall", Options{
		Logger: logs.logger(),
		HostFunctions: hostcallFns(map[string]hostFn{
			"roundtrip": func(ctx context.Context, in []byte) ([]byte, error) {
				switch string(in) {
				case "plain error":
					return nil, errors.New("it broke")
				case "coded error":
					return nil, &abi.Error{Code: abi.CodeInvalidParams, Message: "bad params", Data: json.RawMessage(`{"x":1}`)}
				}
				return []byte(ctx.Value(sessionKey{}).(string) + " " + string(in)), nil
			},
			"notify": func(ctx context.Context, in []byte) ([]byte, error) {
				notes <- ctx.Value(sessionKey{}).(string) + " " + string(in)
				return nil, errors.New("notify failed")
			},
			"ask": func(ctx context.Context, _ []byte) ([]byte, error) {
				return []byte("answer for " + ctx.Value(sessionKey{}).(string)), nil
			},
		}),
	})
	ctx := context.WithValue(t.Context(), sessionKey{}, "session-42")
	run := func(export, input string) string {
		out, err := p.Call(ctx, export, []byte(input))
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	if got := run("call_roundtrip", "ping"); got != "session-42 ping" {
		t.Errorf("roundtrip: got %q", got)
	}
	if got := run("call_ask", ""); got != "answer for session-42" {
		t.Errorf("ask: got %q", got)
	}
	run("call_notify", "note")
	if got := <-notes; got != "session-42 note" {
		t.Errorf("notify: got %q", got)
	}
	if recs := logs.records(t, "host function failed"); len(recs) != 1 || recs[0]["function"] != "notify" ||
		recs[0]["plugin"] != "hostcall" || recs[0]["error"] != "notify failed" {
		t.Errorf("notify error logged as %v", recs)
	}

	for input, want := range map[string]abi.Error{
		"plain error": {Code: abi.CodeInternalError, Message: "it broke"},
		"coded error": {Code: abi.CodeInvalidParams, Message: "bad params", Data: json.RawMessage(`{"x":1}`)},
	} {
		var got abi.HostFunctionError
		if err := json.Unmarshal([]byte(run("call_roundtrip", input)), &got); err != nil {
			t.Fatal(err)
		}
		if got.Error == nil || got.Error.Code != want.Code || got.Error.Message != want.Message || string(got.Error.Data) != string(want.Data) {
			t.Errorf("%s: got %+v, want %+v", input, got.Error, want)
		}
	}
}

func TestHostFunctionChecks(t *testing.T) {
	t.Parallel()
	wasm := testWasm(t, "hostcall")
	noop := func(context.Context, []byte) ([]byte, error) { return nil, nil }
	for want, fns := range map[string][]HostFunction{
		`unknown host function "ask"`: slices.DeleteFunc(hostcallFns(nil), func(f HostFunction) bool { return f.Name == "ask" }),
		"defined twice":               append(hostcallFns(nil), HostFunction{Name: "ask", Fn: noop}),
		"has no Fn":                   append(hostcallFns(nil), HostFunction{Name: "extra"}),
		"without a name":              append(hostcallFns(nil), HostFunction{Fn: noop}),
	} {
		_, err := engine.Load(t.Context(), "hostcall", wasm, Options{HostFunctions: fns})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want an error containing %q", err, want)
		}
	}
}

func TestConfig(t *testing.T) {
	t.Parallel()
	grants := Grants{Config: map[string]string{"greeting": "hello"}}
	p := load(t, "guest", Options{Grants: grants})
	grants.Config["greeting"] = "changed after load"
	if got := call(t, p, "config", "greeting"); got != "hello" {
		t.Errorf("got %q", got)
	}
	_, err := p.Call(t.Context(), "config", []byte("missing"))
	wantKind(t, err, KindPlugin)
}

func TestEnvironmentHidden(t *testing.T) {
	t.Setenv("MCPHOST_SANDBOX_SECRET", "hunter2")
	p := load(t, "guest", Options{})
	var got struct{ Env, Args []string }
	if err := json.Unmarshal([]byte(call(t, p, "environ", "")), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Env) != 0 || len(got.Args) != 0 {
		t.Errorf("plugin sees environment %q and arguments %q", got.Env, got.Args)
	}
}

func TestOutputGoesToLogger(t *testing.T) {
	t.Parallel()
	logs := &logRecorder{}
	p := load(t, "guest", Options{Logger: logs.logger()})
	call(t, p, "print", "")
	for msg, want := range map[string]map[string]any{
		"to stdout":  {"stream": "stdout", "level": "INFO"},
		"to stderr":  {"stream": "stderr", "level": "INFO"},
		"to the log": {"level": "INFO"},
	} {
		recs := logs.records(t, msg)
		if len(recs) != 1 {
			t.Fatalf("%d records of %q", len(recs), msg)
		}
		want["plugin"] = "guest"
		for k, v := range want {
			if recs[0][k] != v {
				t.Errorf("%q: %s=%v, want %v", msg, k, recs[0][k], v)
			}
		}
	}

	call(t, p, "flood", "")
	lines := logs.records(t, "line ")
	if n := len(lines); n == 0 || n > maxLogPerCall/len("line 0") {
		t.Errorf("%d lines of flood logged", n)
	}
	if n := len(logs.records(t, "plugin log limit reached")); n != 1 {
		t.Errorf("%d limit warnings", n)
	}
}

func TestWASIOutputVariableRefused(t *testing.T) {
	t.Setenv("EXTISM_ENABLE_WASI_OUTPUT", "1")
	_, err := engine.Load(t.Context(), "guest", testWasm(t, "guest"), Options{})
	if err == nil || !strings.Contains(err.Error(), "EXTISM_ENABLE_WASI_OUTPUT") {
		t.Errorf("got %v", err)
	}
}

func TestFilesystem(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ro, rw := filepath.Join(dir, "ro"), filepath.Join(dir, "rw")
	for _, d := range []string{ro, rw} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ro, "hello.txt"), []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("no mounts", func(t *testing.T) {
		p := load(t, "guest", Options{})
		for _, path := range []string{filepath.Join(ro, "hello.txt"), "/hello.txt", "hello.txt"} {
			_, err := p.Call(t.Context(), "readfile", []byte(path))
			wantKind(t, err, KindPlugin)
		}
	})

	p := load(t, "guest", Options{Grants: Grants{Mounts: []Mount{
		{HostPath: ro, GuestPath: "/data", ReadOnly: true},
		{HostPath: rw, GuestPath: "/rw"},
	}}})
	t.Run("read-only mount", func(t *testing.T) {
		if got := call(t, p, "readfile", "/data/hello.txt"); got != "hi" {
			t.Errorf("got %q", got)
		}
		for _, path := range []string{"/data/new.txt", "/data/hello.txt"} {
			_, err := p.Call(t.Context(), "writefile", []byte(path))
			wantKind(t, err, KindPlugin)
		}
		if _, err := os.Stat(filepath.Join(ro, "new.txt")); !os.IsNotExist(err) {
			t.Errorf("write to a read-only mount reached the host: %v", err)
		}
		if got := call(t, p, "readfile", "/data/hello.txt"); got != "hi" {
			t.Errorf("got %q", got)
		}
	})
	t.Run("writable mount", func(t *testing.T) {
		call(t, p, "writefile", "/rw/new.txt")
		if b, err := os.ReadFile(filepath.Join(rw, "new.txt")); err != nil || string(b) != "written" {
			t.Errorf("got %q, %v", b, err)
		}
		if _, err := p.Call(t.Context(), "readfile", []byte("/rw/../ro/hello.txt")); err == nil {
			t.Error("read outside the mount with ..")
		}
	})
	t.Run("no symlinks out of a mount", func(t *testing.T) {
		for _, link := range []string{"/rw/escape", "/data/escape"} {
			_, err := p.Call(t.Context(), "symlink", []byte(link))
			wantKind(t, err, KindPlugin)
		}
		if _, err := os.Lstat(filepath.Join(rw, "escape")); !os.IsNotExist(err) {
			t.Errorf("plugin created a symlink: %v", err)
		}
	})
	t.Run("host links are followed only inside the mount", func(t *testing.T) {
		secret := filepath.Join(dir, "secret.txt")
		if err := os.WriteFile(secret, []byte("host secret"), 0o644); err != nil {
			t.Fatal(err)
		}
		for link, target := range map[string]string{
			filepath.Join(ro, "in"):        "hello.txt",
			filepath.Join(ro, "absin"):     filepath.Join(ro, "hello.txt"),
			filepath.Join(ro, "roundtrip"): "../" + filepath.Base(ro) + "/hello.txt",
			filepath.Join(ro, "out"):       "../secret.txt",
			filepath.Join(ro, "absout"):    secret,
			filepath.Join(ro, "up"):        "..",
			filepath.Join(ro, "chain"):     "out",
			filepath.Join(rw, "dangling"):  "../created.txt",
		} {
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
		}
		for _, path := range []string{"/data/in", "/data/absin", "/data/roundtrip"} {
			if got := call(t, p, "readfile", path); got != "hi" {
				t.Errorf("%s: got %q", path, got)
			}
		}
		for _, path := range []string{"/data/out", "/data/absout", "/data/up/secret.txt", "/data/chain", "/data/up"} {
			out, err := p.Call(t.Context(), "readfile", []byte(path))
			if ce := wantKind(t, err, KindPlugin); !strings.Contains(ce.Message, "Permission denied") {
				t.Errorf("%s: got %q, %q; want permission denied", path, out, ce.Message)
			}
		}
		_, err := p.Call(t.Context(), "writefile", []byte("/rw/dangling"))
		if ce := wantKind(t, err, KindPlugin); !strings.Contains(ce.Message, "Permission denied") {
			t.Errorf("write through a dangling link: %q", ce.Message)
		}
		if _, err := os.Stat(filepath.Join(dir, "created.txt")); !os.IsNotExist(err) {
			t.Errorf("a write through a link created a file outside the mount: %v", err)
		}
	})
	t.Run("bad mounts", func(t *testing.T) {
		for _, m := range []Mount{
			{HostPath: filepath.Join(dir, "missing"), GuestPath: "/x"},
			{HostPath: filepath.Join(ro, "hello.txt"), GuestPath: "/x"},
			{HostPath: ro, GuestPath: "relative"},
		} {
			if _, err := engine.Load(t.Context(), "guest", testWasm(t, "guest"), Options{Grants: Grants{Mounts: []Mount{m}}}); err == nil {
				t.Errorf("mount %+v accepted", m)
			}
		}
	})
}

func TestClose(t *testing.T) {
	t.Parallel()
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	wait := func(ctx context.Context, _ []byte) ([]byte, error) {
		entered <- struct{}{}
		<-release
		return nil, nil
	}
	p := load(t, "hostcall", Options{
		Limits:        Limits{MaxInstances: 1},
		HostFunctions: hostcallFns(map[string]hostFn{"wait": wait}),
	})
	running := make(chan error, 1)
	go func() { _, err := p.Call(t.Context(), "call_wait", nil); running <- err }()
	<-entered
	queued := make(chan error, 1)
	go func() { _, err := p.Call(t.Context(), "call_wait", nil); queued <- err }()
	poll.Until(t, 10*time.Second, "a call waits in the queue", func() bool { return p.pool.waiting.Load() == 1 })

	if err := p.Close(t.Context()); err != nil { // must not wait for the running call
		t.Fatal(err)
	}
	if err := <-queued; !errors.Is(err, ErrClosed) {
		t.Errorf("queued call: got %v, want ErrClosed", err)
	}
	if _, err := p.Call(t.Context(), "call_wait", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("call after Close: got %v, want ErrClosed", err)
	}
	close(release)
	if err := <-running; err != nil {
		t.Errorf("running call: %v", err)
	}
	if p.pool.inUse != 0 || len(p.pool.idle) != 0 {
		t.Error("instances left after Close")
	}
}

func TestStartFunctionTimeout(t *testing.T) {
	t.Parallel()
	// wazero runs a module's start function while instantiating it, even
	// though Extism skips _start.
	start := time.Now()
	_, err := engine.Load(t.Context(), "spin", wasmtest.SpinModule(), Options{Limits: Limits{Timeout: 200 * time.Millisecond}})
	if err == nil || !strings.Contains(err.Error(), "timeout") {
		t.Errorf("got %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Load took %v", d)
	}
}

func TestLimitsDefaults(t *testing.T) {
	t.Parallel()
	got, err := Limits{MaxQueue: 1, Timeout: -time.Second}.withDefaults()
	want := Limits{MemoryMiB: DefaultMemoryMiB, Timeout: DefaultTimeout, MaxOutputBytes: DefaultMaxOutputBytes,
		MaxInstances: DefaultMaxInstances, MaxQueue: 1, HostCallsPerSecond: DefaultHostCallRate, MaxModuleMiB: DefaultMaxModuleMiB}
	if err != nil || got != want {
		t.Errorf("got %+v, %v", got, err)
	}
	if got, _ := (Limits{MaxQueue: NoQueue}).withDefaults(); got.MaxQueue != 0 {
		t.Errorf("NoQueue: MaxQueue %d", got.MaxQueue)
	}
	if got, _ := (Limits{}).withDefaults(); got.MaxQueue != DefaultMaxQueue {
		t.Errorf("zero MaxQueue: %d", got.MaxQueue)
	}
	for _, mib := range []uint32{minMemoryMiB - 1, maxMemoryMiB + 1} {
		if _, err := (Limits{MemoryMiB: mib}).withDefaults(); err == nil {
			t.Errorf("memory limit of %d MiB accepted", mib)
		}
	}
}
