package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/mcphost/mcphost/internal/tinygo"
)

// The plugin developer commands (new, build, inspect, call, get-prompt,
// read, complete), run as the real mcphost binary (mcphostBin, built by
// TestMain): a scaffold of each language is created, built, run and tested
// with its own test; inspect is checked on a plugin of each flavour; and
// call's errors are those of serve.

// devResult is the outcome of one mcphost run.
type devResult struct {
	stdout, stderr string
	code           int
}

// devRunIn runs mcphost with args in dir, with env added, and returns its
// outcome. Compiled modules are cached in a temporary folder, not the
// user's cache.
func devRunIn(t *testing.T, dir string, env []string, args ...string) devResult {
	t.Helper()
	cmd := exec.Command(mcphostBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(os.TempDir(), "mcphost-devcli-cache"))
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := devResult{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		res.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("mcphost %s: %v", strings.Join(args, " "), err)
	}
	return res
}

// devMust runs mcphost and fails the test unless it exits with status 0.
func devMust(t *testing.T, dir string, env []string, args ...string) devResult {
	t.Helper()
	start := time.Now()
	res := devRunIn(t, dir, env, args...)
	if res.code != 0 {
		t.Fatalf("mcphost %s: exit status %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), res.code, res.stdout, res.stderr)
	}
	t.Logf("mcphost %s: %v", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	return res
}

func devRoot(t *testing.T) string {
	t.Helper()
	root, err := plugintest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// devCheckScaffold runs the scaffold's tool, prompt and resource with call,
// get-prompt and read, in the scaffold's folder (whose mcphost.toml grants
// the plugin what its manifest asks for, and is read by default).
func devCheckScaffold(t *testing.T, dir, file, lang string) {
	t.Helper()
	name := strings.TrimSuffix(file, filepath.Ext(file))
	res := devMust(t, dir, nil, "call", file, "greet", "--arg", "name=World")
	if res.stdout != "Hello, World!\n" {
		t.Errorf("call greet: stdout %q, want %q", res.stdout, "Hello, World!\n")
	}
	if want := "[info] " + name + ": greeting World"; !strings.Contains(res.stderr, want) {
		t.Errorf("call greet: the plugin's log message %q is not on stderr:\n%s", want, res.stderr)
	}
	res = devMust(t, dir, nil, "call", file, "greet", "--json-args", `{"name": "World"}`, "--arg", "shout=true")
	if res.stdout != "HELLO, WORLD!\n" {
		t.Errorf("call greet, shouting: stdout %q", res.stdout)
	}
	res = devMust(t, dir, nil, "get-prompt", file, "welcome", "--arg", "name=Ada")
	if want := "[user]\nWrite a short, warm welcome message for Ada.\n"; res.stdout != want {
		t.Errorf("get-prompt welcome: stdout %q, want %q", res.stdout, want)
	}
	res = devMust(t, dir, nil, "read", file, "docs://"+name+"/about")
	if want := "written in " + lang; !strings.Contains(res.stdout, want) {
		t.Errorf("read about: stdout %q lacks %q", res.stdout, want)
	}
	// Without the config's grant (the scaffold's mcphost.toml beside the
	// plugin, which call finds), the plugin is refused as serve refuses it.
	other := t.TempDir()
	plugin, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, filepath.Base(file)), plugin, 0o644); err != nil {
		t.Fatal(err)
	}
	res = devRunIn(t, other, nil, "call", filepath.Base(file), "greet", "--arg", "name=World")
	if res.code != 1 || !strings.Contains(res.stderr, `host_functions = ["notify_logging_message"]`) {
		t.Errorf("call without the grant: exit %d, stderr:\n%s", res.code, res.stderr)
	}
}

func TestDevNewBuildCallGo(t *testing.T) {
	root := devRoot(t)
	dir := filepath.Join(t.TempDir(), "hello")
	res := devMust(t, root, nil, "new", "hello", "--lang", "go", "--dir", dir)
	if !strings.Contains(res.stdout, "using the PDK of the mcphost checkout at "+root) {
		t.Errorf("new did not use the checkout it ran in:\n%s", res.stdout)
	}
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(gomod), pdkModule+" => "+filepath.Join(root, "pdk", "go")) || !strings.Contains(string(gomod), abiModule+" => "+filepath.Join(root, "abi")) {
		t.Errorf("go.mod does not replace the PDK and ABI modules with the checkout's:\n%s", gomod)
	}
	if out, err := exec.Command("gofmt", "-l", dir).CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("the scaffold is not gofmt-clean: %v %s", err, out)
	}
	res = devRunIn(t, root, nil, "new", "hello", "--lang", "go", "--dir", dir)
	if res.code == 0 || !strings.Contains(res.stderr, "not empty") {
		t.Errorf("new into a non-empty folder: exit %d, stderr %s", res.code, res.stderr)
	}

	res = devMust(t, root, nil, "build", dir)
	if !strings.Contains(res.stdout, "built "+filepath.Join(dir, "hello.wasm")) || !strings.Contains(res.stdout, "manifest.json embedded") {
		t.Errorf("build: %s", res.stdout)
	}
	devCheckScaffold(t, dir, "hello.wasm", "Go")

	// The scaffold's own test: natively, then built and run with mcphost.
	start := time.Now()
	cmd := exec.Command("go", "test", "-count=1", "-v", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MCPHOST="+mcphostBin, "XDG_CACHE_HOME="+filepath.Join(os.TempDir(), "mcphost-devcli-cache"))
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestPlugin") || !strings.Contains(string(out), "--- PASS: TestGreeting") {
		t.Fatalf("the scaffold's go test: %v\n%s", err, out)
	}
	t.Logf("the scaffold's go test: %v", time.Since(start).Round(time.Millisecond))
}

func TestDevNewBuildCallJavaScript(t *testing.T) {
	root := devRoot(t)
	dir := filepath.Join(t.TempDir(), "greeter")
	devMust(t, root, nil, "new", "greeter", "--lang", "js", "--dir", dir)
	res := devMust(t, root, nil, "build", dir)
	if !strings.Contains(res.stdout, "ok "+filepath.Join(dir, "greeter.js")) {
		t.Errorf("build: %s", res.stdout)
	}
	out := t.TempDir()
	res = devMust(t, root, nil, "build", filepath.Join(dir, "greeter.js"), "-o", out)
	if _, err := os.Stat(filepath.Join(out, "greeter.js")); err != nil {
		t.Errorf("build -o FOLDER did not copy the plugin there: %v\n%s", err, res.stdout)
	}
	devCheckScaffold(t, dir, "greeter.js", "JavaScript")

	// The scaffold's own test, test.sh, runs it with mcphost call.
	start := time.Now()
	cmd := exec.Command("sh", filepath.Join(dir, "test.sh"))
	cmd.Env = append(os.Environ(), "MCPHOST="+mcphostBin, "XDG_CACHE_HOME="+filepath.Join(os.TempDir(), "mcphost-devcli-cache"))
	if b, err := cmd.CombinedOutput(); err != nil || !strings.HasSuffix(string(b), "PASS\n") {
		t.Fatalf("the scaffold's test.sh: %v\n%s", err, b)
	}
	t.Logf("the scaffold's test.sh: %v", time.Since(start).Round(time.Millisecond))

	// A syntax error fails the build with the engine's message.
	bad := filepath.Join(t.TempDir(), "bad.js")
	if err := os.WriteFile(bad, []byte("mcphost.tool('x', 'x', () => 1;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res = devRunIn(t, root, nil, "build", bad)
	if res.code != 1 || !strings.Contains(res.stderr, "SyntaxError") {
		t.Errorf("build of a syntax error: exit %d, stderr %s", res.code, res.stderr)
	}
}

func TestDevNewBuildCallRust(t *testing.T) {
	root, script := rustScript(t) // skips loudly without a toolchain, fails in CI
	dir := filepath.Join(t.TempDir(), "textual")
	devMust(t, root, nil, "new", "textual", "--lang", "rust", "--dir", dir)
	cargo, err := os.ReadFile(filepath.Join(dir, "Cargo.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cargo), `mcphost-pdk = { path = "`+filepath.Join(root, "pdk", "rust")+`" }`) {
		t.Errorf("Cargo.toml does not take the PDK from the checkout:\n%s", cargo)
	}
	// Build outputs go where build-plugin.sh keeps them, so that the crates
	// the Rust tests compiled already are reused.
	env := []string{"CARGO_TARGET_DIR=" + filepath.Join(root, "build", "rust-target")}
	res := devMust(t, root, env, "build", dir)
	if !strings.Contains(res.stdout, "built "+filepath.Join(dir, "textual.wasm")) || !strings.Contains(res.stdout, "manifest embedded by the crate") {
		t.Errorf("build: %s", res.stdout)
	}
	devCheckScaffold(t, dir, "textual.wasm", "Rust")

	// The scaffold's own native tests, through the PDK's testing module.
	start := time.Now()
	cmd := exec.Command(script, "--test", dir)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "test result: ok. 3 passed") {
		t.Fatalf("cargo test of the scaffold: %v\n%s", err, out)
	}
	t.Logf("cargo test of the scaffold: %v", time.Since(start).Round(time.Millisecond))
}

// inspectReport is the part of inspect --json the tests read.
type inspectReport struct {
	Flavour           string                 `json:"flavour"`
	ABI               int                    `json:"abi"`
	Manifest          *abi.Manifest          `json:"manifest"`
	Tools             []abi.Tool             `json:"tools"`
	Prompts           []abi.Prompt           `json:"prompts"`
	Resources         []abi.Resource         `json:"resources"`
	ResourceTemplates []abi.ResourceTemplate `json:"resourceTemplates"`
}

func TestDevInspectFlavours(t *testing.T) {
	root := devRoot(t)
	for _, tc := range []struct {
		plugin, flavour, text string
		abi                   int
		needs                 []string
		tools                 []string
		prompts, resources    int
		templates             int
	}{
		{plugin: "plugins/examples/tools", flavour: "mcphost", text: "mcphost ABI 1", abi: 1,
			needs: []string{"notify_progress"}, tools: []string{"text_stats", "hash"}},
		{plugin: "internal/testrig/testplugins/servlet", flavour: "v1-servlet", text: "v1 servlet",
			tools: []string{"add", "shout"}},
		{plugin: "internal/testrig/testplugins/hypermcp", flavour: "hyper-mcp-v2", text: "hyper-mcp v2",
			tools: []string{"reverse", "request_context"}, prompts: 1},
		{plugin: "plugins/examples/units/units.js", flavour: "javascript", text: "JavaScript", abi: 1,
			needs: []string{"notify_progress", "notify_logging_message"}, tools: []string{"convert_units", "conversion_table"},
			prompts: 1, resources: 1, templates: 1},
	} {
		t.Run(filepath.Base(tc.plugin), func(t *testing.T) {
			file := filepath.Join(root, tc.plugin)
			if !strings.HasSuffix(file, ".js") {
				file = plugintest.Build(t, tc.plugin)
			}
			start := time.Now()
			res := devMust(t, root, nil, "inspect", "--json", file)
			var rep inspectReport
			if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
				t.Fatalf("inspect --json: %v\n%s", err, res.stdout)
			}
			if rep.Flavour != tc.flavour || rep.ABI != tc.abi {
				t.Errorf("flavour %q, abi %d; want %q, %d", rep.Flavour, rep.ABI, tc.flavour, tc.abi)
			}
			var needs []string
			if rep.Manifest != nil {
				needs = rep.Manifest.Needs.HostFunctions
			}
			if !slices.Equal(needs, tc.needs) {
				t.Errorf("needs host_functions %v, want %v", needs, tc.needs)
			}
			var tools []string
			for _, tool := range rep.Tools {
				tools = append(tools, tool.Name)
				if len(tool.InputSchema) == 0 {
					t.Errorf("tool %s has no input schema", tool.Name)
				}
			}
			for _, want := range tc.tools {
				if !slices.Contains(tools, want) {
					t.Errorf("tools %v lack %s", tools, want)
				}
			}
			if len(rep.Prompts) < tc.prompts || len(rep.Resources) < tc.resources || len(rep.ResourceTemplates) < tc.templates {
				t.Errorf("%d prompts, %d resources, %d templates; want at least %d, %d, %d",
					len(rep.Prompts), len(rep.Resources), len(rep.ResourceTemplates), tc.prompts, tc.resources, tc.templates)
			}
			text := devMust(t, root, nil, "inspect", file).stdout
			for _, want := range append([]string{"flavour:   " + tc.text, "with no grants"}, tc.tools...) {
				if !strings.Contains(text, want) {
					t.Errorf("inspect output lacks %q:\n%s", want, text)
				}
			}
			if len(tc.needs) > 0 && !strings.Contains(text, "host_functions: "+strings.Join(tc.needs, ", ")) {
				t.Errorf("inspect output does not show the needs:\n%s", text)
			}
			t.Logf("inspect %s: %v for both runs", tc.plugin, time.Since(start).Round(time.Millisecond))
		})
	}
}

// devUnitsGrant grants the units example what it needs.
const devUnitsGrant = "[plugins.units]\nhost_functions = [\"notify_progress\", \"notify_logging_message\"]\n"

func TestDevCallErrorsAndOtherRequests(t *testing.T) {
	root := devRoot(t)
	units := filepath.Join(root, "plugins", "examples", "units", "units.js")
	dir := t.TempDir()
	config := filepath.Join(dir, "mcphost.toml")
	if err := os.WriteFile(config, []byte(devUnitsGrant), 0o644); err != nil {
		t.Fatal(err)
	}
	// The working directory holds the config, which is not looked up there.
	useConfig := []string{"MCPHOST_CONFIG=" + config}

	res := devRunIn(t, dir, useConfig, "call", units, "no_such_tool")
	if res.code != 1 || !strings.Contains(res.stderr, `unknown tool: "no_such_tool" (-32602)`) || !strings.Contains(res.stderr, "convert_units") {
		t.Errorf("unknown tool: exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
	res = devRunIn(t, dir, useConfig, "call", units, "convert_units", "--arg", "value=abc", "--arg", "from=km", "--arg", "to=mi")
	if res.code != 1 || !strings.Contains(res.stdout, "invalid arguments for tool convert_units") || !strings.Contains(res.stdout, "/value") ||
		!strings.Contains(res.stderr, "isError: true") {
		t.Errorf("bad argument: exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
	res = devRunIn(t, dir, useConfig, "call", units, "convert_units", "--arg", "from=km", "--arg", "to=mi")
	if res.code != 1 || !strings.Contains(res.stdout, "missing property 'value'") {
		t.Errorf("missing argument: exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
	res = devRunIn(t, dir, useConfig, "call", units, "convert_units", "--arg", "value=1", "--arg", "from=kg", "--arg", "to=mi")
	if res.code != 1 || !strings.Contains(res.stdout, "cannot convert mass (kg) to length (mi)") {
		t.Errorf("a tool error: exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
	res = devRunIn(t, dir, useConfig, "call", units, "convert_units", "--arg", "value")
	if res.code != 1 || !strings.Contains(res.stderr, "want KEY=VALUE") {
		t.Errorf("a malformed --arg: exit %d, stderr %q", res.code, res.stderr)
	}

	// A good call: structured content, typed --arg values, progress and logs
	// on stderr.
	res = devMust(t, dir, useConfig, "call", units, "convert_units", "--arg", "value=3", "--arg", "from=km", "--arg", "to=m")
	var structured map[string]any
	if err := json.Unmarshal([]byte(res.stdout), &structured); err != nil || structured["value"] != 3000.0 || structured["unit"] != "m" {
		t.Errorf("convert_units: %v; stdout:\n%s", err, res.stdout)
	}
	res = devMust(t, dir, useConfig, "call", units, "conversion_table", "--arg", "unit=kg")
	if !strings.Contains(res.stdout, "1 kg = 1000 g") || !strings.Contains(res.stderr, "[progress 1/5 converted to g]") ||
		!strings.Contains(res.stderr, "[info] units:") {
		t.Errorf("conversion_table: stdout %q, stderr %q", res.stdout, res.stderr)
	}
	res = devMust(t, dir, useConfig, "call", units, "convert_units", "--json", "--json-args", `{"value": 1, "from": "m", "to": "cm"}`)
	var result struct {
		Content           []map[string]any `json:"content"`
		StructuredContent map[string]any   `json:"structuredContent"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &result); err != nil || result.StructuredContent["value"] != 100.0 || len(result.Content) != 1 {
		t.Errorf("call --json: %v\n%s", err, res.stdout)
	}

	res = devMust(t, dir, useConfig, "get-prompt", units, "explain_conversion", "--arg", "from=km", "--arg", "to=mi")
	if !strings.HasPrefix(res.stdout, "[user]\nExplain, step by step, how to convert a value in kilometre (km) to mile (mi)") {
		t.Errorf("get-prompt: %q", res.stdout)
	}
	res = devRunIn(t, dir, useConfig, "get-prompt", units, "explain_conversion", "--arg", "from=km")
	if res.code != 1 || !strings.Contains(res.stderr, "(-32602)") {
		t.Errorf("get-prompt without a required argument: exit %d, stderr %q", res.code, res.stderr)
	}
	res = devMust(t, dir, useConfig, "read", units, "units://unit/km")
	if !strings.Contains(res.stdout, `"name":"kilometre"`) {
		t.Errorf("read: %q", res.stdout)
	}
	res = devRunIn(t, dir, useConfig, "read", units, "units://unit/parsec")
	if res.code != 1 || !strings.Contains(res.stderr, "(-32002)") {
		t.Errorf("read of an unknown resource: exit %d, stderr %q", res.code, res.stderr)
	}
	res = devMust(t, dir, useConfig, "complete", units, "--prompt", "explain_conversion", "to", "k", "--arg", "from=m")
	if res.stdout != "km\n" {
		t.Errorf("complete --prompt: %q", res.stdout)
	}
	res = devMust(t, dir, useConfig, "complete", units, "--template", "units://unit/{unit}", "unit", "mi")
	if lines := strings.Fields(res.stdout); !slices.Contains(lines, "mi") || !slices.Contains(lines, "min") || slices.Contains(lines, "km") {
		t.Errorf("complete --template: %q", res.stdout)
	}

	// Shell completion: cobra's completion command, and tool names.
	res = devMust(t, dir, useConfig, "completion", "bash")
	if !strings.Contains(res.stdout, "bash completion") {
		t.Errorf("completion bash: %.200s", res.stdout)
	}
	res = devMust(t, dir, useConfig, "__complete", "call", units, "")
	if !strings.Contains(res.stdout, "convert_units\t") {
		t.Errorf("completing a tool name: %q", res.stdout)
	}
}

// TestDevCallWithoutClient: a host function that needs a client fails with
// a message saying there is none.
func TestDevCallWithoutClient(t *testing.T) {
	root := devRoot(t)
	dir := t.TempDir()
	plugin := filepath.Join(dir, "summarize.wasm")
	if err := plugintest.BuildTo(root, "plugins/examples/summarize", plugin); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "mcphost.toml")
	if err := os.WriteFile(config, []byte("[plugins.summarize]\nhost_functions = [\"create_message\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := devRunIn(t, dir, nil, "call", plugin, "summarize", "--arg", "text=Some long text.")
	if res.code != 1 || !strings.Contains(res.stdout, "without an MCP client") || !strings.Contains(res.stderr, "there is no MCP client here") {
		t.Errorf("sampling without a client: exit %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
}

// TestDevNewOutsideACheckout: a scaffold made for the published PDKs asks
// for them the normal way (go mod tidy; a crates.io version).
func TestDevNewOutsideACheckout(t *testing.T) {
	dir := t.TempDir()
	res := devMust(t, dir, nil, "new", "outside", "--lang", "go", "--pdk", "published")
	gomod, err := os.ReadFile(filepath.Join(dir, "outside", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(gomod), "replace") || !regexp.MustCompile(`(?m)^\s*(require )?`+regexp.QuoteMeta(pdkModule)+` v[0-9]+\.[0-9]+\.[0-9]+$`).Match(gomod) || !strings.Contains(res.stdout, "go mod tidy") {
		t.Errorf("go.mod outside a checkout:\n%s\nnew said:\n%s", gomod, res.stdout)
	}
	devMust(t, dir, nil, "new", "outside_rs", "--lang", "rust", "--pdk", "published")
	cargo, err := os.ReadFile(filepath.Join(dir, "outside_rs", "Cargo.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^mcphost-pdk = "[0-9]+(\.[0-9]+)*"$`).Match(cargo) {
		t.Errorf("Cargo.toml outside a checkout:\n%s", cargo)
	}
	for _, bad := range [][]string{
		{"new", "bad name", "--lang", "go"},
		{"new", "x", "--lang", "cobol"},
		{"new", "1abc", "--lang", "rust"},
		{"new", "x", "--pdk", "vendored"},
		{"new", "x", "--pdk", "published", "--checkout", devRoot(t)},
		{"new", "x", "--checkout", dir},
	} {
		if res := devRunIn(t, dir, nil, bad...); res.code == 0 {
			t.Errorf("mcphost %s succeeded", strings.Join(bad, " "))
		}
	}
	// No TinyGo on PATH, in $TINYGOROOT or in the cache (devRunIn's).
	noTinyGo := []string{"PATH=" + filepath.Dir(goBin(t)), "TINYGOROOT="}
	res = devRunIn(t, dir, noTinyGo, "build", filepath.Join(dir, "outside"), "--tinygo")
	if res.code != 1 || !strings.Contains(res.stderr, "TinyGo not found") || !strings.Contains(res.stderr, "scripts/setup-tinygo.sh") {
		t.Errorf("build --tinygo without TinyGo: exit %d, stderr %q", res.code, res.stderr)
	}
}

// goBin returns the go command's path.
func goBin(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// tinygoEnv returns the environment under which mcphost finds the TinyGo
// plugintest builds with (devRunIn moves the user's cache, where
// scripts/setup-tinygo.sh installs it): $TINYGOROOT, or PATH.
func tinygoEnv(t *testing.T) []string {
	t.Helper()
	plugintest.RequireTinyGo(t)
	tc, err := tinygo.Find()
	if err != nil {
		t.Fatal(err)
	}
	if tc.Root != "" && filepath.Join(tc.Root, "bin", "tinygo") == tc.Bin {
		return []string{"TINYGOROOT=" + tc.Root}
	}
	return []string{"PATH=" + filepath.Dir(tc.Bin) + string(os.PathListSeparator) + os.Getenv("PATH")}
}

// TestDevNewBuildCallTinyGo: a TinyGo scaffold (go.mod says
// //mcphost:build tinygo) is built with TinyGo by a plain mcphost build,
// with either scheduler, and runs. (Its own test, the Go scaffold's, runs
// the same mcphost build: TestDevNewBuildCallGo runs it.) A plugin that
// starts goroutines, built without a scheduler, fails saying what to do.
func TestDevNewBuildCallTinyGo(t *testing.T) {
	env := tinygoEnv(t)
	root := devRoot(t)
	dir := filepath.Join(t.TempDir(), "hello")
	res := devMust(t, root, env, "new", "hello", "--lang", "tinygo", "--dir", dir)
	if !strings.Contains(res.stdout, "created TinyGo plugin hello") {
		t.Errorf("new --lang tinygo: %s", res.stdout)
	}
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(gomod), "\n//mcphost:build tinygo\n") {
		t.Errorf("go.mod lacks the TinyGo line:\n%s", gomod)
	}
	res = devMust(t, root, env, "build", dir)
	if !strings.Contains(res.stdout, "built "+filepath.Join(dir, "hello.wasm")) || !strings.Contains(res.stdout, "TinyGo (wasip1, none scheduler); manifest.json embedded") {
		t.Errorf("build: %s", res.stdout)
	}
	devCheckScaffold(t, dir, "hello.wasm", "Go")

	async := filepath.Join(dir, "asyncify", "hello.wasm")
	res = devMust(t, root, env, "build", dir, "--scheduler", "asyncify", "-o", async)
	if !strings.Contains(res.stdout, "TinyGo (wasip1, asyncify scheduler)") {
		t.Errorf("build --scheduler asyncify: %s", res.stdout)
	}
	if res := devMust(t, dir, env, "call", async, "greet", "--arg", "name=World", "--config", "mcphost.toml"); res.stdout != "Hello, World!\n" {
		t.Errorf("call greet on the asyncify build: %q", res.stdout)
	}

	// A plugin that starts goroutines, built without a scheduler: the
	// error says which scheduler it needs.
	res = devRunIn(t, root, env, "build", filepath.Join(root, "internal", "testrig", "testplugins", "goroutines"), "--tinygo", "-o", filepath.Join(t.TempDir(), "g.wasm"))
	if res.code != 1 || !strings.Contains(res.stderr, "the plugin starts goroutines") || !strings.Contains(res.stderr, "--scheduler asyncify") {
		t.Errorf("build --tinygo of a plugin with goroutines: exit %d, stderr:\n%s", res.code, res.stderr)
	}
}
