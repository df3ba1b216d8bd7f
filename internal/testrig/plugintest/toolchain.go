package plugintest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/testenv"
	"github.com/mcphost/mcphost/internal/tinygo"
)

// Toolchain is how a Go plugin is built.
type Toolchain string

const (
	// Go is the standard toolchain, GOOS=wasip1 GOARCH=wasm.
	Go Toolchain = "go"
	// TinyGo is TinyGo with the project's target and its default
	// (asyncify) scheduler.
	TinyGo Toolchain = "tinygo"
	// TinyGoNone is TinyGo without a scheduler (-scheduler=none).
	TinyGoNone Toolchain = "tinygo-none"
)

// Toolchains are every way a Go plugin is built.
var Toolchains = []Toolchain{Go, TinyGo, TinyGoNone}

// ToolchainEnv names the toolchain Build uses: go (the default), tinygo or
// tinygo-none. `make test` runs the examples' tests once more with
// tinygo.
const ToolchainEnv = "MCPHOST_PLUGIN_TOOLCHAIN"

// DefaultToolchain returns the toolchain $MCPHOST_PLUGIN_TOOLCHAIN names,
// Go when it is unset.
func DefaultToolchain() (Toolchain, error) {
	v := os.Getenv(ToolchainEnv)
	if v == "" {
		return Go, nil
	}
	if !slices.Contains(Toolchains, Toolchain(v)) {
		return "", fmt.Errorf("%s=%q: want go, tinygo or tinygo-none", ToolchainEnv, v)
	}
	return Toolchain(v), nil
}

// Scheduler returns the TinyGo scheduler of a TinyGo toolchain.
func (tc Toolchain) Scheduler() tinygo.Scheduler {
	if tc == TinyGoNone {
		return tinygo.None
	}
	return tinygo.Asyncify
}

// RequireTinyGo skips the test when TinyGo is not installed, loudly, or
// fails it when CI is set: CI installs it (scripts/setup-tinygo.sh).
func RequireTinyGo(t testing.TB) {
	t.Helper()
	if _, err := findTinyGo(); err != nil {
		testenv.Missing(t, "%v", err)
	}
}

var (
	findOnce sync.Once
	found    *tinygo.Toolchain
	findErr  error
	version  string
)

func findTinyGo() (*tinygo.Toolchain, error) {
	findOnce.Do(func() {
		found, findErr = tinygo.Find()
		if findErr == nil {
			version, findErr = found.Version(context.Background())
		}
		if findErr == nil {
			findErr = tinygo.CheckTarget()
		}
	})
	return found, findErr
}

// buildTinyGo builds the plugin in pkgDir with TinyGo into out (no
// manifest), or copies the build of the same sources from the cache.
func buildTinyGo(root, pkgDir, out string, tc Toolchain) error {
	t, err := findTinyGo()
	if err != nil {
		return err
	}
	key, err := buildKey(root, pkgDir, tc)
	if err != nil {
		return err
	}
	cache := buildCacheDir()
	cached := ""
	if cache != "" {
		cached = filepath.Join(cache, key+".wasm")
		if err := copyFile(cached, out); err == nil {
			now := time.Now()
			_ = os.Chtimes(cached, now, now)
			return nil
		}
	}
	cmd, err := t.Command(context.Background(), filepath.Join(root, pkgDir), out, tc.Scheduler())
	if err != nil {
		return err
	}
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s with TinyGo (%s): %v\n%s", pkgDir, tc.Scheduler(), err, msg)
	}
	if cached != "" {
		pruneCache(cache)
		if err := os.MkdirAll(cache, 0o755); err == nil {
			tmp := cached + fmt.Sprintf(".%d.tmp", os.Getpid())
			if copyFile(out, tmp) == nil {
				_ = os.Rename(tmp, cached)
			}
			os.Remove(tmp)
		}
	}
	return nil
}

// buildCacheDir is where TinyGo builds are kept between test runs (a
// TinyGo build takes 10 to 40 s): <user cache dir>/mcphost/plugintest-tinygo,
// "" when there is none or MCPHOST_PLUGIN_CACHE=off.
func buildCacheDir() string {
	if os.Getenv("MCPHOST_PLUGIN_CACHE") == "off" {
		return ""
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(base, "mcphost", "plugintest-tinygo")
}

// pruneCache removes the builds not used for a week.
func pruneCache(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > 7*24*time.Hour {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// buildKey names a TinyGo build by everything it is made of: the TinyGo
// version, the target, the runtime's patch and the scheduler, and every file of every package
// outside the standard library the plugin depends on, but its tests and
// documentation.
func buildKey(root, pkgDir string, tc Toolchain) (string, error) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.Dir}}{{end}}", "./"+filepath.ToSlash(pkgDir))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	list, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list -deps ./%s: %v\n%s", pkgDir, err, stderr.String())
	}
	h := sha256.New()
	fmt.Fprintf(h, "tinygo %s\nscheduler %s\n", version, tc.Scheduler())
	h.Write(tinygo.Target())
	h.Write(tinygo.RuntimePatch())
	for _, d := range strings.Fields(string(list)) {
		entries, err := os.ReadDir(d)
		if err != nil {
			return "", err
		}
		for _, e := range entries {
			// No build reads a package's tests or documentation.
			if !e.Type().IsRegular() || strings.HasSuffix(e.Name(), "_test.go") || strings.HasSuffix(e.Name(), ".md") {
				continue
			}
			f, err := os.Open(filepath.Join(d, e.Name()))
			if err != nil {
				return "", err
			}
			rel, _ := filepath.Rel(root, f.Name())
			fmt.Fprintf(h, "\n%s\n", rel)
			_, err = io.Copy(h, f)
			f.Close()
			if err != nil {
				return "", err
			}
		}
	}
	return string(tc) + "-" + filepath.Base(pkgDir) + "-" + hex.EncodeToString(h.Sum(nil)[:12]), nil
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}
