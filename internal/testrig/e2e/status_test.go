package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/mcphost/mcphost/internal/testrig/testenv"
	"golang.org/x/net/html"
)

// chromium runs Debian's headless chromium with args and returns what it
// prints (the DOM, with --dump-dom). Without scripts, its profile blocks
// JavaScript as the content setting a user turns off does (the
// blink-settings switch would stop --dump-dom too).
func chromium(t *testing.T, scripts bool, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		testenv.Missing(t, "chromium is not installed (scripts/setup-chromium.sh installs it)")
	}
	profile := t.TempDir()
	if !scripts {
		prefs := `{"profile":{"default_content_setting_values":{"javascript":2}}}`
		if err := os.MkdirAll(filepath.Join(profile, "Default"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(profile, "Default", "Preferences"), []byte(prefs), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(ctxT(t), 60*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
		"--user-data-dir=" + profile, "--virtual-time-budget=8000"}
	out, err := exec.CommandContext(ctx, bin, append(base, args...)...).Output()
	if err != nil {
		t.Fatalf("chromium %v: %v", args, err)
	}
	return string(out)
}

// pluginRows reads the plugin rows of the status page's DOM: each
// plugin's fields, by data-field, decoded from their data-value.
func pluginRows(t *testing.T, dom string) map[string]map[string]any {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(dom))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]map[string]any{}
	var walk func(n *html.Node, row map[string]any)
	walk = func(n *html.Node, row map[string]any) {
		if n.Type == html.ElementNode {
			attrs := map[string]string{}
			for _, a := range n.Attr {
				attrs[a.Key] = a.Val
			}
			if n.Data == "tr" && attrs["class"] == "plugin" {
				row = map[string]any{}
				rows[attrs["data-plugin"]] = row
			}
			if field, ok := attrs["data-field"]; ok && row != nil {
				var v any
				if err := json.Unmarshal([]byte(attrs["data-value"]), &v); err != nil {
					t.Errorf("%s: data-value %q: %v", field, attrs["data-value"], err)
				}
				row[field] = v
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, row)
		}
	}
	walk(doc, nil)
	return rows
}

// TestStatusPageInChromium loads /status, served on a loopback listener
// without auth, in a real headless Chromium after a scripted run, with
// its refresh script and without scripts: each plugin's row of the
// rendered DOM holds the values /status.json gives, and `mcphost status`
// prints them. It writes a screenshot to build/status.png.
func TestStatusPageInChromium(t *testing.T) {
	hostile, err := os.ReadFile(plugintest.Build(t, "internal/testrig/testplugins/hostile"))
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, "[plugins.hostile]\nmemory_mib = 32\ntimeout = \"2s\"\nbreaker_failures = 2\nbreaker_backoff = \"1m\"\n", "plugins/examples/tools")
	writePlugin(t, f, "hostile.wasm", hostile)
	srv := f.start(t)
	cs := srv.session(t, nil)
	ctx := ctxT(t)
	for range 3 {
		if _, isErr, err := hostileCall(ctx, cs, "hash", map[string]any{"text": "abc"}); err != nil || isErr {
			t.Fatalf("hash: %v %v", isErr, err)
		}
	}
	for range 2 {
		hostileCall(ctx, cs, "crash", nil) // opens hostile's breaker
	}
	base := strings.TrimSuffix(srv.url, "/mcp")
	resp, err := http.Get(base + "/status.json")
	if err != nil {
		t.Fatal(err)
	}
	var snap struct {
		Plugins []map[string]any `json:"plugins"`
	}
	err = json.NewDecoder(resp.Body).Decode(&snap)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || len(snap.Plugins) != 2 {
		t.Fatalf("GET /status.json: %d, %v, %d plugins", resp.StatusCode, err, len(snap.Plugins))
	}
	// mcphost status prints the same, in the terminal.
	out, err := exec.Command(mcphostBin, "status", "--url", base).CombinedOutput()
	if err != nil {
		t.Fatalf("mcphost status: %v\n%s", err, out)
	}
	for _, want := range []string{"PLUGIN", "hostile", "open", "tools", "closed", "exited with status 3"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("mcphost status lacks %q:\n%s", want, out)
		}
	}
	fields := []string{"name", "source", "sha256", "language", "abi", "allowedHosts", "hostFunctions", "mounts", "secrets", "isolation",
		"busy", "idle", "queued", "breaker", "memoryHeldBytes", "calls", "errors", "p50Ms", "p99Ms", "lastError"}
	for _, mode := range []struct {
		name    string
		scripts bool
	}{{"with scripts", true}, {"without scripts", false}} {
		dom := chromium(t, mode.scripts, "--dump-dom", base+"/status")
		// The server writes the time to the second, the script refreshes
		// it from /status.json, to the nanosecond.
		stamp, _, _ := strings.Cut(strings.SplitN(dom, `id="time">`, 2)[len(strings.SplitN(dom, `id="time">`, 2))-1], "<")
		if refreshed := strings.Contains(stamp, "."); refreshed != mode.scripts {
			t.Errorf("%s: the page's time %q says the script ran: %v", mode.name, stamp, refreshed)
		}
		rows := pluginRows(t, dom)
		if len(rows) != len(snap.Plugins) {
			t.Errorf("%s: %d plugin rows, want %d", mode.name, len(rows), len(snap.Plugins))
		}
		for _, want := range snap.Plugins {
			got := rows[fmt.Sprint(want["name"])]
			for _, field := range fields {
				if !reflect.DeepEqual(got[field], want[field]) {
					t.Errorf("%s: plugin %v, %s: the page shows %#v, /status.json %#v", mode.name, want["name"], field, got[field], want[field])
				}
			}
		}
	}
	for _, p := range snap.Plugins {
		switch p["name"] {
		case "hostile":
			if p["breaker"] != "open" || p["errors"] != 2.0 || !strings.Contains(fmt.Sprint(p["lastError"]), "exited with status 3") || p["language"] != "Go" {
				t.Errorf("hostile: %v; want its breaker open, 2 errors, the last one its crash, in Go", p)
			}
		case "tools":
			if p["calls"] != 3.0 || p["errors"] != 0.0 {
				t.Errorf("tools: %v; want 3 calls, no error", p)
			}
		}
	}
	root, err := plugintest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(root, "build", "status.png")
	if err := os.MkdirAll(filepath.Dir(shot), 0o755); err != nil {
		t.Fatal(err)
	}
	chromium(t, true, "--screenshot="+shot, "--window-size=1600,700", "--hide-scrollbars", base+"/status")
	if info, err := os.Stat(shot); err != nil || info.Size() == 0 {
		t.Errorf("no screenshot at %s: %v", shot, err)
	}
}
