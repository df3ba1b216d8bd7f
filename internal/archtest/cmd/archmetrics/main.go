// Command archmetrics prints the architecture measures of issue 24 for the
// source tree at -root (any checkout of the repository): lines and files
// per package, era tests, exported identifiers per public package, and,
// for each package of -pkg, the methods per type and the references
// between its files that run against a layering of them. Package
// internal/archtest/metrics says precisely what each measure counts.
//
//	go run ./internal/archtest/cmd/archmetrics -root DIR [-pkg host,sandbox] [-json]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/mcphost/mcphost/internal/archtest/metrics"
)

func main() {
	root := flag.String("root", ".", "the repository's root directory")
	pkg := flag.String("pkg", "host", "comma-separated package directories, relative to -root, whose methods and file layering to measure")
	asJSON := flag.Bool("json", false, "print JSON rather than aligned text")
	flag.Parse()
	r, err := metrics.Measure(*root, strings.Split(*pkg, ","))
	if err == nil {
		if *asJSON {
			enc := json.NewEncoder(os.Stdout)
			enc.SetIndent("", "  ")
			err = enc.Encode(r)
		} else {
			err = writeText(os.Stdout, r)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "archmetrics:", err)
		os.Exit(1)
	}
}

// writeText prints r as aligned tables.
func writeText(out io.Writer, r *metrics.Report) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "package\tfiles\tlines\ttest files\ttest lines\t")
	var total metrics.Size
	for _, s := range r.Sizes {
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t\n", s.Dir, s.Files, s.Lines, s.TestFiles, s.TestLines)
		total.Files += s.Files
		total.Lines += s.Lines
		total.TestFiles += s.TestFiles
		total.TestLines += s.TestLines
	}
	fmt.Fprintf(w, "total\t%d\t%d\t%d\t%d\t\n\n", total.Files, total.Lines, total.TestFiles, total.TestLines)
	fmt.Fprintln(w, "era tests\tera == or != nil\tmodern field tests\t")
	for _, e := range r.EraTests {
		fmt.Fprintf(w, "%s\t%d\t%d\t\n", e.Dir, e.EraNil, e.Modern)
	}
	fmt.Fprintln(w, "\npublic package\texported identifiers\t")
	for _, a := range r.API {
		fmt.Fprintf(w, "%s\t%d\t\n", a.Dir, a.Identifiers)
	}
	for _, f := range r.Focus {
		fmt.Fprintf(w, "\nmethods in %s\tmethods\tfiles\t\n", f.Dir)
		for _, m := range f.Methods {
			fmt.Fprintf(w, "%s\t%d\t%d\t\n", m.Type, m.Methods, m.Files)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	for _, f := range r.Focus {
		l := f.Layering
		fmt.Fprintf(out, "\nlayering of %s: %d files, %d references in %d file pairs; %d pairs (%d references) run backward in the best order found; at least %d pairs do in any (mutual pairs)\n",
			l.Dir, l.Files, l.Refs, l.Pairs, l.Backward, l.BackRefs, l.Mutual)
		fmt.Fprintf(out, "order, top to bottom: %s\n", strings.Join(l.Order, " "))
		fmt.Fprintf(out, "backward pairs: %s\n", strings.Join(l.Back, ", "))
	}
	return nil
}
