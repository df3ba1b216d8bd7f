package status

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/pluginhost"
	"github.com/mcphost/mcphost/sandbox"
)

// clock is a settable time.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// A plugin's row counts its calls of the last five minutes and its
// failures (a tool error is an answer), their p50 and p99, the calls of
// each half minute, and its last failure; older calls drop out.
func TestRowsSummarizeTheLastFiveMinutes(t *testing.T) {
	c := &clock{t: time.Unix(1_000_000, 0)}
	r := NewRecorder()
	r.now = c.now
	r.PluginCalled(host.PluginCall{Plugin: "notes", Outcome: host.OutcomeOK, Duration: time.Hour}) // to drop out
	c.t = c.t.Add(6 * time.Minute)
	for i := 1; i <= 100; i++ {
		outcome := host.OutcomeOK
		if i%10 == 0 {
			outcome = host.OutcomeToolError
		}
		r.PluginCalled(host.PluginCall{Plugin: "notes", Outcome: outcome, Duration: time.Duration(i) * time.Millisecond})
	}
	c.t = c.t.Add(2 * time.Minute)
	r.PluginCalled(host.PluginCall{Plugin: "notes", Outcome: "timeout", Duration: 2 * time.Second, Error: "plugin notes: plugin call timed out: 2s"})
	src := Sources{Version: "v1", Started: c.t.Add(-time.Hour),
		Plugins: func() []pluginhost.PluginStats {
			return []pluginhost.PluginStats{{Name: "notes", PluginAbout: pluginhost.PluginAbout{Language: "Go", ABI: 1},
				Stats: sandbox.Stats{Busy: 1, Idle: 2, MemoryHeld: 256 << 20}, Breaker: pluginhost.BreakerClosed}}
		},
		MemoryBudget: func() (uint64, uint64) { return 1 << 30, 256 << 20 },
		Server: func() host.Stats {
			return host.Stats{Sessions: map[host.SessionKind]int{{Transport: host.TransportHTTP, ProtocolVersion: "2025-11-25"}: 3}}
		},
	}
	snap := r.Snapshot(src)
	if len(snap.Plugins) != 1 {
		t.Fatalf("plugins %v", snap.Plugins)
	}
	p := snap.Plugins[0]
	if p.Calls != 101 || p.Errors != 1 || p.P50MS != 51 || p.P99MS != 100 || p.MemoryShare != 0.25 || p.Busy != 1 || p.Idle != 2 {
		t.Errorf("row %+v: want 101 calls, 1 error, p50 51 ms, p99 100 ms, a quarter of the budget", p)
	}
	if p.LastError != "timeout: plugin notes: plugin call timed out: 2s" || p.LastErrorAt == nil {
		t.Errorf("last error %q at %v", p.LastError, p.LastErrorAt)
	}
	if len(p.Recent) != Buckets || p.Recent[Buckets-1] != 1 || p.Recent[Buckets-1-4] != 100 {
		t.Errorf("calls per half minute %v: want the 100 calls of two minutes ago and the last one", p.Recent)
	}
	if len(snap.Sessions) != 1 || snap.Sessions[0].Count != 3 || snap.UptimeSeconds != 3600 {
		t.Errorf("sessions %v, uptime %v", snap.Sessions, snap.UptimeSeconds)
	}
}

// The latest denials come first, at most maxDenials of them.
func TestTheLatestDenialsAreKept(t *testing.T) {
	r := NewRecorder()
	for i := range maxDenials + 5 {
		r.Denied(host.Denial{Reason: host.DeniedEgress, Item: string(rune('a' + i%26)), Detail: strings.Repeat("x", i)})
	}
	d := r.Snapshot(Sources{}).Denials
	if len(d) != maxDenials || len(d[0].Detail) != maxDenials+4 {
		t.Errorf("%d denials, the first of detail length %d; want %d, the latest first", len(d), len(d[0].Detail), maxDenials)
	}
}

// The page and its JSON go only to the requests allow lets in; the page
// has a row per plugin, and its values are those of the JSON.
func TestHandlerServesThePageAndItsJSONToTheOperatorOnly(t *testing.T) {
	r := NewRecorder()
	r.PluginCalled(host.PluginCall{Plugin: "a<b>", Outcome: host.OutcomeOK, Duration: time.Millisecond})
	src := Sources{Plugins: func() []pluginhost.PluginStats { return []pluginhost.PluginStats{{Name: "a<b>"}} }}
	get := func(h http.Handler, path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec
	}
	if rec := get(Handler(r, src, func(*http.Request) bool { return false }), "/status"); rec.Code != http.StatusForbidden {
		t.Errorf("refused: %d", rec.Code)
	}
	h := Handler(r, src, func(*http.Request) bool { return true })
	var snap Snapshot
	if err := json.Unmarshal(get(h, "/status.json").Body.Bytes(), &snap); err != nil || len(snap.Plugins) != 1 || snap.Plugins[0].Calls != 1 {
		t.Fatalf("JSON: %+v, %v", snap, err)
	}
	html := get(h, "/status").Body.String()
	if !strings.Contains(html, `<tr class="plugin" data-plugin="a&lt;b&gt;">`) || strings.Contains(html, "<b>") {
		t.Errorf("the page does not escape the plugin's name:\n%s", html)
	}
}

// Past maxSamples calls a plugin's window keeps the latest maxSamples,
// each call taking the oldest one's place.
func TestTheWindowKeepsTheLatestCalls(t *testing.T) {
	c := &clock{t: time.Unix(1_000_000, 0)}
	r := NewRecorder()
	r.now = c.now
	for i := range maxSamples + 10 {
		outcome := host.OutcomeOK
		if i < 10 {
			outcome = "trap" // the oldest ten, which give their place up
		}
		r.PluginCalled(host.PluginCall{Plugin: "busy", Outcome: outcome, Duration: time.Duration(i) * time.Microsecond})
	}
	n, failures, _, p99, _, _, _ := r.recent("busy")
	if n != maxSamples || failures != 0 || p99 != time.Duration(maxSamples+10-1-maxSamples/100)*time.Microsecond {
		t.Errorf("%d calls, %d failures, p99 %v: want the latest %d, none failed", n, failures, p99, maxSamples)
	}
}

// A plugin's ring of samples holds no pointer, so that the garbage
// collector does not scan it at each collection: with time.Time in it,
// a busy server spent 2-4% more CPU per call with the status page on.
func TestSamplesHoldNoPointers(t *testing.T) {
	var hasPointers func(reflect.Type) bool
	hasPointers = func(ty reflect.Type) bool {
		switch ty.Kind() {
		case reflect.Struct:
			for f := range ty.Fields() {
				if hasPointers(f.Type) {
					return true
				}
			}
			return false
		case reflect.Array:
			return hasPointers(ty.Elem())
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.String, reflect.Interface, reflect.Chan, reflect.Func, reflect.UnsafePointer:
			return true
		}
		return false
	}
	if hasPointers(reflect.TypeFor[sample]()) {
		t.Errorf("%v holds a pointer: the collector scans every plugin's %d samples", reflect.TypeFor[sample](), maxSamples)
	}
}

// A call is recorded at the time it ended, as the engine reports it,
// not at the time the recorder hears of it: one that ended six minutes
// ago is already out of the window.
func TestACallIsRecordedWhenItEnded(t *testing.T) {
	c := &clock{t: time.Unix(1_000_000, 0)}
	r := NewRecorder()
	r.now = c.now
	r.PluginCalled(host.PluginCall{Plugin: "notes", Outcome: host.OutcomeOK, Duration: time.Millisecond, Ended: c.t.Add(-6 * time.Minute)})
	r.PluginCalled(host.PluginCall{Plugin: "notes", Outcome: host.OutcomeOK, Duration: time.Millisecond, Ended: c.t.Add(-time.Second)})
	if n, _, _, _, spark, _, _ := r.recent("notes"); n != 1 || spark[Buckets-1] != 1 {
		t.Errorf("%d calls in the window, sparkline %v: want the one that ended a second ago, in the last bar", n, spark)
	}
}
