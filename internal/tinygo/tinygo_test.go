package tinygo

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/internal/testrig/testenv"
)

// fakeTinyGo writes an executable tinygo script into dir/bin that prints
// version as `tinygo version` does.
func fakeTinyGo(t *testing.T, dir, version string) string {
	return tinygoScript(t, dir, "echo 'tinygo version "+version+" linux/amd64 (using go version go1.26.8 and LLVM version 19.1.7)'")
}

// tinygoScript writes an executable tinygo into dir/bin that runs the
// shell commands sh, and returns its path.
func tinygoScript(t *testing.T, dir, sh string) string {
	t.Helper()
	bin := filepath.Join(dir, "bin", "tinygo")
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+sh+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestFind checks where Find looks, in order: PATH, $TINYGOROOT/bin, the
// user's cache; and that its error names the install script.
func TestFind(t *testing.T) {
	cache, onPath, root := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", cache)
	t.Setenv("PATH", t.TempDir())
	t.Setenv("TINYGOROOT", "")

	_, err := Find()
	if err == nil || !strings.Contains(err.Error(), "scripts/setup-tinygo.sh") || !strings.Contains(err.Error(), "not on PATH") {
		t.Fatalf("Find with no TinyGo: %v, want an error naming scripts/setup-tinygo.sh", err)
	}

	cacheRoot, err := CacheRoot()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(cache, "mcphost", "tinygo-"+Version); cacheRoot != want {
		t.Errorf("CacheRoot() = %s, want %s", cacheRoot, want)
	}
	inCache := fakeTinyGo(t, cacheRoot, Version)
	if tc, err := Find(); err != nil || tc.Bin != inCache || tc.Root != cacheRoot {
		t.Errorf("Find with TinyGo in the cache = %+v, %v; want %s", tc, err, inCache)
	}

	t.Setenv("TINYGOROOT", root)
	inRoot := fakeTinyGo(t, root, Version)
	if tc, err := Find(); err != nil || tc.Bin != inRoot || tc.Root != root {
		t.Errorf("Find with $TINYGOROOT = %+v, %v; want %s", tc, err, inRoot)
	}

	pathBin := fakeTinyGo(t, onPath, "0.40.1")
	t.Setenv("PATH", filepath.Dir(pathBin))
	tc, err := Find()
	if err != nil || tc.Bin != pathBin {
		t.Fatalf("Find with tinygo on PATH = %+v, %v; want %s", tc, err, pathBin)
	}
	if v, err := tc.Version(context.Background()); err != nil || v != "0.40.1" {
		t.Errorf("Version() = %q, %v", v, err)
	}
}

func TestParseScheduler(t *testing.T) {
	for in, want := range map[string]Scheduler{"": Default, "asyncify": Asyncify, "none": None} {
		if got, err := ParseScheduler(in); err != nil || got != want {
			t.Errorf("ParseScheduler(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseScheduler("tasks"); err == nil {
		t.Error("ParseScheduler(tasks) succeeded")
	}
}

// TestTarget checks the project's target: TinyGo's wasip1 without the C
// libraries it builds itself, linking Debian's instead, with 256 KiB
// goroutine and system stacks.
func TestTarget(t *testing.T) {
	var spec struct {
		Libc, Rtlib, Scheduler, GOOS string
		StackSize                    int `json:"default-stack-size"`
		CFlags                       []string
		LDFlags                      []string
	}
	if err := json.Unmarshal(Target(), &spec); err != nil {
		t.Fatal(err)
	}
	if spec.Libc != "" || spec.Rtlib != "" {
		t.Errorf("the target builds TinyGo's libc %q or rtlib %q, absent from its Go module", spec.Libc, spec.Rtlib)
	}
	if spec.StackSize != 256<<10 || spec.Scheduler != "asyncify" || spec.GOOS != "wasip1" {
		t.Errorf("stack %d, scheduler %q, goos %q", spec.StackSize, spec.Scheduler, spec.GOOS)
	}
	for _, f := range targetFiles[:2] {
		if !slices.Contains(spec.LDFlags, f) {
			t.Errorf("ldflags %v lack %s", spec.LDFlags, f)
		}
	}
	// The system stack, where the exports run without a scheduler: the
	// linker's default 64 KiB overflows in the notes example's init.
	if !slices.Contains(spec.LDFlags, "-zstack-size=262144") {
		t.Errorf("ldflags %v do not give the system stack 256 KiB", spec.LDFlags)
	}
	if !slices.Contains(spec.CFlags, targetFiles[2]) {
		t.Errorf("cflags %v lack -isystem %s", spec.CFlags, targetFiles[2])
	}
}

// TestCommand checks the build command: the project's target written to a
// file, the scheduler flag for none only, LLVM 19's tools first on PATH.
func TestCommand(t *testing.T) {
	if err := CheckTarget(); err != nil {
		testenv.Missing(t, "%v", err)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	tc := &Toolchain{Bin: "/opt/tinygo/bin/tinygo", Root: "/opt/tinygo"}
	for _, s := range Schedulers {
		cmd, err := tc.Command(context.Background(), "/src/p", "/out/p.wasm", s)
		if err != nil {
			t.Fatal(err)
		}
		args := strings.Join(cmd.Args, " ")
		if !strings.HasPrefix(args, "/opt/tinygo/bin/tinygo build -target=") || !strings.HasSuffix(args, " -buildmode=c-shared -no-debug "+map[Scheduler]string{Asyncify: "", None: "-scheduler=none "}[s]+"-o /out/p.wasm .") {
			t.Errorf("%s: %s", s, args)
		}
		target, _ := strings.CutPrefix(cmd.Args[2], "-target=")
		if b, err := os.ReadFile(target); err != nil || !bytes.Equal(b, Target()) {
			t.Errorf("%s: the target file %s does not hold wasip1.json: %v", s, target, err)
		}
		if cmd.Dir != "/src/p" || !slices.Contains(cmd.Env, "TINYGOROOT=/opt/tinygo") || !slices.ContainsFunc(cmd.Env, func(e string) bool { return strings.HasPrefix(e, "PATH="+llvmBin+":") }) {
			t.Errorf("%s: dir %s, env %v", s, cmd.Dir, cmd.Env)
		}
	}
}

// TestPatched checks that a toolchain counts as carrying the project's
// runtime patch only when its TINYGOROOT holds the copy setup-tinygo.sh
// leaves there, equal to runtime.patch, whether the root is known or
// asked of tinygo env.
func TestPatched(t *testing.T) {
	root := t.TempDir()
	bin := tinygoScript(t, root, "[ \"$1 $2\" = 'env TINYGOROOT' ] && echo '"+root+"'")
	stamp := filepath.Join(root, ".mcphost-runtime.patch")
	for _, tc := range []struct {
		stamp []byte // nil: none
		want  bool
	}{
		{nil, false},
		{[]byte("--- an older patch\n"), false},
		{RuntimePatch(), true},
	} {
		os.Remove(stamp)
		if tc.stamp != nil {
			if err := os.WriteFile(stamp, tc.stamp, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, tg := range []*Toolchain{{Bin: bin, Root: root}, {Bin: bin}} {
			if got := tg.Patched(context.Background()); got != tc.want {
				t.Errorf("Patched() with root %q and stamp %.20q = %v, want %v", tg.Root, tc.stamp, got, tc.want)
			}
		}
	}
}

// TestTheProjectsTinyGoCarriesTheRuntimePatch checks that
// scripts/setup-tinygo.sh left its TinyGo patched.
func TestTheProjectsTinyGoCarriesTheRuntimePatch(t *testing.T) {
	root, err := CacheRoot()
	if err != nil || !isExecutable(filepath.Join(root, "bin", "tinygo")) {
		testenv.Missing(t, "TinyGo is not installed in the project's cache (scripts/setup-tinygo.sh installs it): %v", err)
	}
	if !(&Toolchain{Bin: filepath.Join(root, "bin", "tinygo"), Root: root}).Patched(context.Background()) {
		t.Errorf("%s does not carry runtime.patch: run scripts/setup-tinygo.sh", root)
	}
	b, err := os.ReadFile(filepath.Join(root, "src", "runtime", "gc_blocks.go"))
	if err != nil || !bytes.Contains(b, []byte("task.StackInUse(")) {
		t.Errorf("%s/src/runtime/gc_blocks.go is not the patched one (%v)", root, err)
	}
}
