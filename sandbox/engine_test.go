package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
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
		p, err := e.Load(t.Context(), "run", runModule(), Options{})
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
