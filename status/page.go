package status

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"
)

//go:embed page.html
var pageHTML string

// page renders a Snapshot as HTML.
var page = template.Must(template.New("status").Funcs(template.FuncMap{
	"bytes":     formatBytes,
	"percent":   func(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" },
	"ms":        func(f float64) string { return strconv.FormatFloat(f, 'f', 3, 64) },
	"join":      func(s []string) string { return strings.Join(s, ", ") },
	"sparkline": sparkline,
	"value":     func(v any) string { b, _ := json.Marshal(v); return string(b) },
}).Parse(pageHTML))

// formatBytes writes n bytes in MiB.
func formatBytes(n uint64) string {
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
}

// sparkline draws counts as an inline SVG polyline, 100 by 20.
func sparkline(counts []int) template.HTML {
	top := 1
	for _, c := range counts {
		top = max(top, c)
	}
	var pts []string
	for i, c := range counts {
		x := float64(i) * 100 / float64(max(len(counts)-1, 1))
		y := 19 - float64(c)*18/float64(top)
		pts = append(pts, strconv.FormatFloat(x, 'f', 1, 64)+","+strconv.FormatFloat(y, 'f', 1, 64))
	}
	return template.HTML(fmt.Sprintf(`<svg class="spark" width="100" height="20" viewBox="0 0 100 20" role="img" aria-label="calls per %s"><polyline fill="none" stroke="currentColor" stroke-width="1.5" points="%s"/></svg>`,
		(Window / Buckets).String(), strings.Join(pts, " ")))
}

// Handler serves /status (HTML) and /status.json from r and src, to the
// requests allow lets through; others get 403. The page shows every
// grant and other users' denials: allow must let only the operator in.
func Handler(r *Recorder, src Sources, allow func(*http.Request) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !allow(req) {
			http.Error(w, "the status page is for the server's operator", http.StatusForbidden)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		snap := r.Snapshot(src)
		if strings.HasSuffix(req.URL.Path, ".json") {
			w.Header().Set("Content-Type", "application/json")
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			_ = enc.Encode(snap)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:")
		if err := page.Execute(w, snap); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
}
