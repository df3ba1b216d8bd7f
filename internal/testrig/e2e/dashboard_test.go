package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/prometheus/promql/parser"
)

// dashboardQueries returns the PromQL of each panel of the Grafana
// dashboard in the repository, docs/grafana/mcphost.json, and of each
// example of docs/observability.md's PromQL section, by where it is.
func dashboardQueries(t *testing.T) map[string]string {
	t.Helper()
	root, err := plugintest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "docs", "grafana", "mcphost.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("docs/grafana/mcphost.json: %v", err)
	}
	queries := map[string]string{}
	for _, p := range dash.Panels {
		for i, target := range p.Targets {
			queries["panel "+p.Title+" #"+string(rune('A'+i))] = target.Expr
		}
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "observability.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "### PromQL")
	section, _, _ = strings.Cut(section, "\n#") // to the next heading
	for _, m := range regexp.MustCompile("`([^`]*\\(.*?)`").FindAllStringSubmatch(section, -1) {
		queries["docs: "+m[1]] = m[1]
	}
	if len(dash.Panels) < 10 || len(queries) < len(dash.Panels)+5 {
		t.Fatalf("%d panels and %d queries in all: the dashboard or the docs' examples went missing", len(dash.Panels), len(queries))
	}
	return queries
}

// wantDashboardQueries checks that every query of the dashboard and of
// the docs parses with Prometheus's own PromQL parser, and that every
// metric it names is in the scrape families, of a server that served
// what the dashboard shows.
func wantDashboardQueries(t *testing.T, families map[string]*dto.MetricFamily) {
	t.Helper()
	for where, query := range dashboardQueries(t) {
		expr, err := parser.ParseExpr(query)
		if err != nil {
			t.Errorf("%s: %q does not parse: %v", where, query, err)
			continue
		}
		parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
			vs, ok := node.(*parser.VectorSelector)
			if !ok {
				return nil
			}
			name := vs.Name
			for _, suffix := range []string{"_bucket", "_count", "_sum"} {
				if base, found := strings.CutSuffix(name, suffix); found && families[base] != nil {
					name = base
				}
			}
			if families[name] == nil {
				t.Errorf("%s: %s is not in /metrics", where, vs.Name)
			}
			return nil
		})
	}
}
