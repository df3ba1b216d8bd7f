package archtest

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/internal/archtest/metrics"
)

var update = flag.Bool("update", false, "rewrite testdata/api from the packages as they are")

// TestAPI pins the exported API of every public package of the repository
// (nested modules included): testdata/api/DIR.txt lists it as
// metrics.API writes it, one identifier a line. A change to the API fails
// with the lines added and removed; when the change is meant, rewrite the
// files with
//
//	go test ./internal/archtest -run API -update
//
// and commit them with it, so that the API's changes show in review.
func TestAPI(t *testing.T) {
	pkgs, err := metrics.Load(root(t))
	if err != nil {
		t.Fatal(err)
	}
	golden := map[string]bool{} // the files the packages call for
	for _, p := range pkgs {
		if !p.Public() {
			continue
		}
		path := filepath.Join("testdata", "api", filepath.FromSlash(p.Dir)+".txt")
		golden[path] = true
		got := strings.Join(metrics.API(p), "\n") + "\n"
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v (a new public package? run go test ./internal/archtest -run API -update)", p.Dir, err)
			continue
		}
		if diff := lineDiff(string(want), got); diff != "" {
			t.Errorf("the exported API of %s changed (- before, + now); if meant, run go test ./internal/archtest -run API -update:\n%s", p.Dir, diff)
		}
	}
	err = filepath.WalkDir(filepath.Join("testdata", "api"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || golden[path] {
			return err
		}
		if *update {
			return os.Remove(path)
		}
		t.Errorf("%s: no public package has this API any more; run go test ./internal/archtest -run API -update", path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// lineDiff lists the lines of want that got lacks, with "-", and those of
// got that want lacks, with "+"; "" when both hold the same lines.
func lineDiff(want, got string) string {
	count := map[string]int{}
	for _, l := range strings.Split(got, "\n") {
		count[l]++
	}
	var diff []string
	for _, l := range strings.Split(want, "\n") {
		if count[l] > 0 {
			count[l]--
			continue
		}
		diff = append(diff, "- "+l)
	}
	for _, l := range strings.Split(got, "\n") {
		if count[l] > 0 {
			count[l]--
			diff = append(diff, "+ "+l)
		}
	}
	return strings.Join(diff, "\n")
}
