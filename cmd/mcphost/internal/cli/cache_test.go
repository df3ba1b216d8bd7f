package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// cacheFixture returns a config whose compilation cache holds three
// entries of 1 MiB, used a minute, an hour and a day ago.
func cacheFixture(t *testing.T, maxMiB int) (cfg, cache string) {
	t.Helper()
	dir := t.TempDir()
	cache = filepath.Join(dir, "cache")
	for name, age := range map[string]time.Duration{"new": time.Minute, "mid": time.Hour, "old": 24 * time.Hour} {
		path := filepath.Join(cache, "wazero-v1.12.0-amd64-linux", name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, make([]byte, 1<<20), 0o644); err != nil {
			t.Fatal(err)
		}
		when := time.Now().Add(-age)
		if err := os.Chtimes(path, when, when); err != nil {
			t.Fatal(err)
		}
	}
	cfg = filepath.Join(dir, "mcphost.toml")
	body := "[server]\ncache_dir = \"cache\"\ncache_max_mib = " + strconv.Itoa(maxMiB) + "\n"
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg, cache
}

// runRoot runs mcphost with args and returns what it printed.
func runRoot(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCommand("test")
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func TestCacheLsListsEntriesMostRecentlyUsedFirst(t *testing.T) {
	cfg, cache := cacheFixture(t, 2)
	out, err := runRoot(t, "cache", "ls", "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := cache + ": 3 entries, 3.0 MiB of 2 MiB (cache_max_mib)"
	if !strings.HasPrefix(out, want) {
		t.Errorf("cache ls:\n%s\nwant it to start %q", out, want)
	}
	if i, j, k := strings.Index(out, "/new"), strings.Index(out, "/mid"), strings.Index(out, "/old"); !(i > 0 && i < j && j < k) {
		t.Errorf("cache ls does not list the entries most recently used first:\n%s", out)
	}
}

func TestCachePruneKeepsTheCapOrWhatItIsTold(t *testing.T) {
	cfg, cache := cacheFixture(t, 2)
	out, err := runRoot(t, "cache", "prune", "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "removed 1 entry (1.0 MiB)") || exists(filepath.Join(cache, "wazero-v1.12.0-amd64-linux", "old")) ||
		!exists(filepath.Join(cache, "wazero-v1.12.0-amd64-linux", "mid")) {
		t.Errorf("cache prune to the 2 MiB cap: %s", out)
	}
	if out, err = runRoot(t, "cache", "prune", "--config", cfg, "--all"); err != nil || !strings.Contains(out, "removed 2 entries (2.0 MiB)") {
		t.Errorf("cache prune --all: %s %v", out, err)
	}
	if exists(cache + "/wazero-v1.12.0-amd64-linux") {
		t.Errorf("cache prune --all left the version folder")
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
