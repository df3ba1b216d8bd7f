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
	"strings"
	"text/template"

	"github.com/spf13/cobra"
)

// templateFS holds the scaffolds of mcphost new, one folder per language;
// every file is a text/template (.tmpl, so that Go and cargo leave them
// alone).
//
//go:embed templates
var templateFS embed.FS

// modulePath is the module path of mcphost, whose PDKs scaffolds use.
const modulePath = "github.com/mcphost/mcphost"

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
	"go": {
		{"go/main.go.tmpl", "main.go", 0o644},
		{"go/main_test.go.tmpl", "main_test.go", 0o644},
		{"go/go.mod.tmpl", "go.mod", 0o644},
		{"go/manifest.json.tmpl", "manifest.json", 0o644},
		{"mcphost.toml.tmpl", "mcphost.toml", 0o644},
		{"go/README.md.tmpl", "README.md", 0o644},
		{"go/gitignore.tmpl", ".gitignore", 0o644},
	},
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

// scaffoldData is what the templates see.
type scaffoldData struct {
	Name string // the plugin's name
	File string // the plugin file serve loads: NAME.wasm or NAME.js
	URI  string // the URI of the scaffold's resource

	Checkout string // the mcphost checkout used, "" when none

	GoModule  string
	GoVersion string
	GoRequire string // the version of mcphost go.mod requires, "" for none
	GoReplace string // where the replace directive points, "" for none

	RustPath    string // the path of the Rust PDK, "" for a version
	RustVersion string
	BuildScript string // pdk/rust/build-plugin.sh of the checkout, "" when none
}

type newFlags struct {
	lang     string
	dir      string
	checkout string
}

func newNewCommand(version string) *cobra.Command {
	var f newFlags
	cmd := &cobra.Command{
		Use:   "new NAME [--lang go|rust|js] [--dir DIR]",
		Short: "Create a new plugin from a template: Go, Rust or JavaScript",
		Long: `New creates the source of a plugin named NAME in DIR (default ./NAME): a
tool (greet), a prompt (welcome) and a resource, the manifest that declares
what it needs, an mcphost.toml that grants it, a README and a test:

  go    main.go using the Go PDK, manifest.json, go.mod, main_test.go (the
        logic natively, then the plugin built and run with mcphost).
  rust  Cargo.toml depending on mcphost-pdk, src/lib.rs with native tests
        (cargo test, through the PDK's testing module), manifest.json.
  js    NAME.js with its manifest comment, and test.sh, which runs it with
        mcphost call, get-prompt and read.

When mcphost new runs inside a checkout of mcphost (or --checkout names one),
the scaffold uses that checkout's PDK: go.mod requires ` + modulePath + `
and replaces it with the checkout, Cargo.toml depends on its pdk/rust by path.
Otherwise go.mod is left for 'go get ` + modulePath + `@latest' (unless
this mcphost has a release version, which it then requires) and Cargo.toml
asks for mcphost-pdk ` + rustPDKVersion + `.

Then: mcphost build DIR, and mcphost call DIR/NAME.wasm greet --arg name=World.`,
		Example: `  mcphost new hello                  # Go, in ./hello
  mcphost new textual --lang rust
  mcphost new greeter --lang js --dir plugins-src/greeter`,
		Args: cobra.ExactArgs(1),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return newPlugin(args[0], f, version, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&f.lang, "lang", "go", "language: go, rust or js")
	cmd.Flags().StringVar(&f.dir, "dir", "", "folder to create (default ./NAME)")
	cmd.Flags().StringVar(&f.checkout, "checkout", "", "an mcphost source checkout whose PDK the scaffold uses (default: the checkout the current folder is in, if any)")
	_ = cmd.RegisterFlagCompletionFunc("lang", cobra.FixedCompletions([]string{"go", "rust", "js"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("dir", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return nil, cobra.ShellCompDirectiveFilterDirs
	})
	_ = cmd.RegisterFlagCompletionFunc("checkout", func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return nil, cobra.ShellCompDirectiveFilterDirs
	})
	return cmd
}

// rustNamePattern is the rule for Rust package names on top of the
// plugin name rule: no leading digit.
var rustNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

func newPlugin(name string, f newFlags, version string, stdout io.Writer) error {
	files, ok := scaffolds[f.lang]
	if !ok {
		return fmt.Errorf("--lang %q: want go, rust or js", f.lang)
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
	checkout := f.checkout
	if checkout == "" {
		if wd, err := os.Getwd(); err == nil {
			checkout = findCheckout(wd)
		}
	} else if checkout, err = filepath.Abs(checkout); err != nil {
		return err
	} else if !isCheckout(checkout) {
		return fmt.Errorf("--checkout %s: not a checkout of mcphost (no go.mod of module %s with pdk/ beside it)", f.checkout, modulePath)
	}
	data, err := fillScaffoldData(name, f.lang, absDir, checkout, version)
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
	if f.lang == "go" && data.GoRequire == "" {
		fmt.Fprintf(stdout, "  (cd %s && go get %s@latest)\n", dir, modulePath)
	}
	switch f.lang {
	case "js":
		fmt.Fprintf(stdout, "  mcphost build %s\n", filepath.Join(dir, data.File))
		fmt.Fprintf(stdout, "  mcphost call %s greet --arg name=World --config %s\n", filepath.Join(dir, data.File), filepath.Join(dir, "mcphost.toml"))
		fmt.Fprintf(stdout, "  sh %s\n", filepath.Join(dir, "test.sh"))
	default:
		fmt.Fprintf(stdout, "  mcphost build %s\n", dir)
		fmt.Fprintf(stdout, "  mcphost call %s greet --arg name=World --config %s\n", filepath.Join(dir, data.File), filepath.Join(dir, "mcphost.toml"))
		if f.lang == "go" {
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
	case "rust":
		return "Rust"
	}
	return "JavaScript"
}

// fillScaffoldData fills in the templates' data.
func fillScaffoldData(name, lang, dir, checkout, version string) (*scaffoldData, error) {
	d := &scaffoldData{
		Name: name, File: name + ".wasm", URI: "docs://" + name + "/about",
		Checkout: checkout, GoModule: name, GoVersion: "1.24", RustVersion: rustPDKVersion,
	}
	if lang == "js" {
		d.File = name + ".js"
	}
	if checkout == "" {
		if isRelease(version) {
			d.GoRequire = version
		}
		return d, nil
	}
	goVersion, err := readGoVersion(filepath.Join(checkout, "go.mod"))
	if err != nil {
		return nil, err
	}
	d.GoVersion = goVersion
	d.GoRequire = "v0.0.0-00010101000000-000000000000"
	d.GoReplace = pathFrom(dir, checkout, checkout)
	d.RustPath = filepath.ToSlash(pathFrom(dir, checkout, filepath.Join(checkout, "pdk", "rust")))
	d.BuildScript = filepath.Join(checkout, "pdk", "rust", "build-plugin.sh")
	return d, nil
}

// pathFrom returns target relative to dir when dir is inside the
// checkout (so that the checkout can move with the scaffold), else
// absolute.
func pathFrom(dir, checkout, target string) string {
	if strings.HasPrefix(dir, checkout+string(filepath.Separator)) {
		if rel, err := filepath.Rel(dir, target); err == nil {
			return rel
		}
	}
	return target
}

var releasePattern = regexp.MustCompile(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`)

// isRelease reports whether v is a module version (a release tag).
func isRelease(v string) bool { return releasePattern.MatchString(v) }

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

// isCheckout reports whether dir is the root of an mcphost checkout.
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
			st, err := os.Stat(filepath.Join(dir, "pdk", "go"))
			return err == nil && st.IsDir()
		}
	}
	return false
}

// readGoVersion reads the go directive of a go.mod: a module requiring
// mcphost needs at least mcphost's.
func readGoVersion(gomod string) (string, error) {
	b, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "go "); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", errors.New(gomod + ": no go directive")
}
