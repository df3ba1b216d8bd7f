package metrics

import "fmt"

// Report is every measure of one tree.
type Report struct {
	Sizes    []Size     `json:"sizes"`     // every package, by directory
	EraTests []EraTests `json:"era_tests"` // the packages that have any
	API      []APISize  `json:"api"`       // every public package
	Focus    []Focus    `json:"focus"`     // the packages asked for, in that order
}

// APISize is the size of a public package's exported API.
type APISize struct {
	Dir         string `json:"dir"`
	Identifiers int    `json:"identifiers"` // lines of API(p)
}

// Focus holds the measures taken of one package only when asked for.
type Focus struct {
	Dir      string    `json:"dir"`
	Methods  []Methods `json:"methods"`
	Layering Layering  `json:"layering"`
}

// Measure measures the tree at root; focus lists the package directories
// (slash-separated, relative to root) whose methods and file layering to
// measure too.
func Measure(root string, focus []string) (*Report, error) {
	pkgs, err := Load(root)
	if err != nil {
		return nil, err
	}
	r := &Report{}
	for _, p := range pkgs {
		r.Sizes = append(r.Sizes, SizeOf(p))
		if e := EraTestsOf(p); e.EraNil+e.Modern > 0 {
			r.EraTests = append(r.EraTests, e)
		}
		if p.Public() {
			r.API = append(r.API, APISize{Dir: p.Dir, Identifiers: len(API(p))})
		}
	}
	for _, dir := range focus {
		p, err := LoadDir(root, dir)
		if err != nil {
			return nil, err
		}
		if len(p.sources()) == 0 {
			return nil, fmt.Errorf("%s: no non-test .go files", dir)
		}
		r.Focus = append(r.Focus, Focus{Dir: dir, Methods: MethodsOf(p), Layering: LayeringOf(p)})
	}
	return r, nil
}
