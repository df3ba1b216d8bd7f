package jsengine_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/mcphost/mcphost/internal/testrig/testenv"
)

// TestEngineIsReproducible rebuilds the engine from its pinned source
// (build.sh --check) and fails unless the result is byte for byte the
// committed engine.wasm. Without the toolchain (scripts/setup-js.sh) it is
// skipped, loudly, except in CI, where it fails.
func TestEngineIsReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("rebuilding the engine takes a while; skipped in -short mode")
	}
	skip := func(why string) {
		t.Helper()
		if testenv.CI() {
			t.Fatalf("%s; CI must run scripts/setup-js.sh so that the committed internal/jsengine/engine.wasm is checked against its source", why)
		}
		msg := fmt.Sprintf("SKIPPED: internal/jsengine/engine.wasm NOT checked against its source: %s (run scripts/setup-js.sh, or make check-js-engine)", why)
		fmt.Fprintln(os.Stderr, msg)
		t.Skip(msg)
	}
	for _, tool := range []string{"clang", "wasm-ld", "patch"} {
		if _, err := exec.LookPath(tool); err != nil {
			skip(tool + " not found")
		}
	}
	out, err := exec.Command("./build.sh", "--check").CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		t.Logf("%s", out)
	case errors.As(err, &exit) && exit.ExitCode() == 3:
		skip("toolchain incomplete: " + string(out))
	case errors.As(err, &exit) && exit.ExitCode() == 4:
		skip("QuickJS source unavailable: " + string(out))
	default:
		t.Fatalf("build.sh --check: %v\n%s", err, out)
	}
}
