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

// Values returns value(series) of each series of the family name, keyed
// by Labels(series), summed when keys repeat; it fails t when the scrape
// has no such family.
func Values(t testing.TB, families map[string]*dto.MetricFamily, name string, value func(*dto.Metric) float64) map[string]float64 {
	t.Helper()
	f := families[name]
	if f == nil {
		t.Fatalf("no %s in the scrape", name)
	}
	out := map[string]float64{}
	for _, m := range f.GetMetric() {
		out[Labels(m)] += value(m)
	}
	return out
}

// Counter, Gauge and SampleCount are the values of a counter's, a gauge's
// and a histogram's series, for Values.
func Counter(m *dto.Metric) float64     { return m.GetCounter().GetValue() }
func Gauge(m *dto.Metric) float64       { return m.GetGauge().GetValue() }
func SampleCount(m *dto.Metric) float64 { return float64(m.GetHistogram().GetSampleCount()) }
