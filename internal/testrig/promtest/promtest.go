// Package promtest reads Prometheus metrics in tests: it parses a text
// exposition with Prometheus's own parser and names a series by its labels.
package promtest

import (
	"io"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Parse parses the text exposition r, failing t when it does not parse.
func Parse(t testing.TB, r io.Reader) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		t.Fatalf("the metrics do not parse: %v", err)
	}
	return families
}

// Labels names a series: its labels with a value, but those named in
// skip, as name=value sorted and joined by commas.
func Labels(m *dto.Metric, skip ...string) string {
	var labels []string
	for _, l := range m.GetLabel() {
		if l.GetValue() != "" && !slices.Contains(skip, l.GetName()) {
			labels = append(labels, l.GetName()+"="+l.GetValue())
		}
	}
	slices.Sort(labels)
	return strings.Join(labels, ",")
}

// Label returns the value of m's label name, "" when it has none.
func Label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
