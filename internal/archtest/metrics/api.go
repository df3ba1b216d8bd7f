package metrics

import (
	"go/ast"
	"go/token"
	"go/types"
	"sort"
	"strings"
)

// API lists p's exported API, one identifier a line, sorted by qualified
// name: its exported funcs, types, vars and consts; the exported methods
// and the exported fields (with their tags) of its exported types; the
// methods and embedded types of its exported interfaces. Types are
// written as in the source (types.ExprString, so without type checking);
// a const or var shows the type it is declared with, if any, and never
// its value. Every non-test file counts, whatever its build constraint; a
// line that several files declare alike is listed once.
func API(p *Package) []string {
	type entry struct{ key, line string }
	var entries []entry
	add := func(key, line string) { entries = append(entries, entry{key, line}) }
	for _, f := range p.sources() {
		for _, decl := range f.AST.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv == nil {
					add(d.Name.Name, "func "+d.Name.Name+typeParams(d.Type.TypeParams)+signature(d.Type))
					continue
				}
				if recv := receiverName(d.Recv); ast.IsExported(recv) {
					add(recv+"."+d.Name.Name, "func ("+types.ExprString(d.Recv.List[0].Type)+") "+d.Name.Name+signature(d.Type))
				}
			case *ast.GenDecl:
				var last ast.Expr // a const spec without type or value repeats the one before
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							typeAPI(s, add)
						}
					case *ast.ValueSpec:
						if s.Type != nil || s.Values != nil {
							last = s.Type
						}
						typ := s.Type
						if d.Tok == token.CONST && s.Values == nil {
							typ = last
						}
						for _, n := range s.Names {
							if n.IsExported() {
								add(n.Name, strings.TrimSpace(d.Tok.String()+" "+n.Name+" "+exprString(typ)))
							}
						}
					}
				}
			}
		}
	}
	sort.Slice(entries, func(i, j int) bool {
		if entries[i].key != entries[j].key {
			return entries[i].key < entries[j].key
		}
		return entries[i].line < entries[j].line
	})
	var lines []string
	for i, e := range entries {
		if i == 0 || e != entries[i-1] {
			lines = append(lines, e.line)
		}
	}
	return lines
}

// typeAPI adds the lines of one exported type declaration.
func typeAPI(s *ast.TypeSpec, add func(key, line string)) {
	name := s.Name.Name
	head := "type " + name + typeParams(s.TypeParams)
	switch t := s.Type.(type) {
	case *ast.StructType:
		add(name, head+" struct")
		for _, f := range t.Fields.List {
			tag := ""
			if f.Tag != nil {
				tag = " " + f.Tag.Value
			}
			if len(f.Names) == 0 {
				if embedded := embeddedName(f.Type); ast.IsExported(embedded) {
					add(name+"."+embedded, "field "+name+"."+embedded+" embedded "+types.ExprString(f.Type)+tag)
				}
			}
			for _, n := range f.Names {
				if n.IsExported() {
					add(name+"."+n.Name, "field "+name+"."+n.Name+" "+types.ExprString(f.Type)+tag)
				}
			}
		}
	case *ast.InterfaceType:
		add(name, head+" interface")
		for _, f := range t.Methods.List {
			if len(f.Names) == 0 {
				add(name+".", "embed "+name+" "+types.ExprString(f.Type))
			}
			for _, n := range f.Names {
				if n.IsExported() {
					add(name+"."+n.Name, "method "+name+"."+n.Name+signature(f.Type.(*ast.FuncType)))
				}
			}
		}
	default:
		if s.Assign.IsValid() {
			head += " ="
		}
		add(name, head+" "+types.ExprString(s.Type))
	}
}

// embeddedName is the field name of an embedded type: its type name.
func embeddedName(t ast.Expr) string {
	switch x := baseType(t).(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return x.Sel.Name
	}
	return ""
}

// signature writes a func type without its "func" keyword.
func signature(t *ast.FuncType) string {
	return strings.TrimPrefix(types.ExprString(&ast.FuncType{Params: t.Params, Results: t.Results}), "func")
}

// typeParams writes a type parameter list, or "" when there is none.
func typeParams(list *ast.FieldList) string {
	if list == nil || len(list.List) == 0 {
		return ""
	}
	var params []string
	for _, f := range list.List {
		var names []string
		for _, n := range f.Names {
			names = append(names, n.Name)
		}
		params = append(params, strings.Join(names, ", ")+" "+types.ExprString(f.Type))
	}
	return "[" + strings.Join(params, ", ") + "]"
}

// exprString is types.ExprString, or "" for no expression.
func exprString(x ast.Expr) string {
	if x == nil {
		return ""
	}
	return types.ExprString(x)
}
