// Package tinygo finds the TinyGo toolchain scripts/setup-tinygo.sh
// installs and builds Go plugins with it, through the project's target
// (wasip1.json beside this file, embedded): TinyGo's own wasip1 target
// linking Debian's wasi-libc and compiler-rt builtins instead of the C
// libraries TinyGo's releases bundle, with 256 KiB stacks: each
// goroutine's (default-stack-size) and the system stack (-zstack-size),
// where the exports run without a scheduler; 64 KiB, TinyGo's default for
// both, overflows in the notes example's init. Its runtime carries the
// project's patch to the collector (runtime.patch, Toolchain.Patched).
//
// mcphost build --tinygo and plugintest (the tests' plugin builds) use it.
package tinygo

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Version is the TinyGo version scripts/setup-tinygo.sh installs.
const Version = "0.41.0"

// InstallHint says how to install TinyGo, for error messages.
const InstallHint = "install it with scripts/setup-tinygo.sh from the mcphost repository (TinyGo " + Version +
	" built against Debian's LLVM 19 into ~/.cache/mcphost/tinygo-" + Version + "), or put a tinygo " + Version +
	" on PATH or in $TINYGOROOT/bin"

//go:embed wasip1.json
var target []byte

// Target returns the project's wasip1 target (wasip1.json).
func Target() []byte { return bytes.Clone(target) }

//go:embed runtime.patch
var runtimePatch []byte

// RuntimePatch returns the patch scripts/setup-tinygo.sh applies to
// TinyGo's runtime (runtime.patch): its collector's conservative scan and
// free list, which a plugin's build compiles.
func RuntimePatch() []byte { return bytes.Clone(runtimePatch) }

// The C parts the target links, from Debian's wasi-libc and
// libclang-rt-19-dev-wasm32, and LLVM 19's tools (wasm-ld).
var (
	targetFiles = []string{
		"/usr/lib/wasm32-wasi/libc.a",
		"/usr/lib/llvm-19/lib/clang/19/lib/wasi/libclang_rt.builtins-wasm32.a",
		"/usr/include/wasm32-wasi",
	}
	llvmBin = "/usr/lib/llvm-19/bin"
)

// Scheduler is a TinyGo build variant: the goroutine scheduler.
type Scheduler string

const (
	// Asyncify is TinyGo's own default for wasip1, and the project
	// target's: goroutines, switched with Binaryen's asyncify transform.
	Asyncify Scheduler = "asyncify"
	// None has no scheduler: smaller and faster modules, but a goroutine
	// cannot block (channels, mutexes held elsewhere, time.Sleep in a
	// goroutine) and go statements fail to build.
	None Scheduler = "none"
)

// Default is the variant mcphost build --tinygo makes when not told: the
// fastest and smallest, which builds and runs every example (see
// RATIONALE.md, "TinyGo"); a plugin that starts goroutines needs Asyncify.
const Default = None

// Schedulers are the variants, Default first.
var Schedulers = []Scheduler{Asyncify, None}

// ParseScheduler returns the variant named s ("" for Default).
func ParseScheduler(s string) (Scheduler, error) {
	if s == "" {
		return Default, nil
	}
	for _, v := range Schedulers {
		if string(v) == s {
			return v, nil
		}
	}
	return "", fmt.Errorf("scheduler %q: want asyncify or none", s)
}

// Toolchain is a TinyGo installation.
type Toolchain struct {
	Bin  string // the tinygo binary
	Root string // its TINYGOROOT, "" to let tinygo find it
}

// CacheRoot is where scripts/setup-tinygo.sh installs TinyGo: the
// TINYGOROOT <user cache dir>/mcphost/tinygo-VERSION.
func CacheRoot() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "mcphost", "tinygo-"+Version), nil
}

// Find returns the TinyGo toolchain to build with: tinygo on PATH, else
// $TINYGOROOT/bin/tinygo, else the one scripts/setup-tinygo.sh installs in
// the user's cache. The error says how to install one.
func Find() (*Toolchain, error) {
	if bin, err := exec.LookPath("tinygo"); err == nil {
		return &Toolchain{Bin: bin, Root: os.Getenv("TINYGOROOT")}, nil
	}
	var tried []string
	if root := os.Getenv("TINYGOROOT"); root != "" {
		bin := filepath.Join(root, "bin", "tinygo")
		if isExecutable(bin) {
			return &Toolchain{Bin: bin, Root: root}, nil
		}
		tried = append(tried, bin+" ($TINYGOROOT)")
	}
	if root, err := CacheRoot(); err == nil {
		bin := filepath.Join(root, "bin", "tinygo")
		if isExecutable(bin) {
			return &Toolchain{Bin: bin, Root: root}, nil
		}
		tried = append(tried, bin)
	}
	where := "not on PATH"
	if len(tried) > 0 {
		where += ", nor at " + strings.Join(tried, " or ")
	}
	return nil, fmt.Errorf("TinyGo not found (%s): %s", where, InstallHint)
}

func isExecutable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// CheckTarget reports what the project's target needs and the machine
// lacks: Debian's wasi-libc, compiler-rt builtins and LLVM 19's wasm-ld.
func CheckTarget() error {
	var missing []string
	for _, f := range append(targetFiles, filepath.Join(llvmBin, "wasm-ld")) {
		if _, err := os.Stat(f); err != nil {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the TinyGo target (wasip1.json) links Debian's wasi-libc and LLVM 19 tools, and %s is missing: %s",
			strings.Join(missing, ", "), InstallHint)
	}
	return nil
}

// targetFile writes the project's target into the user's cache (a file
// named by its content, so written once) and returns its path.
func targetFile() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	sum := sha256.Sum256(target)
	path := filepath.Join(base, "mcphost", "tinygo-targets", "wasip1-"+hex.EncodeToString(sum[:6])+".json")
	if b, err := os.ReadFile(path); err == nil && bytes.Equal(b, target) {
		return path, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".wasip1-*.json")
	if err != nil {
		return "", err
	}
	if _, err := tmp.Write(target); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return path, os.Rename(tmp.Name(), path)
}

// Command returns the command that builds the Go main package in dir into
// out (a reactor module: -buildmode=c-shared, no debug information) with
// the project's target and scheduler s. LLVM 19's tools come first on its
// PATH.
func (t *Toolchain) Command(ctx context.Context, dir, out string, s Scheduler) (*exec.Cmd, error) {
	if err := CheckTarget(); err != nil {
		return nil, err
	}
	tf, err := targetFile()
	if err != nil {
		return nil, fmt.Errorf("writing the TinyGo target: %w", err)
	}
	args := []string{"build", "-target=" + tf, "-buildmode=c-shared", "-no-debug"}
	if s != Asyncify { // the target's
		args = append(args, "-scheduler="+string(s))
	}
	args = append(args, "-o", out, ".")
	cmd := exec.CommandContext(ctx, t.Bin, args...)
	cmd.Dir = dir
	env := os.Environ()
	if t.Root != "" {
		env = append(env, "TINYGOROOT="+t.Root)
	}
	cmd.Env = append(env, "PATH="+llvmBin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return cmd, nil
}

// patchStamp is the copy of runtime.patch scripts/setup-tinygo.sh leaves
// in the TINYGOROOT it patched.
const patchStamp = ".mcphost-runtime.patch"

// Patched reports whether the toolchain's runtime carries the project's
// patch (RuntimePatch): its TINYGOROOT, asked of tinygo env when Root is
// empty, holds the copy scripts/setup-tinygo.sh leaves there.
func (t *Toolchain) Patched(ctx context.Context) bool {
	root := t.Root
	if root == "" {
		out, err := exec.CommandContext(ctx, t.Bin, "env", "TINYGOROOT").Output()
		if err != nil {
			return false
		}
		root = strings.TrimSpace(string(out))
	}
	b, err := os.ReadFile(filepath.Join(root, patchStamp))
	return err == nil && bytes.Equal(b, runtimePatch)
}

// ErrNotTinyGo is returned by Version when the binary is not TinyGo.
var ErrNotTinyGo = errors.New("not a TinyGo binary")

// Version returns the version the toolchain reports ("0.41.0").
func (t *Toolchain) Version(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, t.Bin, "version")
	if t.Root != "" {
		cmd.Env = append(os.Environ(), "TINYGOROOT="+t.Root)
	}
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s version: %w", t.Bin, err)
	}
	f := strings.Fields(string(out))
	if len(f) < 3 || f[0] != "tinygo" || f[1] != "version" {
		return "", fmt.Errorf("%s: %w", t.Bin, ErrNotTinyGo)
	}
	return f[2], nil
}
