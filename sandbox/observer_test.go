package sandbox

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/poll"
)

// recorder is an Observer that keeps what it is told.
type recorder struct {
	mu       sync.Mutex
	events   []string
	calls    []CallReport
	hosts    []string // function, or "denied function"
	requests []string // rule, or "denied rule"
}

func (r *recorder) Called(_ context.Context, c CallReport) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
}

func (r *recorder) HostCalled(_ context.Context, function string, denied bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hosts = append(r.hosts, deniedOr(function, denied))
}

func (r *recorder) Requested(_ context.Context, rule string, denied bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = append(r.requests, deniedOr(rule, denied))
}

func (r *recorder) Happened(event string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, event)
}

func deniedOr(s string, denied bool) string {
	if denied {
		return "denied " + s
	}
	return s
}

// TestObserverIsToldOfEachCallWithItsWaitRunAndKind: every call that ends,
// however, is reported once with its export and error kind; a call that
// waited for a busy instance reports the wait apart from its run.
func TestObserverIsToldOfEachCallWithItsWaitRunAndKind(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	p := load(t, "guest", Options{Observer: rec, Limits: Limits{MaxInstances: 1}})
	call(t, p, "echo", "hi")
	_, errTrap := p.Call(t.Context(), "trap", nil)
	_, errNone := p.Call(t.Context(), "nope", nil)
	// A sleep cut off after 300 ms holds the only instance while an echo
	// waits for it.
	sleeping := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		_, err := p.Call(ctx, "sleep", nil)
		sleeping <- err
	}()
	poll.Until(t, 10*time.Second, "the sleep holds the instance", func() bool { return p.Stats().Busy == 1 })
	call(t, p, "echo", "after")
	if err := <-sleeping; !errors.Is(err, ErrTimeout) {
		t.Fatalf("the sleep ended with %v, want a timeout", err)
	}
	if !errors.Is(errTrap, ErrTrap) || !errors.Is(errNone, ErrNoExport) {
		t.Fatalf("errors: %v, %v", errTrap, errNone)
	}

	rec.mu.Lock()
	defer rec.mu.Unlock()
	got := make([]string, len(rec.calls))
	for i, c := range rec.calls {
		got[i] = c.Export + ":" + kindName(c.Kind)
	}
	want := []string{"echo:ok", "trap:" + ErrTrap.Error(), "nope:" + ErrNoExport.Error(), "sleep:" + ErrTimeout.Error(), "echo:ok"}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("calls reported %q, want %q", got, want)
	}
	for _, c := range rec.calls {
		switch {
		case c.Export == "sleep" && (c.Run <= 0 || c.Wait+c.Run < 250*time.Millisecond):
			// Its 300 ms timeout covers its wait and its run.
			t.Errorf("the sleep waited %v and ran %v, want about 300ms in all", c.Wait, c.Run)
		case c.Export == "nope" && c.Run != 0:
			t.Errorf("a call of no export ran %v", c.Run)
		}
	}
	last := rec.calls[len(rec.calls)-1]
	if last.Export != "echo" || last.Wait < 100*time.Millisecond || last.Run > last.Wait {
		t.Errorf("the echo that waited for the sleep reported wait %v, run %v; want a wait of over 100ms and a short run", last.Wait, last.Run)
	}
}

func kindName(k ErrorKind) string {
	if k == 0 {
		return "ok"
	}
	return k.String()
}

// TestObserverIsToldOfHostFunctionCallsAndDenials: each host function call
// is reported with its name, and one the plugin is not granted as denied.
func TestObserverIsToldOfHostFunctionCallsAndDenials(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	fns := hostcallFns(map[string]hostFn{
		"ask": func(context.Context, []byte) ([]byte, error) { return nil, errors.New("not granted") },
	})
	for i := range fns {
		fns[i].Denied = fns[i].Name == "ask"
	}
	p := load(t, "hostcall", Options{Observer: rec, HostFunctions: fns})
	call(t, p, "call_roundtrip", "")
	call(t, p, "call_ask", "")
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if want := []string{"roundtrip", "denied ask"}; !slices.Equal(rec.hosts, want) {
		t.Errorf("host calls reported %q, want %q", rec.hosts, want)
	}
}

// TestObserverIsToldOfEgressByRule: an allowed request is reported with
// the allowed_hosts entry that granted it; a refused one as denied, and
// the call it stopped as KindDenied.
func TestObserverIsToldOfEgressByRule(t *testing.T) {
	t.Parallel()
	server := newHTTPServer(t, pong())
	rec := &recorder{}
	opts := grantHosts("example.com", "127.0.0.1:"+server.port)
	opts.Observer = rec
	p := load(t, "guest", opts)
	if _, err := httpGet(t, p, server.URL); err != nil {
		t.Fatal(err)
	}
	_, err := httpGet(t, p, "http://api.example.org/v1")
	wantKind(t, err, KindDenied)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if want := []string{"127.0.0.1:" + server.port, "denied "}; !slices.Equal(rec.requests, want) {
		t.Errorf("requests reported %q, want %q", rec.requests, want)
	}
	if k := rec.calls[len(rec.calls)-1].Kind; k != KindDenied {
		t.Errorf("the refused call was reported as %v", k)
	}
}

// The observer is told of a plugin's build and of each instance made: the
// first at load, another after a trap discarded it.
func TestObserverIsToldOfThePluginsLife(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	p := load(t, "guest", Options{Observer: rec, Limits: Limits{MaxInstances: 1}})
	if _, err := p.Call(t.Context(), "trap", nil); !errors.Is(err, ErrTrap) {
		t.Fatalf("trap: %v", err)
	}
	call(t, p, "echo", "after")
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if want := []string{EventBuilt, EventInstantiated, EventInstantiated}; !slices.Equal(rec.events, want) {
		t.Errorf("events %q, want %q", rec.events, want)
	}
}

// With a cache folder, each build says whether it compiled the module or
// loaded its code from the compilation cache: the first of a module in a
// new folder compiles; another plugin of the same bytes, and a new Engine
// over the same folder, load it.
func TestObserverIsToldWhetherABuildHitTheCompilationCache(t *testing.T) {
	t.Parallel()
	dir, wasm := t.TempDir(), testWasm(t, "guest")
	build := func(e *Engine) []string {
		t.Helper()
		rec := &recorder{}
		p, err := e.Load(t.Context(), "guest", wasm, Options{Observer: rec})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close(context.Background()) })
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return slices.Clone(rec.events)
	}
	newEngine := func() *Engine {
		e, err := NewEngine(EngineOptions{CacheDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Close() })
		return e
	}
	first := newEngine()
	for i, want := range [][]string{
		{EventBuilt, EventCompiled, EventInstantiated},        // a new folder
		{EventBuilt, EventLoadedFromCache, EventInstantiated}, // the same bytes: the code in memory
	} {
		if got := build(first); !slices.Equal(got, want) {
			t.Errorf("build %d: events %q, want %q", i+1, got, want)
		}
	}
	if got, want := build(newEngine()), []string{EventBuilt, EventLoadedFromCache, EventInstantiated}; !slices.Equal(got, want) {
		t.Errorf("a new Engine over the folder: events %q, want %q", got, want)
	}
}
