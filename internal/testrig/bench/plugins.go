package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/mcphost/mcphost/internal/testrig/testenv"
	"github.com/mcphost/mcphost/internal/tinygo"
)

// langs are the plugins the benchmark measures, in the order of its
// tables: the template languages, then extism, the third-party plugin.
var langs = []string{"go", "tinygo", "rust", "js", "extism"}

// extismPlugin is the source of the extism plugin, from the module root.
const extismPlugin = "internal/testrig/bench/extism"

// template is the greet plugin of one language's `mcphost new` template,
// built, with its log call and the grant it needs taken out, or the
// extism plugin's: a tool that does what the native server's does.
type template struct {
	lang string
	ext  string // ".wasm" or ".js"
	data []byte // the module, or the JavaScript source
}

// logCalls are the template lines that send a log message to the client,
// one per language; the benchmark's plugins make no host call.
var logCalls = []string{"ctx.Log(", "ctx.info(", "ctx.log("}

// buildTemplate scaffolds the template of lang with mcphost new in a
// folder under work, takes its log call out and builds it with mcphost
// build; for extism, it builds the extism plugin. A toolchain that is
// missing (TinyGo, Rust) is reported by missing, loudly, unless CI is
// set, where it is an error.
func buildTemplate(mcphost, root, work, lang string) (t *template, missing string, err error) {
	if lang == "extism" {
		t, err := buildExtism(root, work)
		return t, "", err
	}
	if lang == "tinygo" {
		if _, err := tinygo.Find(); err != nil {
			return lacking(lang, err)
		}
	}
	if lang == "rust" {
		if _, err := exec.LookPath("cargo"); err != nil {
			return lacking(lang, fmt.Errorf("no cargo (scripts/setup-rust.sh installs it): %w", err))
		}
	}
	dir := filepath.Join(work, "src", lang)
	if out, err := exec.Command(mcphost, "new", "greet", "--lang", lang, "--dir", dir, "--checkout", root).CombinedOutput(); err != nil {
		return nil, "", fmt.Errorf("mcphost new --lang %s: %v\n%s", lang, err, out)
	}
	if err := unlog(dir); err != nil {
		return nil, "", err
	}
	t = &template{lang: lang, ext: ".wasm"}
	target := dir
	if lang == "js" {
		t.ext = ".js"
		target = filepath.Join(dir, "greet.js")
	}
	if out, err := exec.Command(mcphost, "build", target).CombinedOutput(); err != nil {
		return nil, "", fmt.Errorf("mcphost build (%s): %v\n%s", lang, err, out)
	} else if bytes.Contains(out, []byte("notify_logging_message")) {
		return nil, "", fmt.Errorf("mcphost build (%s): the plugin still needs its log call's grant:\n%s", lang, out)
	}
	if t.data, err = os.ReadFile(filepath.Join(dir, "greet"+t.ext)); err != nil {
		return nil, "", err
	}
	return t, "", nil
}

// buildExtism builds the extism plugin into a folder under work with the
// standard Go toolchain, as the go template is built.
func buildExtism(root, work string) (*template, error) {
	out := filepath.Join(work, "src", "extism", "greet.wasm")
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return nil, err
	}
	if err := plugintest.BuildTo(root, extismPlugin, out); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	return &template{lang: "extism", ext: ".wasm", data: data}, nil
}

// lacking is buildTemplate's answer for a missing toolchain.
func lacking(lang string, err error) (*template, string, error) {
	if testenv.CI() {
		return nil, "", fmt.Errorf("CI is set, and %s: %w", lang, err)
	}
	return nil, fmt.Sprintf("*** SKIPPED %s: %v ***", lang, err), nil
}

// unlog removes the log call from the scaffold's source files in dir and
// the host function it needs from its manifest, and fails if there was
// none to remove: the template changed, and so must this.
func unlog(dir string) error {
	removed := 0
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.HasSuffix(path, "_test.go") || strings.HasSuffix(path, ".toml") || strings.HasSuffix(path, ".md") || strings.HasSuffix(path, ".sh") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var out strings.Builder
		for line := range strings.Lines(string(src)) {
			if containsAny(line, logCalls) {
				removed++
				continue
			}
			out.WriteString(line)
		}
		text := strings.ReplaceAll(out.String(), `["notify_logging_message"]`, `[]`)
		return os.WriteFile(path, []byte(text), 0o644)
	})
	if err == nil && removed != 1 {
		err = fmt.Errorf("%s: found %d log calls in the template, want 1", dir, removed)
	}
	return err
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// distinct returns copy i of t, distinct from every other copy so that no
// two share compiled code: a module with a custom section holding i, a
// script with a comment.
func (t *template) distinct(i int) []byte {
	tag := fmt.Sprintf("copy %d", i)
	if t.ext == ".js" {
		return append(bytes.Clone(t.data), "\n// "+tag+"\n"...)
	}
	return abi.AppendCustomSection(t.data, "mcphost-bench", []byte(tag))
}

// pluginsDir writes n distinct copies of t into a new folder under work:
// greet.wasm, then greet2.wasm … (greet.js … for JavaScript).
func (t *template) pluginsDir(work string, n int) (string, error) {
	dir := filepath.Join(work, fmt.Sprintf("plugins-%s-%d", t.lang, n))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for i := 1; i <= n; i++ {
		name := "greet"
		if i > 1 {
			name = fmt.Sprintf("greet%d", i)
		}
		if err := os.WriteFile(filepath.Join(dir, name+t.ext), t.distinct(i), 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}
