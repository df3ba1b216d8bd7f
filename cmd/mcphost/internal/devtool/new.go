package devtool

import (
	"bufio"
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"text/template"

	"github.com/mcphost/mcphost/internal/tinygo"

	"github.com/spf13/cobra"
)

// templateFS holds the scaffolds of mcphost new, one folder per language;
// every file is a text/template (.tmpl, so that Go and cargo leave them
// alone).
//
//go:embed templates
var templateFS embed.FS

// modulePath is the module path of the mcphost server, whose checkout
// holds the PDKs.
const modulePath = "github.com/mcphost/mcphost"

// goABIModule is the module of the ABI types a Go scaffold requires
// beside the Go PDK (goPDKImport), which requires it too.
const goABIModule = modulePath + "/abi"

// goPDKVersion is the version of the Go PDK and ABI modules (released
// together) a Go scaffold asks for when it does not use a checkout.
const goPDKVersion = "v0.1.0"

// rustPDKVersion is the version of mcphost-pdk a Rust scaffold made
// outside a checkout asks for.
const rustPDKVersion = "0.1"

// scaffoldFile is one file of a scaffold: its template and where it goes.
type scaffoldFile struct {
	tmpl, path string
	mode       os.FileMode
}

// scaffolds are the files of each language's scaffold; NAME in a path is
// the plugin's name.
var scaffolds = map[string][]scaffoldFile{
	"go": goScaffold,
	// TinyGo's is Go's, whose templates add go.mod's tinygoDirective.
	"tinygo": goScaffold,
	"rust": {
		{"rust/Cargo.toml.tmpl", "Cargo.toml", 0o644},
		{"rust/lib.rs.tmpl", "src/lib.rs", 0o644},
		{"rust/manifest.json.tmpl", "manifest.json", 0o644},
		{"mcphost.toml.tmpl", "mcphost.toml", 0o644},
		{"rust/README.md.tmpl", "README.md", 0o644},
		{"rust/gitignore.tmpl", ".gitignore", 0o644},
	},
	"js": {
		{"js/plugin.js.tmpl", "NAME.js", 0o644},
		{"js/test.sh.tmpl", "test.sh", 0o755},
		{"mcphost.toml.tmpl", "mcphost.toml", 0o644},
		{"js/README.md.tmpl", "README.md", 0o644},
	},
}

// goScaffold is the scaffold of a Go plugin, built with either toolchain.
var goScaffold = []scaffoldFile{
	{"go/main.go.tmpl", "main.go", 0o644},
	{"go/main_test.go.tmpl", "main_test.go", 0o644},
	{"go/go.mod.tmpl", "go.mod", 0o644},
	{"go/manifest.json.tmpl", "manifest.json", 0o644},
	{"mcphost.toml.tmpl", "mcphost.toml", 0o644},
	{"go/README.md.tmpl", "README.md", 0o644},
	{"go/gitignore.tmpl", ".gitignore", 0o644},
}

// scaffoldData is what the templates see.
type scaffoldData struct {
	Name string // the plugin's name
	File string // the plugin file serve loads: NAME.wasm or NAME.js
	URI  string // the URI of the scaffold's resource

	Checkout string // the mcphost checkout used, "" when none

	TinyGo          bool   // a Go scaffold built with TinyGo
	TinyGoDirective string // tinygoDirective
	TinyGoVersion   string // tinygo.Version

	GoModule     string
	GoVersion    string
	GoPDKVersion string // the version of the Go PDK go.mod requires
	GoABIVersion string // the version of the ABI module go.mod requires
	GoPDKDir     string // where the PDK's replace directive points, "" for none
	GoABIDir     string // where the ABI's replace directive points, "" for none

	RustPath    string // the path of the Rust PDK, "" for a version
	RustVersion string
	BuildScript string // pdk/rust/build-plugin.sh of the checkout, "" when none
}

type newFlags struct {
	lang     string
	dir      string
	checkout string
	pdk      string // "checkout", "published" or "" (a checkout if there is one)
}

func newNewCommand() *cobra.Command {
	var f newFlags
	cmd := &cobra.Command{
		Use:   "new NAME [--lang go|tinygo|rust|js] [--dir DIR]",
		Short: "Create a new plugin from a template: Go, TinyGo, Rust or JavaScript",
		Long: `New creates the source of a plugin named NAME in DIR (default ./NAME): a
tool (greet), a prompt (welcome) and a resource, the manifest that declares
what it needs, an mcphost.toml that grants it, a README and a test:

  go      main.go using the Go PDK, manifest.json, go.mod, main_test.go
          (the logic natively, then the plugin built and run with mcphost).
  tinygo  the same, whose go.mod says ` + tinygoDirective + `: mcphost build
          builds it with TinyGo (scripts/setup-tinygo.sh installs it).
  rust    Cargo.toml depending on mcphost-pdk, src/lib.rs with native tests
          (cargo test, through the PDK's testing module), manifest.json.
  js      NAME.js with its manifest comment, and test.sh, which runs it with
          mcphost call, get-prompt and read.

The scaffold uses the PDK of an mcphost checkout when there is one: the one
--checkout names, else the checkout this mcphost was built from, else the one
the current folder is in. go.mod then requires the Go PDK
(` + goPDKImport + `) and the ABI types (` + goABIModule + `), never the
mcphost server, and replaces them with the checkout's pdk/go and abi;
Cargo.toml depends on its pdk/rust by path. With --pdk published, or with no
checkout, the scaffold asks for the published PDKs: go.mod requires them at
` + goPDKVersion + ` ('go mod tidy' fetches them), Cargo.toml asks for
mcphost-pdk ` + rustPDKVersion + `.

Then: mcphost build DIR, and mcphost call DIR/NAME.wasm greet --arg name=World.`,
		Example: `  mcphost new hello                  # Go, in ./hello
  mcphost new textual --lang rust
  mcphost new greeter --lang js --dir plugins-src/greeter
  mcphost new hello --pdk published  # the PDK from the Go module proxy`,
		Args: cobra.ExactArgs(1),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return newPlugin(args[0], f, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&f.lang, "lang", "go", "language: go, tinygo (Go built with TinyGo), rust or js")
	cmd.Flags().StringVar(&f.dir, "dir", "", "folder to create (default ./NAME)")
	cmd.Flags().StringVar(&f.checkout, "checkout", "", "an mcphost source checkout whose PDK the scaffold uses (default: the checkout this mcphost was built from, else the one the current folder is in, if any)")
	cmd.Flags().StringVar(&f.pdk, "pdk", "", "where the PDK comes from: checkout (an mcphost checkout, which must exist) or published (the Go module proxy, crates.io) (default: a checkout if there is one)")
	_ = cmd.RegisterFlagCompletionFunc("lang", cobra.FixedCompletions([]string{"go", "tinygo", "rust", "js"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("dir", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return nil, cobra.ShellCompDirectiveFilterDirs
	})
	_ = cmd.RegisterFlagCompletionFunc("pdk", cobra.FixedCompletions([]string{"checkout", "published"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("checkout", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return nil, cobra.ShellCompDirectiveFilterDirs
	})
	return cmd
}

// rustNamePattern is the rule for Rust package names on top of the
// plugin name rule: no leading digit.
var rustNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

func newPlugin(name string, f newFlags, stdout io.Writer) error {
	files, ok := scaffolds[f.lang]
	if !ok {
		return fmt.Errorf("--lang %q: want go, tinygo, rust or js", f.lang)
	}
	if !pluginNamePattern.MatchString(name) {
		return fmt.Errorf("plugin name %q: use letters, digits, '-' and '_' (it becomes the plugin's file name)", name)
	}
	if f.lang == "rust" && !rustNamePattern.MatchString(name) {
		return fmt.Errorf("plugin name %q: a Rust package name cannot start with a digit", name)
	}
	dir := f.dir
	if dir == "" {
		dir = name
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if entries, err := os.ReadDir(absDir); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s exists and is not empty", dir)
	}
	checkout, err := pickCheckout(f)
	if err != nil {
		return err
	}
	data, err := fillScaffoldData(name, f.lang, absDir, checkout)
	if err != nil {
		return err
	}
	var written []string
	for _, sf := range files {
		tmpl, err := template.ParseFS(templateFS, "templates/"+sf.tmpl)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		if err := tmpl.Execute(&b, data); err != nil {
			return fmt.Errorf("%s: %w", sf.tmpl, err)
		}
		rel := strings.ReplaceAll(sf.path, "NAME", name)
		path := filepath.Join(absDir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, b.Bytes(), sf.mode); err != nil {
			return err
		}
		written = append(written, rel)
	}
	fmt.Fprintf(stdout, "created %s plugin %s in %s: %s\n", langName(f.lang), name, dir, strings.Join(written, ", "))
	if checkout != "" {
		fmt.Fprintf(stdout, "using the PDK of the mcphost checkout at %s\n", checkout)
	}
	fmt.Fprintln(stdout, "\nNext:")
	goLike := f.lang == "go" || f.lang == "tinygo"
	if goLike && checkout == "" {
		fmt.Fprintf(stdout, "  (cd %s && go mod tidy)\n", dir)
	}
	switch f.lang {
	case "js":
		fmt.Fprintf(stdout, "  mcphost build %s\n", filepath.Join(dir, data.File))
		fmt.Fprintf(stdout, "  mcphost call %s greet --arg name=World --config %s\n", filepath.Join(dir, data.File), filepath.Join(dir, "mcphost.toml"))
		fmt.Fprintf(stdout, "  sh %s\n", filepath.Join(dir, "test.sh"))
	default:
		fmt.Fprintf(stdout, "  mcphost build %s\n", dir)
		fmt.Fprintf(stdout, "  mcphost call %s greet --arg name=World --config %s\n", filepath.Join(dir, data.File), filepath.Join(dir, "mcphost.toml"))
		if goLike {
			fmt.Fprintf(stdout, "  (cd %s && go test ./...)\n", dir)
		} else {
			fmt.Fprintf(stdout, "  (cd %s && cargo test)\n", dir)
		}
	}
	return nil
}

func langName(lang string) string {
	switch lang {
	case "go":
		return "Go"
	case "tinygo":
		return "TinyGo"
	case "rust":
		return "Rust"
	}
	return "JavaScript"
}

// pickCheckout returns the mcphost checkout whose PDK the scaffold
// uses, "" for the published PDK.
func pickCheckout(f newFlags) (string, error) {
	switch f.pdk {
	case "published":
		if f.checkout != "" {
			return "", errors.New("--pdk published uses no checkout: leave --checkout out")
		}
		return "", nil
	case "", "checkout":
	default:
		return "", fmt.Errorf("--pdk %q: want checkout or published", f.pdk)
	}
	if f.checkout != "" {
		checkout, err := filepath.Abs(f.checkout)
		if err != nil {
			return "", err
		}
		if !isCheckout(checkout) {
			return "", fmt.Errorf("--checkout %s: not a checkout of mcphost (no go.mod of module %s with pdk/go and abi, modules too, beside it)", f.checkout, modulePath)
		}
		return checkout, nil
	}
	checkout := ownCheckout()
	if checkout == "" {
		if wd, err := os.Getwd(); err == nil {
			checkout = findCheckout(wd)
		}
	}
	if checkout == "" && f.pdk == "checkout" {
		return "", errors.New("--pdk checkout: this mcphost was not built from a checkout of mcphost, and the current folder is in none: give one with --checkout")
	}
	return checkout, nil
}

// ownCheckout returns the mcphost checkout this binary was built from,
// "" when unknown (built with -trimpath, or from the module cache, which
// holds no nested modules) or gone: it walks up from the source path the
// compiler recorded for this file.
func ownCheckout() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return ""
	}
	return findCheckout(filepath.Dir(file))
}

// fillScaffoldData fills in the templates' data.
func fillScaffoldData(name, lang, dir, checkout string) (*scaffoldData, error) {
	d := &scaffoldData{
		Name: name, File: name + ".wasm", URI: "docs://" + name + "/about",
		Checkout: checkout, GoModule: name, GoVersion: "1.24",
		TinyGo: lang == "tinygo", TinyGoDirective: tinygoDirective, TinyGoVersion: tinygo.Version,
		GoPDKVersion: goPDKVersion, GoABIVersion: goPDKVersion, RustVersion: rustPDKVersion,
	}
	if lang == "js" {
		d.File = name + ".js"
	}
	if checkout == "" {
		return d, nil
	}
	// The checkout's PDK sets the go directive and the ABI version, so that
	// go.mod is complete as written.
	pdkDir := filepath.Join(checkout, "pdk", "go")
	pdkMod := filepath.Join(pdkDir, "go.mod")
	var err error
	if d.GoVersion, err = goModField(pdkMod, "go"); err != nil {
		return nil, err
	}
	if d.GoABIVersion, err = goModField(pdkMod, goABIModule); err != nil {
		return nil, err
	}
	d.GoPDKDir = pathFrom(dir, checkout, pdkDir)
	d.GoABIDir = pathFrom(dir, checkout, filepath.Join(checkout, "abi"))
	d.RustPath = filepath.ToSlash(pathFrom(dir, checkout, filepath.Join(checkout, "pdk", "rust")))
	d.BuildScript = filepath.Join(checkout, "pdk", "rust", "build-plugin.sh")
	return d, nil
}

// pathFrom returns target relative to dir, starting with ./ or ../ (as a
// go.mod replace needs), when dir is inside the checkout (so that the
// checkout can move with the scaffold), else absolute.
func pathFrom(dir, checkout, target string) string {
	if strings.HasPrefix(dir, checkout+string(filepath.Separator)) {
		if rel, err := filepath.Rel(dir, target); err == nil {
			if !strings.HasPrefix(rel, "..") {
				rel = "." + string(filepath.Separator) + rel
			}
			return rel
		}
	}
	return target
}

// findCheckout returns the mcphost checkout dir is in, "" when none.
func findCheckout(dir string) string {
	for {
		if isCheckout(dir) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// isCheckout reports whether dir is the root of an mcphost checkout
// whose Go PDK and ABI types are modules of their own.
func isCheckout(dir string) bool {
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); strings.HasPrefix(line, "module ") {
			if strings.TrimSpace(strings.TrimPrefix(line, "module ")) != modulePath {
				return false
			}
			for _, sub := range []string{"pdk/go/go.mod", "abi/go.mod"} {
				if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(sub))); err != nil {
					return false
				}
			}
			return true
		}
	}
	return false
}

// goModField reads a go.mod: the version of its go directive when key is
// "go", else the version it requires of module key.
func goModField(gomod, key string) (string, error) {
	b, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(fields) >= 2 && fields[0] == key && fields[1] != "=>" {
			return fields[1], nil
		}
	}
	return "", fmt.Errorf("%s: no %s line", gomod, key)
}
