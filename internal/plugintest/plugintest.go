// Package plugintest builds Go plugins for tests: it compiles a package with
// GOOS=wasip1 and appends its manifest.json, as `make examples` does. It
// also runs plugins directly with the Extism Go SDK against a fake host that
// records and answers their host function calls (extism.go).
package plugintest

import (
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
	built = map[string]string{}
	dir   string
)

// Build compiles the Go plugin in pkgDir (a directory relative to the
// module root, e.g. "plugins/examples/tools") to wasm once per test binary
// and returns the path of the .wasm file. A manifest.json beside the source
// is embedded as the manifest section.
func Build(t testing.TB, pkgDir string) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if p, ok := built[pkgDir]; ok {
		return p
	}
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if dir == "" {
		if dir, err = os.MkdirTemp("", "mcphost-plugins-"); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, filepath.Base(pkgDir)+".wasm")
	if err := BuildTo(root, pkgDir, out); err != nil {
		t.Fatal(err)
	}
	built[pkgDir] = out
	return out
}

// BuildTo compiles the plugin in pkgDir (relative to root) into out with the
// flags of `make examples` and embeds its manifest.json when there is one.
func BuildTo(root, pkgDir, out string) error {
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s", "-o", out, "./"+filepath.ToSlash(pkgDir))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s: %v\n%s", pkgDir, err, msg)
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
