package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoExportedAPINamesAnInternalType checks that no exported identifier
// of a package outside internal/ mentions a type of an internal/ package in
// its signature, its type or its exported fields: code outside this module
// could call it but never name what it takes or returns.
func TestNoExportedAPINamesAnInternalType(t *testing.T) {
	rootDir := root(t)
	err := filepath.WalkDir(rootDir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(rootDir, path)
		if d.IsDir() {
			switch {
			case d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "testdata" || d.Name() == "build",
				d.Name() == "internal", rel == "cmd", rel == "plugins":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, name := range internalTypesInExportedAPI(f) {
			t.Errorf("%s: exported %s", rel, name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// internalTypesInExportedAPI returns, for each exported declaration of f
// that mentions a type of an internal/ package, its name and that type.
func internalTypesInExportedAPI(f *ast.File) []string {
	internal := map[string]string{} // import name → path
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if !strings.Contains(path, "/internal/") {
			continue
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		internal[name] = path
	}
	if len(internal) == 0 {
		return nil
	}
	var found []string
	mentions := func(what string, n ast.Node) {
		if n == nil {
			return
		}
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Field: // an unexported field or method is not API
				if len(n.Names) > 0 && !n.Names[0].IsExported() {
					return false
				}
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && internal[x.Name] != "" {
					found = append(found, what+" mentions "+internal[x.Name]+"."+n.Sel.Name)
				}
			}
			return true
		})
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || d.Recv != nil && !exportedReceiver(d.Recv) {
				continue
			}
			mentions(d.Name.Name, d.Type)
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						mentions(s.Name.Name, s.Type)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							mentions(n.Name, s.Type)
						}
					}
				}
			}
		}
	}
	return found
}

// exportedReceiver reports whether a method's receiver type is exported.
func exportedReceiver(recv *ast.FieldList) bool {
	t := recv.List[0].Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	if idx, ok := t.(*ast.IndexExpr); ok {
		t = idx.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}
