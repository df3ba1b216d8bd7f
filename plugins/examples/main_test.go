package examples_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcphost/mcphost/internal/testrig/plugintest"
)

// goExamples are the Go examples the tests load.
var goExamples = []string{"files", "jobs", "notes", "prompts", "summarize", "tools"}

// TestMain builds the Go examples two at a time first when the toolchain is
// TinyGo (MCPHOST_PLUGIN_TOOLCHAIN=tinygo or tinygo-none, as make test runs
// them once more), whose builds take half a minute each.
func TestMain(m *testing.M) {
	flag.Parse()
	tc, err := plugintest.DefaultToolchain()
	if err == nil && tc != plugintest.Go && !testing.Short() {
		dirs := make([]string, len(goExamples))
		for i, name := range goExamples {
			dirs[i] = "plugins/examples/" + name
		}
		err = plugintest.Prebuild(dirs, tc)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// TestGoExamplesListed checks that goExamples lists every Go example.
func TestGoExamplesListed(t *testing.T) {
	mains, err := filepath.Glob("*/main.go")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, m := range mains {
		dirs = append(dirs, filepath.Dir(m))
	}
	if !slices.Equal(dirs, goExamples) {
		t.Errorf("Go examples %v, goExamples lists %v", dirs, goExamples)
	}
}
