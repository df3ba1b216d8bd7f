package devtool

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/internal/testrig/testenv"
	"github.com/mcphost/mcphost/internal/tinygo"
)

// TestGoToolchain checks how build picks the toolchain of a Go plugin:
// --tinygo, or go.mod's //mcphost:build tinygo line, with its scheduler,
// which --scheduler overrides.
func TestGoToolchain(t *testing.T) {
	for _, c := range []struct {
		gomod  string
		flags  buildFlags
		tinygo bool
		sched  tinygo.Scheduler
		err    string
	}{
		{gomod: "module x\n", flags: buildFlags{}},
		{gomod: "module x\n", flags: buildFlags{tinygo: true}, tinygo: true, sched: tinygo.Default},
		{gomod: "module x\n", flags: buildFlags{tinygo: true, scheduler: "none"}, tinygo: true, sched: tinygo.None},
		{gomod: "module x\n", flags: buildFlags{scheduler: "none"}, err: "give --tinygo too"},
		{gomod: "module x\n", flags: buildFlags{tinygo: true, scheduler: "tasks"}, err: `scheduler "tasks"`},
		{gomod: "module x\n\n//mcphost:build tinygo\n", tinygo: true, sched: tinygo.Default},
		{gomod: "module x\n//mcphost:build tinygo scheduler=none\n", tinygo: true, sched: tinygo.None},
		{gomod: "module x\n//mcphost:build tinygo scheduler=none\n", flags: buildFlags{scheduler: "asyncify"}, tinygo: true, sched: tinygo.Asyncify},
		{gomod: "module x\n//mcphost:build tinygo\n", flags: buildFlags{scheduler: "none"}, tinygo: true, sched: tinygo.None},
		{gomod: "module x\n//mcphost:build tinygo fast\n", err: "want //mcphost:build tinygo [scheduler=asyncify|none]"},
		{gomod: "module x\n//mcphost:build tinygoish\n"},
		{gomod: "module x\n// mcphost:build tinygo\n"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(c.gomod), 0o644); err != nil {
			t.Fatal(err)
		}
		useTinyGo, sched, err := goToolchain(dir, c.flags)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q %+v: error %v, want %q", c.gomod, c.flags, err, c.err)
			}
		case err != nil || useTinyGo != c.tinygo || sched != c.sched:
			t.Errorf("%q %+v: tinygo %v, scheduler %q, %v; want %v, %q", c.gomod, c.flags, useTinyGo, sched, err, c.tinygo, c.sched)
		}
	}
}

// TestBuildWithoutTinyGo checks that a TinyGo build with no TinyGo to be
// found fails saying how to install it, or how to do without.
func TestBuildWithoutTinyGo(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("TINYGOROOT", "")
	t.Setenv("PATH", t.TempDir())
	dir := tinygoHello(t)
	var stdout, stderr bytes.Buffer
	err := buildPlugin(context.Background(), dir, buildFlags{}, &stdout, &stderr)
	if err == nil {
		t.Fatal("build succeeded without TinyGo")
	}
	for _, want := range []string{"TinyGo not found", "scripts/setup-tinygo.sh", filepath.Join(cache, "mcphost", "tinygo-"+tinygo.Version, "bin", "tinygo"), "standard Go toolchain"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// TestBuildWithAnUnpatchedTinyGoWarns checks that mcphost build says so
// when the TinyGo it found lacks the project's runtime patch, and not
// when it has it.
func TestBuildWithAnUnpatchedTinyGoWarns(t *testing.T) {
	if err := tinygo.CheckTarget(); err != nil {
		testenv.Missing(t, "%v", err)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root := t.TempDir()
	t.Setenv("TINYGOROOT", root)
	bin := filepath.Join(root, "bin", "tinygo")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	// A tinygo that writes an empty module to the file after -o.
	script := "#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] && printf '\\000asm\\001\\000\\000\\000' > \"$2\"; shift; done\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	dir := tinygoHello(t)
	for _, patched := range []bool{false, true} {
		if patched {
			if err := os.WriteFile(filepath.Join(root, ".mcphost-runtime.patch"), tinygo.RuntimePatch(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var stdout, stderr bytes.Buffer
		if err := buildPlugin(context.Background(), dir, buildFlags{}, &stdout, &stderr); err != nil {
			t.Fatalf("patched %v: %v\n%s", patched, err, stderr.String())
		}
		if warned := strings.Contains(stderr.String(), "lacks mcphost's patch to TinyGo's collector"); warned == patched {
			t.Errorf("patched %v: stderr %q", patched, stderr.String())
		}
	}
}

// tinygoHello writes a Go plugin that go.mod marks for TinyGo into a new
// folder and returns it.
func tinygoHello(t *testing.T) string {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"go.mod":  "module hello\n\n//mcphost:build tinygo\n",
		"main.go": "package main\n\nfunc main() {}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
