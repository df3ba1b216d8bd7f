package main

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// bar is one bar of a chart: its label, its value and its colour.
type bar struct {
	label string
	value float64
	color string
}

// barChart is a horizontal bar chart: a title, one bar a row with its
// label on the left and its value at its end, and an axis below with
// ticks at round values.
type barChart struct {
	title string
	unit  string // the values' unit, on the axis
	bars  []bar
	// legend is the colours' meaning, in order: colour, then text.
	legend [][2]string
}

// The geometry of a chart, in pixels.
const (
	chartWidth  = 760
	labelWidth  = 200 // the labels' column
	valueRoom   = 90  // beyond the longest bar, for its value
	barHeight   = 18
	barGap      = 6
	titleHeight = 34
	axisHeight  = 44
	legendRow   = 20
)

// Colours of the charts' bars.
const (
	colorCold   = "#d9534f"
	colorWarm   = "#337ab7"
	colorNative = "#777777"
	colorPlugin = "#5cb85c"
)

// svg returns the chart as an SVG document.
func (c barChart) svg() string {
	var b strings.Builder
	top := titleHeight + legendRow*len(c.legend)
	height := top + len(c.bars)*(barHeight+barGap) + axisHeight
	plot := float64(chartWidth - labelWidth - valueRoom)
	maxV := 0.0
	for _, br := range c.bars {
		maxV = math.Max(maxV, br.value)
	}
	step, last := ticks(maxV)
	scale := plot / last
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		chartWidth, height, chartWidth, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", 10, html.EscapeString(c.title))
	for i, l := range c.legend {
		y := titleHeight + i*legendRow
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n",
			labelWidth, y, l[0], labelWidth+18, y+10, html.EscapeString(l[1]))
	}
	// Grid lines and the axis's ticks.
	bottom := top + len(c.bars)*(barHeight+barGap)
	for v := 0.0; v <= last*(1+1e-9); v += step {
		x := float64(labelWidth) + v*scale
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#dddddd"/>`+"\n", x, top-4, x, bottom)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x, bottom+16, number(v))
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", labelWidth, bottom, labelWidth+int(plot), bottom)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", labelWidth, top-4, labelWidth, bottom)
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", float64(labelWidth)+plot/2, bottom+36, html.EscapeString(c.unit))
	for i, br := range c.bars {
		y := top + i*(barHeight+barGap)
		w := br.value * scale
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", labelWidth-8, y+13, html.EscapeString(br.label))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n", labelWidth, y, w, barHeight, br.color)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d">%s</text>`+"\n", float64(labelWidth)+w+4, y+13, number(br.value))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// ticks returns the step of an axis from 0 to at least maxV, a round
// number (1, 2 or 5 times a power of ten) giving at most 8 ticks, and
// the axis's end, the first tick at or past maxV.
func ticks(maxV float64) (step, last float64) {
	if maxV <= 0 {
		return 1, 1
	}
	pow := math.Pow(10, math.Floor(math.Log10(maxV/8)))
	for _, m := range []float64{1, 2, 5, 10} {
		step = m * pow
		if maxV/step <= 8 {
			break
		}
	}
	return step, math.Ceil(maxV/step-1e-9) * step
}

// number formats a value for a chart: a few significant digits.
func number(v float64) string {
	switch {
	case v == 0:
		return "0"
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 10:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", v), ".0")
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}
