package cli

import (
	"bytes"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionNamesTheReleaseTheCommitAndTheCache(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "4eeabcc1234567890abcdef"}, {Key: "vcs.time", Value: "2026-11-27T00:40:00Z"},
		{Key: "vcs.modified", Value: "true"}, {Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "amd64"},
	}}
	for _, c := range []struct {
		name, version string
		info          *debug.BuildInfo
		want          string
	}{
		{"a make build", "v0.4.0-3-g4eeabcc", info, "mcphost v0.4.0-3-g4eeabcc (commit 4eeabcc123, 2026-11-27T00:40:00Z, modified) go1.26.8 linux/amd64"},
		{"a go build", "dev", info, "mcphost dev (commit 4eeabcc123, 2026-11-27T00:40:00Z, modified) go1.26.8 linux/amd64"},
		{"a go install", "dev", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.5.0"}}, "mcphost v0.5.0 go1.26.8"},
		{"no build info", "dev", nil, "mcphost dev"},
	} {
		if got := versionLine(c.version, c.info); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestVersionFlagAndCommandPrintTheVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		root := newRootCommand("v9.9.9")
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(args)
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(out.String(), "mcphost v9.9.9") {
			t.Errorf("mcphost %s printed %q", args[0], out.String())
		}
		if args[0] == "version" && !strings.Contains(out.String(), "compilation cache: ") {
			t.Errorf("mcphost version does not say where the compilation cache is: %q", out.String())
		}
	}
}
