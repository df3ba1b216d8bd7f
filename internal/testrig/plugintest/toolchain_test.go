package plugintest

import (
	"os"
	"path/filepath"
	"testing"
)

// TestBuildKeyFollowsWhatABuildReads checks that a TinyGo build's cache
// key changes with a Go file of the plugin, and not with its tests or its
// documentation, which no build reads: editing a README must not cost
// minutes of TinyGo builds.
func TestBuildKeyFollowsWhatABuildReads(t *testing.T) {
	root := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/p\n\ngo 1.24\n")
	write("p/main.go", "package main\n\nfunc main() {}\n")
	key := func() string {
		t.Helper()
		k, err := buildKey(root, "p", TinyGoNone)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	before := key()
	write("p/README.md", "# p\n")
	write("p/main_test.go", "package main\n")
	if after := key(); after != before {
		t.Errorf("a README and a test file changed the build key: %s, then %s", before, after)
	}
	write("p/main.go", "package main\n\nfunc main() { println() }\n")
	if after := key(); after == before {
		t.Errorf("a changed Go file left the build key %s", after)
	}
}
