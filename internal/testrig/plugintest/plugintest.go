// Package plugintest builds Go plugins for tests: it compiles a package with
// GOOS=wasip1 and appends its manifest.json, as `make examples` does, with
// the standard Go toolchain or with TinyGo (toolchain.go). It also runs
// plugins directly with the Extism Go SDK against a fake host that records
// and answers their host function calls (extism.go).
package plugintest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

var (
	mu    sync.Mutex
	built = map[string]*buildResult{}
	dir   string
)

// buildResult is a build of one plugin with one toolchain, made once per
// test binary.
type buildResult struct {
	once sync.Once
	path string
	err  error
}

// Build compiles the Go plugin in pkgDir (a directory relative to the
// module root, e.g. "plugins/examples/tools") to wasm once per test binary,
// with the toolchain $MCPHOST_PLUGIN_TOOLCHAIN names (DefaultToolchain:
// standard Go unless told), and returns the path of the .wasm file. A
// manifest.json beside the source is embedded as the manifest section.
func Build(t testing.TB, pkgDir string) string {
	t.Helper()
	tc, err := DefaultToolchain()
	if err != nil {
		t.Fatal(err)
	}
	return BuildWith(t, pkgDir, tc)
}

// BuildWith is Build with toolchain tc. Builds of different plugins or
// toolchains may run at the same time (Prebuild).
func BuildWith(t testing.TB, pkgDir string, tc Toolchain) string {
	t.Helper()
	path, err := buildOnce(pkgDir, tc)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// Prebuild builds the plugins in pkgDirs with tc, two at a time (TinyGo
// spends most of a build in one thread), for Build and BuildWith to find
// built: a TestMain calls it before the tests, which build one at a time.
func Prebuild(pkgDirs []string, tc Toolchain) error {
	errs := make([]error, len(pkgDirs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for i, d := range pkgDirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			_, errs[i] = buildOnce(d, tc)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func buildOnce(pkgDir string, tc Toolchain) (string, error) {
	mu.Lock()
	key := string(tc) + " " + pkgDir
	r, ok := built[key]
	if !ok {
		r = &buildResult{}
		built[key] = r
	}
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "mcphost-plugins-"); err != nil {
			mu.Unlock()
			return "", err
		}
	}
	out := filepath.Join(dir, string(tc), filepath.Base(pkgDir)+".wasm")
	mu.Unlock()
	r.once.Do(func() {
		root, err := ModuleRoot()
		if err == nil {
			err = os.MkdirAll(filepath.Dir(out), 0o755)
		}
		if err == nil {
			err = BuildToWith(root, pkgDir, out, tc)
		}
		r.path, r.err = out, err
	})
	return r.path, r.err
}

// BuildTo compiles the plugin in pkgDir (relative to root) into out with the
// flags of `make examples` and embeds its manifest.json when there is one.
func BuildTo(root, pkgDir, out string) error {
	return BuildToWith(root, pkgDir, out, Go)
}

// BuildToWith is BuildTo with toolchain tc.
func BuildToWith(root, pkgDir, out string, tc Toolchain) error {
	if tc != Go {
		if err := buildTinyGo(root, pkgDir, out, tc); err != nil {
			return err
		}
	} else {
		cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s", "-o", out, "./"+filepath.ToSlash(pkgDir))
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
		if msg, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building %s: %v\n%s", pkgDir, err, msg)
		}
	}
	manifest, err := os.ReadFile(filepath.Join(root, pkgDir, "manifest.json"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		return err
	}
	if wasm, err = abi.EmbedManifest(wasm, manifest); err != nil {
		return fmt.Errorf("%s/manifest.json: %w", pkgDir, err)
	}
	return os.WriteFile(out, wasm, 0o644)
}

// ModuleRoot returns the directory of the main module's go.mod.
func ModuleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("not inside a Go module")
	}
	return filepath.Dir(gomod), nil
}
