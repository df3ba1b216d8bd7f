package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
)

func TestPercentile(t *testing.T) {
	xs := make([]float64, 1000)
	for i := range xs {
		xs[len(xs)-1-i] = float64(i + 1) // 1000 … 1
	}
	for _, tc := range []struct{ p, want float64 }{{50, 500}, {99, 990}, {99.9, 999}, {100, 1000}, {0, 1}} {
		if got := percentile(xs, tc.p); got != tc.want {
			t.Errorf("percentile(1…1000, %v) = %v, want %v", tc.p, got, tc.want)
		}
	}
	if xs[0] != 1000 {
		t.Error("percentile sorted its argument")
	}
	id := func(v float64) float64 { return v }
	if got := median([]float64{3, 1, 2}, id); got != 2 {
		t.Errorf("median(3 1 2) = %v", got)
	}
	if got := median([]float64{4, 1, 3, 2}, id); got != 2.5 {
		t.Errorf("median(4 1 3 2) = %v", got)
	}
}

func TestTicks(t *testing.T) {
	for _, tc := range []struct{ max, step, last float64 }{
		{23131, 5000, 25000}, {100, 20, 100}, {7, 1, 7}, {0.3, 0.05, 0.3}, {0, 1, 1},
	} {
		step, last := ticks(tc.max)
		if !near(step, tc.step) || !near(last, tc.last) {
			t.Errorf("ticks(%v) = %v, %v; want %v, %v", tc.max, step, last, tc.step, tc.last)
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// TestChartIsSVG checks that a chart is well-formed XML, escapes its
// labels and draws a bar for each value.
func TestChartIsSVG(t *testing.T) {
	c := barChart{title: "a <title>", unit: "ms", bars: []bar{{"go ×50 cold", 54800, colorCold}, {"x & y", 0, colorWarm}}}
	out := c.svg()
	d := xml.NewDecoder(strings.NewReader(out))
	rects := 0
	for {
		tok, err := d.Token()
		if err != nil {
			if err != io.EOF {
				t.Fatalf("%v in\n%s", err, out)
			}
			break
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "rect" {
			rects++
		}
	}
	if rects != 1+len(c.bars) { // the background, then the bars
		t.Errorf("%d rects, want %d", rects, 1+len(c.bars))
	}
}

// TestDistinctCopiesAreValidAndDiffer checks that copies of a module
// differ and still compile.
func TestDistinctCopiesAreValidAndDiffer(t *testing.T) {
	module := []byte("\x00asm\x01\x00\x00\x00")
	tm := &template{lang: "go", ext: ".wasm", data: module}
	a, b := tm.distinct(1), tm.distinct(2)
	if bytes.Equal(a, b) || !bytes.HasPrefix(a, module) {
		t.Fatalf("copies %x and %x", a, b)
	}
	rt := wazero.NewRuntime(t.Context())
	defer rt.Close(t.Context())
	for _, m := range [][]byte{a, b} {
		if _, err := rt.CompileModule(t.Context(), m); err != nil {
			t.Errorf("copy %x: %v", m, err)
		}
	}
	js := &template{lang: "js", ext: ".js", data: []byte("mcphost.tool('x');\n")}
	if bytes.Equal(js.distinct(1), js.distinct(2)) {
		t.Error("JavaScript copies are the same")
	}
}

// TestDocumentHasARowAndABarForEveryPlugin checks that the document's
// tables and charts give every measured plugin, the extism one included,
// its own row and bar.
func TestDocumentHasARowAndABarForEveryPlugin(t *testing.T) {
	if !slices.Contains(langs, "extism") {
		t.Fatal("the benchmark does not measure the extism plugin")
	}
	rep := &Report{Meta: Meta{Rounds: 1, CallsPerRound: 1000}}
	for _, lang := range append([]string{"native"}, langs...) {
		rep.Calls = append(rep.Calls, &CallResult{Lang: lang, MedianUS: 100, CPUUSPerCall: 100, WallRatio: 1, CPURatio: 1})
		rep.Startup = append(rep.Startup, &StartupResult{Lang: lang, Plugins: 1, Cache: "warm"})
	}
	doc := markdown(rep, "perf")
	chart := callChart(rep, "wall", "µs", func(c *CallResult) float64 { return c.MedianUS })
	for i, lang := range append([]string{"native"}, langs...) {
		if row := "| " + serverName(lang) + " | 100 µs |"; !strings.Contains(doc, row) {
			t.Errorf("no calls row %q in\n%s", row, doc)
		}
		if chart.bars[i].label != serverName(lang) {
			t.Errorf("calls chart bar %d is %q, want %q", i, chart.bars[i].label, serverName(lang))
		}
		if lang != "native" && !strings.Contains(doc, "| "+lang+" ×1 warm |") {
			t.Errorf("no start-up row for %s in\n%s", lang, doc)
		}
	}
}

// TestDocumentGivesTheBudgetPartAndItsFirstFailure checks the budget
// part's row, and that a failure is shown, not only counted.
func TestDocumentGivesTheBudgetPartAndItsFirstFailure(t *testing.T) {
	rep := &Report{Budget: []*BudgetResult{{Lang: "go", Plugins: 50, Fits: 10, BudgetMiB: 2604, CodeMiB: 30, InstanceMiB: 218,
		Calls: 100, Failed: 1, FirstError: "greet7: memory_budget_mib = 2604 is spent", MedianMS: 4.56, P99MS: 130, PeakRSS: 900 << 20}}}
	doc := markdown(rep, "perf")
	for _, want := range []string{
		"| 50 × go | 10 | 2604 MiB | 30 + 218 MiB | 1 of 100 | 4.6 ms | 130 ms | 900 MiB |",
		"First failure (go): `greet7: memory_budget_mib = 2604 is spent`",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("document lacks %q:\n%s", want, doc)
		}
	}
}

// TestCheckCeilingsFailsOnARatioOverItsCeilingOrAMissingPlugin checks
// that -check passes ratios at their ceilings, and fails, naming the
// plugin, on one just over its ceiling, on one not measured, and without
// the native server.
func TestCheckCeilingsFailsOnARatioOverItsCeilingOrAMissingPlugin(t *testing.T) {
	results := func(lang string, ratio float64) []*CallResult {
		out := []*CallResult{{Lang: "native", CPURatio: 1}}
		for _, l := range langs {
			r := ceiling(l)
			if l == lang {
				r = ratio
			}
			out = append(out, &CallResult{Lang: l, CPURatio: r, Rounds: []CallRound{{CPURatio: r}}})
		}
		return out
	}
	if err := checkCeilings(results("", 0), langs); err != nil {
		t.Errorf("every ratio at its ceiling: %v", err)
	}
	if err := checkCeilings(results("rust", 1.26), langs); err == nil || !strings.Contains(err.Error(), "rust: CPU per call 1.26× native") {
		t.Errorf("rust at 1.26× (ceiling 1.25×): %v", err)
	}
	if err := checkCeilings(results("go", 1.38), langs); err == nil || !strings.Contains(err.Error(), "over its ceiling 1.38× (target 1.10× + 25%)") {
		t.Errorf("go at 1.38× (target 1.1×, ceiling 1.375×): %v", err)
	}
	if err := checkCeilings(results("", 0)[:len(langs)], langs); err == nil || !strings.Contains(err.Error(), langs[len(langs)-1]+": not measured") {
		t.Errorf("%s left out: %v", langs[len(langs)-1], err)
	}
	if err := checkCeilings(results("", 0)[1:], langs); err == nil || !strings.Contains(err.Error(), "no native server") {
		t.Errorf("no native server: %v", err)
	}
}
