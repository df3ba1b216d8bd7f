package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/mcphost/mcphost/internal/testrig/syncbuf"
	"github.com/tetratelabs/wazero"
)

// The test plugins are built from sandbox/testdata/<name> once per run, into
// wasmDir, and compiled once into the shared engine.
var (
	wasmDir string
	engine  *Engine
	builds  sync.Map // name → *build
)

type build struct {
	once sync.Once
	wasm []byte
	err  error
}

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	dir, err := os.MkdirTemp("", "sandbox-test-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	wasmDir = dir
	engine, err = NewEngine(EngineOptions{})
	if err != nil {
		return 0, err
	}
	defer engine.Close()
	return m.Run(), nil
}

// testWasm returns the test plugin name, building it and compiling it into
// the shared engine on first use so that parallel tests do not all compile
// it at once.
func testWasm(t testing.TB, name string) []byte {
	t.Helper()
	v, _ := builds.LoadOrStore(name, &build{})
	b := v.(*build)
	b.once.Do(func() { b.wasm, b.err = buildPlugin(name) })
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.wasm
}

func buildPlugin(name string) ([]byte, error) {
	root, err := plugintest.ModuleRoot()
	if err != nil {
		return nil, err
	}
	out := filepath.Join(wasmDir, name+".wasm")
	if err := plugintest.BuildTo(root, "sandbox/testdata/"+name, out); err != nil {
		return nil, err
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	// Compile it into the engine's cache as Load would.
	compiled, err := engine.prepare(context.Background(), wasm, DefaultMaxModuleMiB<<20)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().
		WithCompilationCache(engine.code.shared).
		WithCloseOnContextDone(true))
	defer rt.Close(ctx)
	if _, err := rt.CompileModule(ctx, compiled); err != nil {
		return nil, err
	}
	return wasm, nil
}

// load loads the test plugin name, closing it when the test ends.
func load(t *testing.T, name string, opts Options) *Plugin {
	t.Helper()
	p, err := engine.Load(t.Context(), name, testWasm(t, name), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return p
}

// call calls export and fails the test on error.
func call(t *testing.T, p *Plugin, export string, input string) string {
	t.Helper()
	out, err := p.Call(t.Context(), export, []byte(input))
	if err != nil {
		t.Fatalf("%s(%q): %v", export, input, err)
	}
	return string(out)
}

// wantKind checks that err is a *CallError of kind want.
func wantKind(t *testing.T, err error, want ErrorKind) *CallError {
	t.Helper()
	var ce *CallError
	if !errors.As(err, &ce) {
		t.Fatalf("got error %v, want a %v CallError", err, want)
	}
	if ce.Kind != want || !errors.Is(err, want.sentinel()) {
		t.Fatalf("got %v (kind %d), want kind %v", err, ce.Kind, want)
	}
	return ce
}

// logRecorder collects the JSON records of a logger.
type logRecorder struct{ buf syncbuf.Buffer }

func (r *logRecorder) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(&r.buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// records returns the records logged so far whose message contains msg.
func (r *logRecorder) records(t *testing.T, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(r.buf.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(rec["msg"].(string), msg) {
			out = append(out, rec)
		}
	}
	return out
}
