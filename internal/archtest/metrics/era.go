package metrics

import (
	"go/ast"
	"go/token"
)

// EraTests counts, in a package's non-test files, the places that branch
// on the protocol era through a value rather than a type.
type EraTests struct {
	Dir string `json:"dir"`
	// EraNil counts the comparisons of an era with nil: binary == or !=
	// expressions with one side nil and the other an identifier era or a
	// selector X.era.
	EraNil int `json:"era_nil"`
	// Modern counts the tests of a modern field: a selector X.modern (not
	// called) that is an if, for or tagless-switch case condition, the
	// operand of !, or an operand of ==, !=, && or ||.
	Modern int `json:"modern"`
}

// EraTestsOf counts p's era tests.
func EraTestsOf(p *Package) EraTests {
	e := EraTests{Dir: p.Dir}
	for _, f := range p.sources() {
		tests := map[*ast.SelectorExpr]bool{} // each modern test once, whatever holds it
		test := func(x ast.Expr) {
			if s, ok := ast.Unparen(x).(*ast.SelectorExpr); ok && s.Sel.Name == "modern" {
				tests[s] = true
			}
		}
		ast.Inspect(f.AST, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				switch n.Op {
				case token.EQL, token.NEQ:
					if isNil(n.X) && isEra(n.Y) || isNil(n.Y) && isEra(n.X) {
						e.EraNil++
					}
					test(n.X)
					test(n.Y)
				case token.LAND, token.LOR:
					test(n.X)
					test(n.Y)
				}
			case *ast.UnaryExpr:
				if n.Op == token.NOT {
					test(n.X)
				}
			case *ast.IfStmt:
				test(n.Cond)
			case *ast.ForStmt:
				test(n.Cond)
			case *ast.SwitchStmt:
				if n.Tag == nil {
					for _, c := range n.Body.List {
						for _, x := range c.(*ast.CaseClause).List {
							test(x)
						}
					}
				}
			}
			return true
		})
		e.Modern += len(tests)
	}
	return e
}

// isNil reports whether x is the identifier nil.
func isNil(x ast.Expr) bool {
	id, ok := ast.Unparen(x).(*ast.Ident)
	return ok && id.Name == "nil"
}

// isEra reports whether x is the identifier era or a selector X.era.
func isEra(x ast.Expr) bool {
	switch x := ast.Unparen(x).(type) {
	case *ast.Ident:
		return x.Name == "era"
	case *ast.SelectorExpr:
		return x.Sel.Name == "era"
	}
	return false
}
