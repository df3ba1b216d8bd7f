package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const module = "github.com/mcphost/mcphost"

// deps returns every package pkg reaches, itself included, through its
// non-test imports, as go list -deps reports them. dir is the directory
// to run go list in (the module that holds pkg).
func deps(t *testing.T, dir, pkg string) []string {
	t.Helper()
	out := goList(t, dir, "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg)
	var all []string
	for _, line := range strings.Fields(out) {
		if line != pkg {
			all = append(all, line)
		}
	}
	return all
}

// goList runs go list with args in dir and returns its output.
func goList(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// root is the repository's root directory.
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// boundary is one rule of the layout: pkg must reach none of forbidden
// (import path prefixes), or, when only is set, nothing outside only and
// the standard library.
type boundary struct {
	pkg       string
	dir       string // module directory, relative to the root; "" for the root module
	forbidden []string
	only      []string
	why       string
}

var boundaries = []boundary{
	{pkg: module + "/abi", dir: "abi", only: []string{}, why: "abi is the plugin contract: standard library only"},
	{pkg: module + "/pdk/go", dir: "pdk/go", only: []string{module + "/abi"}, why: "a plugin must not pull in the server"},
	{pkg: module + "/host", only: []string{
		module + "/abi", module + "/internal/jsonrpc", module + "/internal/gopool", "github.com/santhosh-tekuri/jsonschema/v6", "golang.org/x/text", "github.com/yosida95/uritemplate/v3",
		// OpenTelemetry's tracing API (spans, trace context), of which
		// the attribute package hashes with xxhash.
		"go.opentelemetry.io/otel", "github.com/cespare/xxhash/v2",
	}, why: "host is the MCP engine: no sandbox, plugin loading, config, auth, CLI, Extism, wazero or JWT"},
	{pkg: module + "/host", forbidden: []string{"go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/exporters"},
		why: "the engine starts spans through OpenTelemetry's API; the SDK and its exporters are the operator's choice (package tracing)"},
	{pkg: module + "/host", forbidden: []string{module + "/mcphttp"},
		why: "the engine never imports its HTTP front door: the front door is built on the engine's exported API"},
	{pkg: module + "/mcphttp", forbidden: []string{module + "/sandbox", module + "/pluginhost", module + "/config", module + "/auth", module + "/cmd", "github.com/extism", "github.com/tetratelabs/wazero"},
		why: "the HTTP front door serves the engine (host) over HTTP and knows nothing of plugins, their sandbox or the operator's config"},
	{pkg: module + "/internal/jsonrpc", only: []string{},
		why: "the JSON-RPC codec is standard library only and knows nothing of MCP"},
	{pkg: module + "/internal/gopool", only: []string{},
		why: "the goroutine pool is standard library only and knows nothing of what it runs"},
	{pkg: module + "/sandbox", forbidden: []string{module + "/host", module + "/pluginhost", module + "/config", module + "/auth", module + "/cmd"},
		why: "the sandbox knows nothing of MCP or of the operator's config"},
	{pkg: module + "/sandbox/internal/wasmpass", only: []string{},
		why: "the WebAssembly passes read and rewrite bytes: standard library only, nothing of the runtime (wazero, Extism, sandbox)"},
	{pkg: module + "/internal/jsengine", forbidden: []string{module + "/host", module + "/pluginhost", module + "/config"},
		why: "the JavaScript engine is a plugin module and its loader"},
	{pkg: module + "/config", forbidden: []string{module + "/host", module + "/pluginhost", module + "/auth"},
		why: "config reads mcphost.toml; it validates limits through the sandbox only"},
	{pkg: module + "/auth", forbidden: []string{module + "/host", module + "/pluginhost"},
		why: "auth checks HTTP credentials; the engine learns the subject through host.Options.Subject"},
	{pkg: module + "/pluginhost", forbidden: []string{module + "/cmd", "github.com/spf13/cobra"},
		why: "plugin loading is a library, not a command"},
}

func TestPackageBoundaries(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	for _, b := range boundaries {
		t.Run(strings.TrimPrefix(b.pkg, module+"/"), func(t *testing.T) {
			for _, dep := range deps(t, filepath.Join(root(t), b.dir), b.pkg) {
				if b.only != nil && !hasAnyPrefix(dep, b.only) {
					t.Errorf("%s reaches %s (%s)", b.pkg, dep, b.why)
				}
				if hasAnyPrefix(dep, b.forbidden) {
					t.Errorf("%s reaches %s (%s)", b.pkg, dep, b.why)
				}
			}
		})
	}
}

// TestNoCodeReachesATestRig checks that no package outside
// internal/testrig reaches one of its packages through its non-test
// imports: the rigs (helpers, test plugins, the end-to-end suite) are for
// tests only, and a binary or library never carries them.
func TestNoCodeReachesATestRig(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	rig := module + "/internal/testrig"
	out := goList(t, root(t), "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}", "./...")
	for line := range strings.Lines(out) {
		pkg, deps, _ := strings.Cut(strings.TrimSpace(line), " ")
		if hasAnyPrefix(pkg, []string{rig}) {
			continue
		}
		for _, dep := range strings.Fields(deps) {
			if hasAnyPrefix(dep, []string{rig}) {
				t.Errorf("%s reaches %s, a test rig", pkg, dep)
			}
		}
	}
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if s == p || strings.HasPrefix(s, p+"/") {
			return true
		}
	}
	return false
}

// TestJSONRPCTypesAreDefinedOnce checks that only the codec,
// internal/jsonrpc, declares a JSON-RPC message type (a struct with a field
// tagged json:"jsonrpc"): the engine, its transports, the developer tools
// and everything else use the codec's.
func TestJSONRPCTypesAreDefinedOnce(t *testing.T) {
	rootDir := root(t)
	err := filepath.WalkDir(rootDir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "testdata", "build":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(rootDir, path)
		if filepath.Dir(rel) == filepath.Join("internal", "jsonrpc") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			field, ok := n.(*ast.Field)
			if !ok || field.Tag == nil {
				return true
			}
			tag := reflect.StructTag(strings.Trim(field.Tag.Value, "`"))
			if name, _, _ := strings.Cut(tag.Get("json"), ","); name == "jsonrpc" {
				t.Errorf("%s declares a JSON-RPC message type; use internal/jsonrpc's", rel)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestFrontDoorUsesOnlyTheEnginesExportedAPI checks what the compiler
// cannot: that the HTTP front door (mcphttp), a package apart from the
// engine, reaches none of the engine's unexported names through
// //go:linkname or package unsafe, so that the engine's exported API is
// all it uses.
func TestFrontDoorUsesOnlyTheEnginesExportedAPI(t *testing.T) {
	dir := filepath.Join(root(t), "mcphttp")
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments|parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if imp.Path.Value == `"unsafe"` {
				t.Errorf("%s imports unsafe", filepath.Base(path))
			}
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(src), "//go:linkname") {
			t.Errorf("%s uses //go:linkname", filepath.Base(path))
		}
	}
}
