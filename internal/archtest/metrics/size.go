package metrics

// Size is how much code a package holds.
type Size struct {
	Dir       string `json:"dir"`
	Files     int    `json:"files"`      // non-test .go files, of any build constraint
	Lines     int    `json:"lines"`      // their lines
	TestFiles int    `json:"test_files"` // _test.go files
	TestLines int    `json:"test_lines"` // their lines
}

// SizeOf counts p's files and lines, tests apart.
func SizeOf(p *Package) Size {
	s := Size{Dir: p.Dir}
	for _, f := range p.Files {
		if f.Test {
			s.TestFiles++
			s.TestLines += f.Lines
		} else {
			s.Files++
			s.Lines += f.Lines
		}
	}
	return s
}
