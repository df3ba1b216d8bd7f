package sandbox

import (
	"bytes"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/wasmtest"
)

func TestCompilationCache(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	countFiles := func() int {
		n := 0
		err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				n++
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	var files []int
	for range 2 {
		e, err := NewEngine(EngineOptions{CacheDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		p, err := e.Load(t.Context(), "run", wasmtest.RunModule(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Call(t.Context(), "run", nil); err != nil {
			t.Fatal(err)
		}
		if err := p.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		files = append(files, countFiles())
	}
	// The plugin and the Extism kernel are cached by the first engine and
	// found there by the second.
	if files[0] < 2 || files[1] != files[0] {
		t.Errorf("cache files after each engine: %v", files)
	}
}

func TestEngineCacheDirError(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewEngine(EngineOptions{CacheDir: file}); err == nil {
		t.Error("a file accepted as cache directory")
	}
}

func TestNewEngineChangesNoGlobals(t *testing.T) {
	t.Parallel()
	e, err := NewEngine(EngineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if http.DefaultClient.Transport != nil || http.DefaultClient.CheckRedirect != nil {
		t.Errorf("http.DefaultClient changed: transport %T, redirect policy set: %v",
			http.DefaultClient.Transport, http.DefaultClient.CheckRedirect != nil)
	}

	logs := &logRecorder{}
	p, err := e.Load(t.Context(), "guest", testWasm(t, "guest"), Options{Logger: logs.logger()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(t.Context())
	call(t, p, "print", "")
	if recs := logs.records(t, "to the log"); len(recs) != 1 {
		t.Errorf("%d records of the guest's log message, want 1", len(recs))
	}
	// Extism logs this on every call, to the plugin's logger, only when its
	// process-wide log level is debug or lower.
	if recs := logs.records(t, "Calling function"); len(recs) != 0 {
		t.Errorf("the Extism log level is set: %v", recs)
	}
}

// TestALongCompileIsAnnounced: a compile that takes longer than the
// Engine's notice is logged as it starts, with the plugin and its size,
// and when it ends, with how long it took; one from the cache is not.
func TestALongCompileIsAnnounced(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		notice    time.Duration
		announced bool
	}{{-1, true}, {time.Hour, false}} {
		e, err := NewEngine(EngineOptions{})
		if err != nil {
			t.Fatal(err)
		}
		e.compileNotice = c.notice
		var log bytes.Buffer
		p, err := e.Load(t.Context(), "slow", wasmtest.RunModule(), Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
		if err != nil {
			t.Fatal(err)
		}
		_ = p.Close(t.Context())
		_ = e.Close()
		got := strings.Contains(log.String(), `msg=compiling plugin=slow bytes=`) &&
			strings.Contains(log.String(), `msg=compiled plugin=slow took=`)
		if got != c.announced {
			t.Errorf("notice %v: announced %v, want %v:\n%s", c.notice, got, c.announced, log.String())
		}
	}
}
