package metrics

import (
	"go/ast"
	"sort"
	"strconv"
	"strings"
)

// Layering measures how far the files of one package are from a layering,
// an order of them in which a file uses only files below it.
//
// File A uses file B (A ≠ B) when A names a package-level func, type, var
// or const declared in B, or selects a method declared in B by a name
// that is unique among the package's methods and is the name of no struct
// field or interface method of the package (without type checking, a
// selector's target is known only by its name). A name is a package-level
// one when A's own scopes leave it unresolved (go/parser's object
// resolution), so a local of the same name does not count, and neither
// does a composite literal's key. Only the files that build for
// linux/amd64 take part, so that each name has one declaration.
//
// Pairs counts the distinct pairs A → B, whatever the number of
// references between them (Refs). Backward counts the pairs that point
// upward in Order, the best order found by the greedy heuristic of Eades,
// Lin and Smyth followed by moves of single files while a move lowers the
// count: an upper bound of the minimum over all orders, which no
// polynomial algorithm is known to find. Mutual counts the pairs of files
// that each use the other, a lower bound of it (one of each two points
// back in any order).
type Layering struct {
	Dir      string   `json:"dir"`
	Files    int      `json:"files"`
	Refs     int      `json:"refs"`
	Pairs    int      `json:"pairs"`
	Backward int      `json:"backward"`
	BackRefs int      `json:"backward_refs"` // the references of the backward pairs
	Mutual   int      `json:"mutual"`
	Order    []string `json:"order"`          // top (uses others) to bottom (used)
	Back     []string `json:"backward_pairs"` // "A -> B", for each backward pair
}

// LayeringOf measures p's files.
func LayeringOf(p *Package) Layering {
	g := fileGraph(p)
	order := improve(g, greedyOrder(g))
	l := Layering{Dir: p.Dir, Files: len(g.files), Order: make([]string, len(order))}
	pos := positions(order)
	for i, v := range order {
		l.Order[i] = g.files[v]
	}
	for e, n := range g.edges {
		l.Pairs++
		l.Refs += n
		if pos[e.from] > pos[e.to] {
			l.Back = append(l.Back, g.files[e.from]+" -> "+g.files[e.to])
			l.BackRefs += n
		}
		if e.from < e.to && g.edges[edge{e.to, e.from}] > 0 {
			l.Mutual++
		}
	}
	sort.Strings(l.Back)
	l.Backward = len(l.Back)
	return l
}

// edge is a pair of files, by index: from uses to.
type edge struct{ from, to int }

// graph is the file-reference graph of one package.
type graph struct {
	files []string     // sorted names; a file is its index here
	edges map[edge]int // references, by pair
	out   [][]int      // successors of each file, sorted
	in    [][]int      // predecessors of each file, sorted
}

// fileGraph builds p's file-reference graph, as Layering describes it.
func fileGraph(p *Package) *graph {
	var files []*File
	for _, f := range p.sources() {
		if f.Linux {
			files = append(files, f)
		}
	}
	g := &graph{edges: map[edge]int{}, out: make([][]int, len(files)), in: make([][]int, len(files))}
	decl := map[string]int{}   // package-level name → file
	method := map[string]int{} // method name → file; -1 when not unique
	fields := map[string]bool{}
	for i, f := range files {
		g.files = append(g.files, f.Name)
		for name, obj := range f.AST.Scope.Objects {
			if obj.Kind != ast.Bad && obj.Kind != ast.Lbl {
				decl[name] = i
			}
		}
		for _, d := range f.AST.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv != nil {
				if _, dup := method[fn.Name.Name]; dup {
					method[fn.Name.Name] = -1
				} else {
					method[fn.Name.Name] = i
				}
			}
		}
		ast.Inspect(f.AST, func(n ast.Node) bool {
			var list *ast.FieldList
			switch n := n.(type) {
			case *ast.StructType:
				list = n.Fields
			case *ast.InterfaceType:
				list = n.Methods
			}
			if list != nil {
				for _, fld := range list.List {
					for _, name := range fld.Names {
						fields[name.Name] = true
					}
				}
			}
			return true
		})
	}
	for a, f := range files {
		use := func(b int) {
			if b != a {
				g.edges[edge{a, b}]++
			}
		}
		for _, id := range f.AST.Unresolved {
			if b, ok := decl[id.Name]; ok {
				use(b)
			}
		}
		imports := importNames(f.AST)
		ast.Inspect(f.AST, func(n ast.Node) bool {
			s, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := s.X.(*ast.Ident); ok && x.Obj == nil && imports[x.Name] {
				return true // a qualified identifier of another package
			}
			if b, ok := method[s.Sel.Name]; ok && b >= 0 && !fields[s.Sel.Name] {
				use(b)
			}
			return true
		})
	}
	for e := range g.edges {
		g.out[e.from] = append(g.out[e.from], e.to)
		g.in[e.to] = append(g.in[e.to], e.from)
	}
	for i := range files {
		sort.Ints(g.out[i])
		sort.Ints(g.in[i])
	}
	return g
}

// importNames returns the names under which f refers to its imports (the
// last path element when the import is not renamed, which is right for
// every package the tool measures).
func importNames(f *ast.File) map[string]bool {
	names := map[string]bool{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = true
	}
	return names
}

// greedyOrder is the order of Eades, Lin and Smyth (1993): take sinks to
// the bottom and sources to the top while there are any, else the file
// whose out-degree most exceeds its in-degree to the top; ties go to the
// lowest index, so the order is deterministic.
func greedyOrder(g *graph) []int {
	n := len(g.files)
	left := make([]bool, n)
	outDeg, inDeg := make([]int, n), make([]int, n)
	for v := range n {
		outDeg[v], inDeg[v] = len(g.out[v]), len(g.in[v])
	}
	remove := func(v int) {
		left[v] = true
		for _, w := range g.out[v] {
			inDeg[w]--
		}
		for _, u := range g.in[v] {
			outDeg[u]--
		}
	}
	first := func(ok func(v int) bool) int {
		for v := range n {
			if !left[v] && ok(v) {
				return v
			}
		}
		return -1
	}
	var top, bottom []int
	for len(top)+len(bottom) < n {
		if v := first(func(v int) bool { return outDeg[v] == 0 }); v >= 0 {
			bottom = append(bottom, v)
			remove(v)
			continue
		}
		if v := first(func(v int) bool { return inDeg[v] == 0 }); v >= 0 {
			top = append(top, v)
			remove(v)
			continue
		}
		best := first(func(int) bool { return true })
		for v := best + 1; v < n; v++ {
			if !left[v] && outDeg[v]-inDeg[v] > outDeg[best]-inDeg[best] {
				best = v
			}
		}
		top = append(top, best)
		remove(best)
	}
	for i := len(bottom) - 1; i >= 0; i-- {
		top = append(top, bottom[i])
	}
	return top
}

// improve moves single files while a move lowers the number of backward
// pairs: each round makes the best move of all (the first found among
// equals), until none gains.
func improve(g *graph, order []int) []int {
	cost := backward(g, order)
	for {
		best, bestOrder := cost, order
		for i := range order {
			for j := range order {
				if i == j {
					continue
				}
				o := moved(order, i, j)
				if c := backward(g, o); c < best {
					best, bestOrder = c, o
				}
			}
		}
		if best == cost {
			return order
		}
		cost, order = best, bestOrder
	}
}

// moved returns a copy of order with the element at i moved to j.
func moved(order []int, i, j int) []int {
	o := make([]int, 0, len(order))
	v := order[i]
	rest := append(append([]int{}, order[:i]...), order[i+1:]...)
	o = append(o, rest[:j]...)
	o = append(o, v)
	return append(o, rest[j:]...)
}

// backward counts the pairs of g that point upward in order.
func backward(g *graph, order []int) int {
	pos := positions(order)
	n := 0
	for e := range g.edges {
		if pos[e.from] > pos[e.to] {
			n++
		}
	}
	return n
}

// positions maps each file to its place in order.
func positions(order []int) []int {
	pos := make([]int, len(order))
	for i, v := range order {
		pos[v] = i
	}
	return pos
}
