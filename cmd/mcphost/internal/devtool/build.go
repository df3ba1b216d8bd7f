package devtool

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/config"
	js "github.com/mcphost/mcphost/internal/jsengine"
	"github.com/mcphost/mcphost/internal/tinygo"
	"github.com/mcphost/mcphost/pluginhost"
	"github.com/mcphost/mcphost/sandbox"
	"github.com/spf13/cobra"
)

// pluginNamePattern is the rule for plugin names (the loader's).
var pluginNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Import paths that mark a Go plugin.
const (
	goPDKImport       = "github.com/mcphost/mcphost/pdk/go"
	extismGoPDKImport = "github.com/extism/go-pdk"
)

type buildFlags struct {
	out       string
	tinygo    bool
	scheduler string // TinyGo's, "" for the go.mod directive's or tinygo.Default
}

func newBuildCommand() *cobra.Command {
	var f buildFlags
	cmd := &cobra.Command{
		Use:   "build DIR [-o OUT]",
		Short: "Build a plugin from its source: Go, Rust or JavaScript",
		Long: `Build builds the plugin whose source is in DIR into a file serve loads,
detecting the language:

  Go          go.mod or .go files (a main package using the Go PDK,
              ` + goPDKImport + `): built with the standard toolchain,
              GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath
              -ldflags=-s, then DIR/manifest.json is embedded as the
              mcphost.manifest section. With --tinygo, or when go.mod has
              the line ` + tinygoDirective + ` (mcphost new --lang tinygo
              writes it), TinyGo builds it instead: tinygo build
              -buildmode=c-shared -no-debug with mcphost's wasip1 target
              (TinyGo's, linking Debian's wasi-libc, 256 KiB stacks), and
              --scheduler asyncify (goroutines) or none (smaller and
              faster; a plugin cannot start goroutines). TinyGo is found on
              PATH, in $TINYGOROOT/bin, or where scripts/setup-tinygo.sh
              installs it (~/.cache/mcphost/tinygo-` + tinygo.Version + `).
  Rust        Cargo.toml (a cdylib crate using mcphost-pdk, which embeds its
              manifest): cargo build --release for WASI, with the toolchain
              pdk/rust/build-plugin.sh would pick: Debian's rustc, cargo and
              packaged crates, offline, with target wasm32-wasi, when they are
              installed; otherwise the cargo and rustc on PATH with target
              wasm32-wasip1 (or wasm32-wasi). MCPHOST_RUST=debian or
              MCPHOST_RUST=path forces one. Build outputs go to
              $CARGO_TARGET_DIR (default DIR/target).
  JavaScript  a .js file (DIR may be the file itself, or a folder holding
              one): nothing to compile; its manifest comment is checked and
              the source is run once on the embedded engine, with no grants,
              which reports syntax errors and exceptions of the top level.
              With -o it is copied there.

OUT defaults to DIR/NAME.wasm, NAME being the manifest's name, else the
folder's (Go) or the crate's (Rust); when OUT is an existing folder the
file goes inside it. The plugin's name when served is its file name.`,
		Example: `  mcphost build ./hello                       # -> hello/hello.wasm
  mcphost build ./hello -o plugins/            # -> plugins/hello.wasm
  mcphost build ./units.js -o plugins/         # checks, then copies`,
		Args: cobra.ExactArgs(1),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return []string{"js"}, cobra.ShellCompDirectiveFilterFileExt
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := commandContext(cmd)
			defer stop()
			return buildPlugin(ctx, args[0], f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVarP(&f.out, "out", "o", "", "output file or folder (default DIR/NAME.wasm)")
	cmd.Flags().BoolVar(&f.tinygo, "tinygo", false, "build a Go plugin with TinyGo (smaller modules; see scripts/setup-tinygo.sh)")
	cmd.Flags().StringVar(&f.scheduler, "scheduler", "", "TinyGo's goroutine scheduler: asyncify (goroutines) or none (smaller, faster, no goroutines) (default "+string(tinygo.Default)+")")
	_ = cmd.RegisterFlagCompletionFunc("scheduler", cobra.FixedCompletions([]string{string(tinygo.Asyncify), string(tinygo.None)}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// buildPlugin detects the language of the source at path and builds it.
func buildPlugin(ctx context.Context, path string, f buildFlags, stdout, stderr io.Writer) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		if filepath.Ext(path) == js.Ext {
			return buildJS(ctx, path, f, stdout)
		}
		return fmt.Errorf("%s: give a plugin's source folder (Go or Rust) or a .js file", path)
	}
	if _, err := os.Stat(filepath.Join(path, "Cargo.toml")); err == nil {
		if f.tinygo || f.scheduler != "" {
			return errors.New("--tinygo and --scheduler build Go plugins; this is a Rust crate (Cargo.toml)")
		}
		return buildRust(ctx, path, f, stdout, stderr)
	}
	goFiles, _ := filepath.Glob(filepath.Join(path, "*.go"))
	if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil || len(goFiles) > 0 {
		return buildGo(ctx, path, f, stdout, stderr)
	}
	jsFiles, _ := filepath.Glob(filepath.Join(path, "*"+js.Ext))
	switch len(jsFiles) {
	case 1:
		return buildJS(ctx, jsFiles[0], f, stdout)
	case 0:
		return fmt.Errorf("%s: no plugin source: want a Go package (go.mod, .go files), a Rust crate (Cargo.toml) or a JavaScript plugin (.js file)", path)
	}
	return fmt.Errorf("%s holds several .js files (%s): give the one to build", path, strings.Join(baseNames(jsFiles), ", "))
}

func baseNames(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return out
}

// buildOutput returns the output file for a plugin named name with
// extension ext built from dir.
func buildOutput(out, dir, name, ext string) (string, error) {
	if out == "" {
		out = filepath.Join(dir, name+ext)
	} else if st, err := os.Stat(out); (err == nil && st.IsDir()) || strings.HasSuffix(out, string(filepath.Separator)) {
		out = filepath.Join(out, name+ext)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", err
	}
	return filepath.Abs(out)
}

// buildName picks a plugin's file name: the manifest's name, else fallback.
func buildName(manifest *abi.Manifest, fallback string) (string, error) {
	name := fallback
	if manifest != nil && manifest.Name != "" {
		name = manifest.Name
	}
	if !pluginNamePattern.MatchString(name) {
		return "", fmt.Errorf("plugin name %q is not letters, digits, '-' and '_': give the output file with -o", name)
	}
	return name, nil
}

// readManifestFile reads dir/manifest.json, nil when there is none.
func readManifestFile(dir string) (*abi.Manifest, []byte, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var m abi.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, "manifest.json"), err)
	}
	return &m, raw, nil
}

// buildGo builds a Go plugin with the standard toolchain or TinyGo and
// embeds its manifest.json.
func buildGo(ctx context.Context, dir string, f buildFlags, stdout, stderr io.Writer) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	manifest, manifestRaw, err := readManifestFile(dir)
	if err != nil {
		return err
	}
	name, err := buildName(manifest, filepath.Base(abs))
	if err != nil {
		return err
	}
	out, err := buildOutput(f.out, dir, name, ".wasm")
	if err != nil {
		return err
	}
	switch imports := goImports(dir); {
	case imports[goPDKImport] || imports[extismGoPDKImport]:
	default:
		fmt.Fprintf(stderr, "warning: no .go file of %s imports the Go PDK (%s); building it anyway\n", dir, goPDKImport)
	}
	useTinyGo, sched, err := goToolchain(dir, f)
	if err != nil {
		return err
	}
	tmp := out + ".tmp"
	defer os.Remove(tmp)
	var cmd *exec.Cmd
	toolchain := "Go (wasip1)"
	if useTinyGo {
		tc, err := tinygo.Find()
		if err != nil {
			return fmt.Errorf("%s: %w; or build with the standard Go toolchain (leave --tinygo out, and the %s line of go.mod)", dir, err, tinygoDirective)
		}
		if cmd, err = tc.Command(ctx, abs, tmp, sched); err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
		if !tc.Patched(ctx) {
			fmt.Fprintf(stderr, "warning: %s lacks mcphost's patch to TinyGo's collector, whose pauses are then several times longer (RATIONALE.md, \"Why does the project's TinyGo carry a patch?\"); %s\n", tc.Bin, tinygo.InstallHint)
		}
		toolchain = "TinyGo (wasip1, " + string(sched) + " scheduler)"
	} else {
		cmd = exec.CommandContext(ctx, "go", "build", "-buildmode=c-shared", "-trimpath", "-ldflags=-s", "-o", tmp, ".")
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
		cmd.Dir = dir
	}
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.MultiWriter(stderr, &log), io.MultiWriter(stderr, &log)
	if err := cmd.Run(); err != nil {
		if useTinyGo && sched == tinygo.None && strings.Contains(log.String(), "without a scheduler") {
			return fmt.Errorf("%s: TinyGo build failed: the plugin starts goroutines, which -scheduler=none cannot run: build with --scheduler asyncify", dir)
		}
		return fmt.Errorf("%s: %s build failed: %w", dir, strings.Fields(toolchain)[0], err)
	}
	wasm, err := os.ReadFile(tmp)
	if err != nil {
		return err
	}
	note := "no manifest.json: the plugin declares no needs"
	if manifestRaw != nil {
		if wasm, err = abi.EmbedManifest(wasm, manifestRaw); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, "manifest.json"), err)
		}
		note = "manifest.json embedded"
	}
	if err := os.WriteFile(tmp, wasm, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		return err
	}
	return buildReport(stdout, out, toolchain, note)
}

// tinygoDirective is the go.mod comment that makes mcphost build use
// TinyGo: "//mcphost:build tinygo", optionally followed by
// "scheduler=asyncify" or "scheduler=none".
const tinygoDirective = "//mcphost:build tinygo"

// goToolchain decides how the Go plugin in dir is built: with TinyGo (and
// which scheduler) when --tinygo is given or go.mod has tinygoDirective;
// --scheduler wins over the directive's scheduler.
func goToolchain(dir string, f buildFlags) (useTinyGo bool, sched tinygo.Scheduler, err error) {
	useTinyGo = f.tinygo
	name := f.scheduler
	if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			rest, ok := strings.CutPrefix(strings.TrimSpace(line), tinygoDirective)
			if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '\t') {
				continue
			}
			useTinyGo = true
			for _, field := range strings.Fields(rest) {
				v, ok := strings.CutPrefix(field, "scheduler=")
				if !ok {
					return false, "", fmt.Errorf("%s: %q: want %s [scheduler=asyncify|none]", filepath.Join(dir, "go.mod"), strings.TrimSpace(line), tinygoDirective)
				}
				if name == "" {
					name = v
				}
			}
		}
	}
	if !useTinyGo {
		if f.scheduler != "" {
			return false, "", errors.New("--scheduler is TinyGo's: give --tinygo too")
		}
		return false, "", nil
	}
	sched, err = tinygo.ParseScheduler(name)
	return true, sched, err
}

// goImports returns the import paths of the non-test .go files of dir.
func goImports(dir string) map[string]bool {
	imports := map[string]bool{}
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, parser.ImportsOnly)
		if err != nil {
			continue
		}
		for _, imp := range f.Imports {
			if p, err := strconv.Unquote(imp.Path.Value); err == nil {
				imports[p] = true
			}
		}
	}
	return imports
}

// buildReport checks a built module and prints one line about it.
func buildReport(stdout io.Writer, out, how, note string) error {
	wasm, err := os.ReadFile(out)
	if err != nil {
		return err
	}
	info, err := sandbox.Inspect(wasm)
	if err != nil {
		return fmt.Errorf("%s: the build is not a valid wasm module: %w", out, err)
	}
	m, err := info.Manifest()
	if err != nil {
		return fmt.Errorf("%s: %w", out, err)
	}
	if m != nil && m.ABI != abi.Version {
		return fmt.Errorf("%s: the manifest declares mcphost ABI %d; this mcphost speaks ABI %d", out, m.ABI, abi.Version)
	}
	needs := ""
	if m != nil && len(m.Needs.HostFunctions)+len(m.Needs.Hosts)+len(m.Needs.Paths)+len(m.Needs.Config) > 0 {
		needs = "; needs " + describeNeeds(m.Needs) + " (grant them in [plugins." + strings.TrimSuffix(filepath.Base(out), filepath.Ext(out)) + "])"
	}
	fmt.Fprintf(stdout, "built %s (%d bytes, %s; %s%s)\n", out, len(wasm), how, note, needs)
	return nil
}

// describeNeeds says what a manifest asks for, on one line.
func describeNeeds(n abi.Needs) string {
	var parts []string
	for _, p := range []struct {
		key   string
		items []string
	}{{"host_functions", n.HostFunctions}, {"hosts", n.Hosts}, {"paths", n.Paths}, {"config", n.Config}} {
		if len(p.items) > 0 {
			parts = append(parts, p.key+": "+strings.Join(p.items, ", "))
		}
	}
	return strings.Join(parts, "; ")
}

// rustToolchain is a Rust toolchain able to build for WASI.
type rustToolchain struct {
	name   string // debian or path
	target string
	cargo  []string
	env    []string
}

// findRustToolchain picks the toolchain as pdk/rust/build-plugin.sh does:
// Debian's when complete, else the one on PATH with a WASI standard
// library; MCPHOST_RUST=debian or path forces one.
func findRustToolchain() (*rustToolchain, error) {
	want := os.Getenv("MCPHOST_RUST")
	if want != "path" && haveDebianRust() {
		t := &rustToolchain{name: "debian", target: "wasm32-wasi",
			cargo: []string{"/usr/bin/cargo", "--offline",
				"--config", `source.crates-io.replace-with="debian"`,
				"--config", `source.debian.directory="/usr/share/cargo/registry"`},
			env: []string{"RUSTC=/usr/bin/rustc"}}
		if _, err := os.Stat("/usr/bin/rustdoc"); err == nil {
			t.env = append(t.env, "RUSTDOC=/usr/bin/rustdoc")
		}
		return t, nil
	}
	if want != "debian" {
		if target := pathRustTarget(); target != "" {
			return &rustToolchain{name: "path", target: target, cargo: []string{"cargo"}}, nil
		}
	}
	return nil, errors.New("no Rust toolchain for WebAssembly: install Rust with rustup and run 'rustup target add wasm32-wasip1', or on Debian install rustc, cargo, libstd-rust-dev-wasm32 and the serde crates (scripts/setup-rust.sh in the mcphost repository)")
}

func haveDebianRust() bool {
	for _, p := range []string{"/usr/bin/rustc", "/usr/bin/cargo", "/usr/lib/rustlib/wasm32-wasi/lib"} {
		if _, err := os.Stat(p); err != nil {
			return false
		}
	}
	for _, crate := range []string{"serde-1.*", "serde_json-1.*", "serde_derive-1.*"} {
		if m, _ := filepath.Glob(filepath.Join("/usr/share/cargo/registry", crate)); len(m) == 0 {
			return false
		}
	}
	return true
}

// pathRustTarget returns the WASI target the rustc on PATH has a
// standard library for, "" when none.
func pathRustTarget() string {
	if _, err := exec.LookPath("cargo"); err != nil {
		return ""
	}
	out, err := exec.Command("rustc", "--print", "sysroot").Output()
	if err != nil {
		return ""
	}
	sysroot := strings.TrimSpace(string(out))
	for _, t := range []string{"wasm32-wasip1", "wasm32-wasi"} {
		if st, err := os.Stat(filepath.Join(sysroot, "lib", "rustlib", t, "lib")); err == nil && st.IsDir() {
			return t
		}
	}
	return ""
}

// cargoManifest is what build reads of a Cargo.toml.
type cargoManifest struct {
	Package struct {
		Name string `toml:"name"`
	} `toml:"package"`
	Lib struct {
		CrateType []string `toml:"crate-type"`
	} `toml:"lib"`
}

// buildRust builds a Rust plugin crate with cargo for WASI.
func buildRust(ctx context.Context, dir string, f buildFlags, stdout, stderr io.Writer) error {
	crate, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	var cm cargoManifest
	if _, err := toml.DecodeFile(filepath.Join(crate, "Cargo.toml"), &cm); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, "Cargo.toml"), err)
	}
	if cm.Package.Name == "" {
		return fmt.Errorf("%s: no [package] name", filepath.Join(dir, "Cargo.toml"))
	}
	if !slices.Contains(cm.Lib.CrateType, "cdylib") {
		return fmt.Errorf("%s: a plugin is a cdylib: add [lib] crate-type = [\"cdylib\"]", filepath.Join(dir, "Cargo.toml"))
	}
	manifest, _, err := readManifestFile(dir)
	if err != nil {
		return err
	}
	name, err := buildName(manifest, cm.Package.Name)
	if err != nil {
		return err
	}
	out, err := buildOutput(f.out, dir, name, ".wasm")
	if err != nil {
		return err
	}
	tc, err := findRustToolchain()
	if err != nil {
		return err
	}
	if tc.name == "debian" {
		// A lock file a newer cargo wrote (format 4) stops Debian's cargo:
		// resolve again, offline, from Debian's crates (as build-plugin.sh).
		lock := filepath.Join(crate, "Cargo.lock")
		if b, err := os.ReadFile(lock); err == nil && regexp.MustCompile(`(?m)^version = ([4-9]|[1-9][0-9])`).Match(b) {
			fmt.Fprintf(stderr, "removing %s (written by a newer cargo than Debian's)\n", lock)
			_ = os.Remove(lock)
		}
	}
	args := append(slices.Clone(tc.cargo[1:]), "build", "--release", "--target", tc.target, "--message-format=json-render-diagnostics")
	cmd := exec.CommandContext(ctx, tc.cargo[0], args...)
	cmd.Dir = crate
	cmd.Env = append(os.Environ(), tc.env...)
	var jsonOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &jsonOut, stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: cargo build failed (%s toolchain, %s): %w", dir, tc.name, tc.target, err)
	}
	built := cargoArtifact(jsonOut.Bytes(), filepath.Join(crate, "Cargo.toml"))
	if built == "" {
		return fmt.Errorf("%s: cargo built no cdylib .wasm", dir)
	}
	wasm, err := os.ReadFile(built)
	if err != nil {
		return err
	}
	tmp := out + ".tmp"
	if err := os.WriteFile(tmp, wasm, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		os.Remove(tmp)
		return err
	}
	note := "no manifest section: use mcphost_pdk::manifest!"
	if info, err := sandbox.Inspect(wasm); err == nil {
		if _, ok := info.CustomSections[abi.ManifestSection]; ok {
			note = "manifest embedded by the crate"
		}
	}
	return buildReport(stdout, out, fmt.Sprintf("Rust, %s toolchain, %s", tc.name, tc.target), note)
}

// cargoArtifact finds the .wasm file of the cdylib of the package whose
// manifest is manifestPath in cargo's JSON messages.
func cargoArtifact(messages []byte, manifestPath string) string {
	var found string
	sc := bufio.NewScanner(bytes.NewReader(messages))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var m struct {
			Reason       string `json:"reason"`
			ManifestPath string `json:"manifest_path"`
			Target       struct {
				Kind []string `json:"kind"`
			} `json:"target"`
			Filenames []string `json:"filenames"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || m.Reason != "compiler-artifact" || !slices.Contains(m.Target.Kind, "cdylib") {
			continue
		}
		if m.ManifestPath != manifestPath && found != "" {
			continue
		}
		for _, f := range m.Filenames {
			if strings.HasSuffix(f, ".wasm") {
				found = f
			}
		}
	}
	return found
}

// buildJS checks a JavaScript plugin and copies it to -o, if given.
func buildJS(ctx context.Context, path string, f buildFlags, stdout io.Writer) error {
	if f.tinygo || f.scheduler != "" {
		return errors.New("--tinygo and --scheduler build Go plugins; this is a JavaScript plugin")
	}
	name := strings.TrimSuffix(filepath.Base(path), js.Ext)
	if !pluginNamePattern.MatchString(name) {
		return fmt.Errorf("%s: plugin name %q (from the file name) must be letters, digits, '-' and '_'", path, name)
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	manifest, err := js.Manifest(src)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if manifest != nil && manifest.ABI != abi.Version {
		return fmt.Errorf("%s: the manifest declares mcphost ABI %d; this mcphost speaks ABI %d", path, manifest.ABI, abi.Version)
	}
	if err := checkJS(ctx, name, path, src); err != nil {
		return err
	}
	note := "no manifest comment: the plugin declares no needs"
	if manifest != nil {
		note = "manifest comment read"
		if n := describeNeeds(manifest.Needs); n != "" {
			note += "; needs " + n + " (grant them in [plugins." + name + "])"
		}
	}
	if f.out == "" {
		fmt.Fprintf(stdout, "ok %s (JavaScript, %d bytes; the source runs on the embedded engine; %s): copy it into the plugins folder, or use -o\n", path, len(src), note)
		return nil
	}
	out, err := buildOutput(f.out, filepath.Dir(path), name, js.Ext)
	if err != nil {
		return err
	}
	if abs, err := filepath.Abs(path); err == nil && abs == out {
		fmt.Fprintf(stdout, "ok %s (JavaScript, %d bytes; %s)\n", path, len(src), note)
		return nil
	}
	if err := os.WriteFile(out+".tmp", src, 0o644); err != nil {
		return err
	}
	if err := os.Rename(out+".tmp", out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "copied %s to %s (JavaScript, %d bytes, checked on the embedded engine; %s)\n", path, out, len(src), note)
	return nil
}

// checkJS runs a JavaScript plugin's source once on the embedded engine,
// with no grants, so that a syntax error or an exception at its top level
// is reported as serve would report it when loading.
func checkJS(ctx context.Context, name, path string, src []byte) error {
	cfg, err := js.Config(filepath.Base(path), src, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	engine, err := sandbox.NewEngine(sandbox.EngineOptions{CacheDir: inspectCacheDir()})
	if err != nil {
		return err
	}
	defer engine.Close()
	limits := config.Default().Plugin(name).Limits.Sandbox()
	limits.MaxInstances = 1
	rt, err := engine.Load(ctx, name, js.Engine(), sandbox.Options{
		Limits:        limits,
		Grants:        sandbox.Grants{Config: cfg},
		HostFunctions: pluginhost.DeniedHostFunctions(name),
	})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer rt.Close(ctx)
	if err := js.Check(ctx, rt); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
