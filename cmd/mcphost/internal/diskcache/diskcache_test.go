package diskcache

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// put writes an entry of n bytes at dir/rel, last used age ago.
func put(t *testing.T, dir, rel string, n int, age time.Duration) {
	t.Helper()
	path := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, make([]byte, n), 0o644); err != nil {
		t.Fatal(err)
	}
	when := time.Now().Add(-age)
	if err := os.Chtimes(path, when, when); err != nil {
		t.Fatal(err)
	}
}

func TestListGivesEveryEntryMostRecentlyUsedFirst(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, "wazero-v1.12.0-amd64-linux/aa", 100, time.Hour)
	put(t, dir, "wazero-v1.12.0-amd64-linux/bb", 200, time.Minute)
	put(t, dir, "plugins/sha256/cc", 300, 48*time.Hour)
	entries, total, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	if total != 600 || len(entries) != 3 {
		t.Fatalf("List: %d entries, %d bytes; want 3, 600", len(entries), total)
	}
	for i, want := range []string{"wazero-v1.12.0-amd64-linux/bb", "wazero-v1.12.0-amd64-linux/aa", "plugins/sha256/cc"} {
		if entries[i].Name != want {
			t.Errorf("entry %d: %s, want %s", i, entries[i].Name, want)
		}
	}
}

func TestPruneRemovesTheLeastRecentlyUsedUntilUnderTheCap(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, "wazero-v1.12.0-amd64-linux/new", 400, time.Minute)
	put(t, dir, "wazero-v1.12.0-amd64-linux/old", 400, 24*time.Hour)
	put(t, dir, "wazero-v1.12.0-amd64-linux/mid", 400, time.Hour)
	removed, err := Prune(dir, 900)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0].Name != "wazero-v1.12.0-amd64-linux/old" {
		t.Errorf("Prune to 900 of 1200 bytes removed %v, want the oldest only", removed)
	}
	if _, total, _ := List(dir); total != 800 {
		t.Errorf("left %d bytes, want 800", total)
	}
	if removed, _ := Prune(dir, 0); len(removed) != 2 {
		t.Errorf("Prune to 0 removed %d entries, want every one", len(removed))
	}
	if _, err := os.Stat(filepath.Join(dir, "wazero-v1.12.0-amd64-linux")); !os.IsNotExist(err) {
		t.Errorf("an emptied folder stays: %v", err)
	}
}

func TestPruneOfAMissingCacheIsNothing(t *testing.T) {
	if removed, err := Prune(filepath.Join(t.TempDir(), "none"), 0); err != nil || len(removed) != 0 {
		t.Errorf("Prune of a missing folder: %v, %v", removed, err)
	}
}
