package metrics

import (
	"go/ast"
	"sort"
)

// Methods counts the methods declared on one named type of a package.
type Methods struct {
	Type    string `json:"type"`
	Methods int    `json:"methods"` // method declarations, value and pointer receivers alike
	Files   int    `json:"files"`   // files that declare at least one of them
}

// MethodsOf counts the methods of every type of p that has any, most
// methods first (then by name), over its non-test files.
func MethodsOf(p *Package) []Methods {
	count := map[string]int{}
	files := map[string]map[string]bool{}
	for _, f := range p.sources() {
		for _, d := range f.AST.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil {
				continue
			}
			t := receiverName(fn.Recv)
			count[t]++
			if files[t] == nil {
				files[t] = map[string]bool{}
			}
			files[t][f.Name] = true
		}
	}
	var ms []Methods
	for t, n := range count {
		ms = append(ms, Methods{Type: t, Methods: n, Files: len(files[t])})
	}
	sort.Slice(ms, func(i, j int) bool {
		if ms[i].Methods != ms[j].Methods {
			return ms[i].Methods > ms[j].Methods
		}
		return ms[i].Type < ms[j].Type
	})
	return ms
}

// receiverName is the name of a method's receiver type, without its
// pointer or type parameters.
func receiverName(recv *ast.FieldList) string {
	if id, ok := baseType(recv.List[0].Type).(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// baseType strips a type expression of its parentheses, its pointer and
// its type arguments: what is left names the type.
func baseType(t ast.Expr) ast.Expr {
	t = ast.Unparen(t)
	if star, ok := t.(*ast.StarExpr); ok {
		t = ast.Unparen(star.X)
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		return x.X
	case *ast.IndexListExpr:
		return x.X
	}
	return t
}
