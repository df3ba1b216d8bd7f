// Package metrics measures the architecture of a Go source tree from its
// parsed files alone (go/parser and go/ast, no type checking and no build
// system), so that the same measure runs on any checkout of the
// repository, old or new: package sizes, era tests, methods per type,
// references between a package's files that run against a layering of
// them, and exported API. Issue 24 gives its before and after numbers;
// cmd/archmetrics prints them.
package metrics

import (
	"bytes"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Package is one directory of .go files under the root.
type Package struct {
	Dir   string  // slash-separated, relative to the root; "." for the root itself
	Name  string  // the package clause of its non-test files; "" when it has only tests
	Files []*File // sorted by name
}

// File is one .go file of a package. Only non-test files are parsed.
type File struct {
	Name  string    // base name
	Test  bool      // a _test.go file
	Lines int       // lines, as wc -l counts them plus an unterminated last one
	Linux bool      // builds for linux/amd64 (its name and //go:build line)
	AST   *ast.File // nil for a test file
}

// linux is the build context that picks the files of a package for the
// file-reference graph, in which each package-level name must be declared
// once: linux/amd64, whatever machine runs the tool.
var linux = func() build.Context {
	c := build.Default
	c.GOOS, c.GOARCH = "linux", "amd64"
	return c
}()

// Load parses every package directory under root, skipping .git, testdata,
// vendor, node_modules, build and directories whose name starts with "."
// or "_". Nested modules (a directory with its own go.mod) are included.
func Load(root string) ([]*Package, error) {
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (name == "testdata" || name == "vendor" || name == "node_modules" || name == "build" ||
			strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		dirs = append(dirs, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return nil, err
	}
	var pkgs []*Package
	for _, dir := range dirs {
		pkg, err := LoadDir(root, dir)
		if err != nil {
			return nil, err
		}
		if len(pkg.Files) > 0 {
			pkgs = append(pkgs, pkg)
		}
	}
	return pkgs, nil
}

// LoadDir parses the package in dir (slash-separated, relative to root).
// A directory with no .go file gives a Package with no files.
func LoadDir(root, dir string) (*Package, error) {
	abs := filepath.Join(root, filepath.FromSlash(dir))
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil, err
	}
	pkg := &Package{Dir: dir}
	fset := token.NewFileSet()
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		src, err := os.ReadFile(filepath.Join(abs, e.Name()))
		if err != nil {
			return nil, err
		}
		f := &File{Name: e.Name(), Test: strings.HasSuffix(e.Name(), "_test.go"), Lines: lines(src)}
		if f.Linux, err = linux.MatchFile(abs, e.Name()); err != nil {
			return nil, err
		}
		if !f.Test {
			// Object resolution stays on: the file-reference graph reads
			// which identifiers the file's own scopes leave unresolved.
			if f.AST, err = parser.ParseFile(fset, filepath.Join(abs, e.Name()), src, 0); err != nil {
				return nil, err
			}
			pkg.Name = f.AST.Name.Name
		}
		pkg.Files = append(pkg.Files, f)
	}
	sort.Slice(pkg.Files, func(i, j int) bool { return pkg.Files[i].Name < pkg.Files[j].Name })
	return pkg, nil
}

// lines counts src's lines: its newlines, plus one for a last line with none.
func lines(src []byte) int {
	n := bytes.Count(src, []byte("\n"))
	if len(src) > 0 && src[len(src)-1] != '\n' {
		n++
	}
	return n
}

// sources returns the package's parsed non-test files.
func (p *Package) sources() []*File {
	var src []*File
	for _, f := range p.Files {
		if !f.Test {
			src = append(src, f)
		}
	}
	return src
}

// Public reports whether p is part of the repository's public API: a
// package other than main with non-test files, none of whose path
// elements is "internal".
func (p *Package) Public() bool {
	if p.Name == "" || p.Name == "main" {
		return false
	}
	for _, elem := range strings.Split(p.Dir, "/") {
		if elem == "internal" {
			return false
		}
	}
	return true
}
