package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/mcphost/mcphost/internal/testrig/redistest"
)

// replicaPlugins is what a replica's /readyz says of the replicas and of
// the plugins they serve otherwise than it.
type replicaPlugins struct {
	Replicas int `json:"replicas"`
	Differ   []struct {
		Plugin    string              `json:"plugin"`
		Here      string              `json:"here"`
		Elsewhere map[string][]string `json:"elsewhere"`
	} `json:"pluginsDiffer"`
}

func readyzPlugins(t *testing.T, url string) replicaPlugins {
	t.Helper()
	resp, err := http.Get(strings.TrimSuffix(url, "/mcp") + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		State *replicaPlugins `json:"state"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.State == nil {
		t.Fatalf("/readyz: %v, %+v; want a state report", err, body)
	}
	return *body.State
}

// TestPluginSetsAcrossReplicas runs two `mcphost serve` replicas sharing
// Redis, each watching a plugins folder of its own that starts the same.
// A hot swap on one (variant a of a plugin replaced by b) reaches the
// client of the other, connected to it alone, as tools/list_changed; while
// the two serve different versions, each says so in its log and in
// /readyz, naming the plugin, both digests and the other replica; once the
// other replica gets the same file, both report no difference.
func TestPluginSetsAcrossReplicas(t *testing.T) {
	r := redistest.Start(t)
	f := replicaFixtureOf(t, r, "", nil)
	other := f
	other.plugins = filepath.Join(t.TempDir(), "plugins")
	if err := os.Mkdir(other.plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	a, b := wasmOf(t, swapA), wasmOf(t, swapB)
	swapIn(t, f.plugins, "swap.wasm", a)
	swapIn(t, other.plugins, "swap.wasm", a)
	first, second := f.serveWatched(t), other.serveWatched(t)
	for _, srv := range []*watchedServer{first, second} {
		poll.Until(t, 30*time.Second, "each replica to see the other, serving the same plugins", func() bool {
			got := readyzPlugins(t, srv.url)
			return got.Replicas == 2 && len(got.Differ) == 0
		})
	}
	client := connectWatching(t, second.url)
	client.drain()

	mark := first.mark()
	swapIn(t, f.plugins, "swap.wasm", b)
	swappedAt := time.Now()
	at := client.waitToolsChanged(t, 15*time.Second)
	t.Logf("a hot swap on one replica reached the other's client in %v", at.Sub(swappedAt).Round(time.Millisecond))

	digestA, digestB := sha256Hex(a), sha256Hex(b)
	for _, c := range []struct {
		name        string
		srv         *watchedServer
		here, there string
	}{
		{"the replica that swapped", first, digestB, digestA},
		{"the other", second, digestA, digestB},
	} {
		var got replicaPlugins
		if !poll.Within(15*time.Second, func() bool {
			got = readyzPlugins(t, c.srv.url)
			return len(got.Differ) == 1
		}) {
			t.Fatalf("/readyz of %s: %+v; want the swapped plugin reported", c.name, got)
		}
		d := got.Differ[0]
		if d.Plugin != "swap" || d.Here != c.here || len(d.Elsewhere) != 1 || len(d.Elsewhere[c.there]) != 1 {
			t.Errorf("/readyz of %s: %+v; want swap, here %s, elsewhere %s on the other replica", c.name, d, c.here, c.there)
		}
	}
	warning := regexp.MustCompile(`another replica serves another version of a plugin.*plugin=swap.*here=sha256:` + digestB + `.*elsewhere="sha256:` + digestA + ` on `)
	first.waitLog(t, mark, warning, 15*time.Second)

	swapIn(t, other.plugins, "swap.wasm", b)
	for _, srv := range []*watchedServer{first, second} {
		poll.Until(t, 15*time.Second, "both replicas to report the same plugins again", func() bool {
			got := readyzPlugins(t, srv.url)
			return got.Replicas == 2 && len(got.Differ) == 0
		})
	}
}

// sha256Hex is the digest of b in hex, as mcphost names plugin versions.
func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
