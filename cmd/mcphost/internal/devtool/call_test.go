package devtool

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/plugintest"
)

// TestCallAndInspectInProcess runs call and inspect inside the test
// process, so that the race detector watches the in-process client:
// responses, notifications and the session's goroutines.
func TestCallAndInspectInProcess(t *testing.T) {
	root, err := plugintest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", filepath.Join(os.TempDir(), "mcphost-devcli-cache"))
	units := filepath.Join(root, "plugins", "examples", "units", "units.js")
	config := filepath.Join(t.TempDir(), "mcphost.toml")
	if err := os.WriteFile(config, []byte("[plugins.units]\nhost_functions = [\"notify_progress\", \"notify_logging_message\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	flags := runFlags{config: config, logLevel: "warn", version: "test"}
	for range 3 {
		var stdout, stderr bytes.Buffer
		err := callTool(ctx, units, "conversion_table", callFlags{runFlags: flags, args: []string{"unit=h"}}, &stdout, &stderr)
		if err != nil || !strings.Contains(stdout.String(), "1 h = 60 min") || !strings.Contains(stderr.String(), "[progress 4/4") {
			t.Fatalf("call: %v\nstdout:\n%s\nstderr:\n%s", err, &stdout, &stderr)
		}
	}
	var stdout, stderr bytes.Buffer
	err = callTool(ctx, units, "convert_units", callFlags{runFlags: flags, args: []string{"value=x", "from=m", "to=km"}}, &stdout, &stderr)
	if !errors.As(err, new(errToolError)) || !strings.Contains(stdout.String(), "/value") {
		t.Errorf("call with a bad argument: %v\n%s", err, &stdout)
	}
	rep, err := inspectPlugin(ctx, units, "test")
	if err != nil || rep.Flavour != flavourJavaScript || len(rep.Tools) != 2 {
		t.Fatalf("inspect: %v %+v", err, rep)
	}
}
