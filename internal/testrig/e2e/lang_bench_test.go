package e2e

// The same tool, wordcount, written with each PDK: Go
// (internal/testrig/testplugins/samego, built with standard Go, and with TinyGo with
// and without its scheduler), Rust (internal/testrig/testplugins/samerust) and
// JavaScript (internal/testrig/testplugins/samejs/wordcount.js). The test checks
// that they are indistinguishable to a client of `mcphost serve`; the
// benchmark compares their size, start-up, call latency and memory:
//
//	go test ./internal/testrig/e2e -run SameToolInEveryLanguage
//	go test ./internal/testrig/e2e -run '^$' -bench Languages -benchtime 200x -timeout 30m
//
// Both need a Rust toolchain for WebAssembly for the Rust plugin
// (scripts/setup-rust.sh installs Debian's) and TinyGo for the TinyGo builds
// (scripts/setup-tinygo.sh); without them they skip those loudly, except in
// CI, where that is a failure.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	js "github.com/mcphost/mcphost/internal/jsengine"
	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/mcphost/mcphost/internal/testrig/testenv"
	"github.com/mcphost/mcphost/internal/tinygo"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	sameGo   = "internal/testrig/testplugins/samego"
	sameRust = "internal/testrig/testplugins/samerust"
	sameJS   = "internal/testrig/testplugins/samejs/wordcount.js"
)

// samePlugin is the wordcount plugin of one language, ready to be dropped
// into a plugins folder.
type samePlugin struct {
	lang string // go, rust, js
	file string // its file name in the plugins folder
	data []byte // the module, or the JavaScript source
	skip string // why it is missing (no Rust toolchain), or ""
}

var sameLangs = []string{"go", "tinygo", "tinygo-none", "rust", "js"}

// buildSame returns the wordcount plugin of lang, building it if needed.
// Without a Rust toolchain the Rust plugin comes back with skip set (a
// failure in CI).
func buildSame(tb testing.TB, lang string) samePlugin {
	tb.Helper()
	switch lang {
	case "go":
		wasm, err := os.ReadFile(plugintest.Build(tb, sameGo))
		if err != nil {
			tb.Fatal(err)
		}
		return samePlugin{lang: lang, file: "samego.wasm", data: wasm}
	case "tinygo", "tinygo-none":
		if _, err := tinygo.Find(); err != nil {
			if testenv.CI() {
				tb.Fatalf("CI is set, and %v", err)
			}
			return samePlugin{lang: lang, skip: "SKIPPED: " + err.Error()}
		}
		wasm, err := os.ReadFile(plugintest.BuildWith(tb, sameGo, plugintest.Toolchain(lang)))
		if err != nil {
			tb.Fatal(err)
		}
		return samePlugin{lang: lang, file: "samego.wasm", data: wasm}
	case "rust":
		wasm, skip := buildRustPlugin(tb, sameRust)
		return samePlugin{lang: lang, file: "samerust.wasm", data: wasm, skip: skip}
	case "js":
		root, err := plugintest.ModuleRoot()
		if err != nil {
			tb.Fatal(err)
		}
		src, err := os.ReadFile(filepath.Join(root, sameJS))
		if err != nil {
			tb.Fatal(err)
		}
		return samePlugin{lang: lang, file: "samejs.js", data: src}
	}
	tb.Fatalf("unknown language %q", lang)
	return samePlugin{}
}

// sameFixture is a fixture (newFixture) whose plugins folder holds p only
// (nothing for a zero p) and whose compilation cache is cache: "" for the
// shared test cache, "off", or a directory.
func sameFixture(tb testing.TB, p samePlugin, cache string) fixture {
	tb.Helper()
	f := newFixture(tb, "")
	if p.file != "" {
		if err := os.WriteFile(filepath.Join(f.plugins, p.file), p.data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	if cache == "" {
		return f
	}
	cfg, err := os.ReadFile(f.config)
	if err != nil {
		tb.Fatal(err)
	}
	text := string(cfg)
	start := strings.Index(text, "cache_dir = ")
	end := start + strings.Index(text[start:], "\n")
	text = text[:start] + fmt.Sprintf("cache_dir = %q", cache) + text[end:]
	if err := os.WriteFile(f.config, []byte(text), 0o644); err != nil {
		tb.Fatal(err)
	}
	return f
}

type wordCounts struct {
	Words, Lines, Chars int
}

// sameInputs are texts and what wordcount must answer for them (see
// internal/testrig/testplugins/samego/main.go for the rules).
var sameInputs = []struct {
	text string
	want wordCounts
}{
	{"", wordCounts{0, 0, 0}},
	{"hello world", wordCounts{2, 1, 11}},
	{"one two\nthree\n", wordCounts{3, 2, 14}},
	{"  leading and trailing  \n\n", wordCounts{3, 2, 26}},
	// NBSP, ideographic space, CRLF, U+2028 separate words; 😀 is one
	// code point (two UTF-16 units).
	{"héllo\u00a0wörld\u3000日本語\r\n😀 emoji\u2028x", wordCounts{6, 2, 26}},
	// U+0085 is White_Space, U+FEFF is not (JavaScript's \s has it the
	// other way round).
	{"a\u0085b", wordCounts{2, 1, 3}},
	{"a\ufeffb", wordCounts{1, 1, 3}},
	{"\t\v\f\r \u1680\u2000\u200a\u202f\u205f", wordCounts{0, 1, 10}},
	{strings.Repeat("lorem ipsum dolor\n", 1000), wordCounts{3000, 1000, 18000}},
}

// sameAnswer is what a client sees of the wordcount tool of one language.
type sameAnswer struct {
	tool    string   // the tools/list entry, as JSON
	results []string // per input: structuredContent and text, as JSON
}

// TestSameToolInEveryLanguage serves the wordcount plugin of each language
// with a real `mcphost serve` and checks that a client cannot tell them
// apart: the same tools/list entry (schemas, annotations) and, for every
// input, the same structured result and text block, which are the expected
// counts.
func TestSameToolInEveryLanguage(t *testing.T) {
	answers := map[string]sameAnswer{}
	for _, lang := range sameLangs {
		t.Run(lang, func(t *testing.T) {
			p := buildSame(t, lang)
			if p.skip != "" {
				t.Skip(p.skip)
			}
			cs := sameFixture(t, p, "").connect(t, "2025-11-25", nil)
			ctx := ctxT(t)
			var a sameAnswer
			var names []string
			for tool, err := range cs.Tools(ctx, nil) {
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, tool.Name)
				b, err := json.Marshal(tool)
				if err != nil {
					t.Fatal(err)
				}
				a.tool = string(b)
			}
			if len(names) != 1 || names[0] != "wordcount" {
				t.Fatalf("tools %v, want [wordcount]", names)
			}
			for _, in := range sameInputs {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wordcount", Arguments: map[string]any{"text": in.text}})
				if err != nil {
					t.Fatalf("wordcount(%.40q): %v", in.text, err)
				}
				sc, err := json.Marshal(res.StructuredContent)
				if err != nil {
					t.Fatal(err)
				}
				var got wordCounts
				if err := json.Unmarshal(sc, &got); err != nil || res.IsError || got != in.want {
					t.Errorf("wordcount(%.40q) = %s (isError %v, text %q), want %+v", in.text, sc, res.IsError, text(t, res.Content), in.want)
				}
				a.results = append(a.results, fmt.Sprintf("structured %s, text %q", sc, text(t, res.Content)))
			}
			// An argument of the wrong type is a tool error.
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wordcount", Arguments: map[string]any{"text": 42}})
			if err != nil || !res.IsError {
				t.Errorf("wordcount(42): %v %+v, want a tool error", err, res)
			}
			answers[lang] = a
		})
	}
	ref, ok := answers["go"]
	if !ok {
		t.Fatal("no answers from the Go plugin to compare with")
	}
	for _, lang := range sameLangs[1:] {
		a, ok := answers[lang]
		if !ok {
			continue // skipped or failed above
		}
		if a.tool != ref.tool {
			t.Errorf("tools/list entry differs:\n  go:    %s\n  %-5s  %s", ref.tool, lang+":", a.tool)
		}
		for i := range sameInputs {
			if i < len(a.results) && i < len(ref.results) && a.results[i] != ref.results[i] {
				t.Errorf("wordcount(%.40q) differs:\n  go:    %s\n  %-5s  %s", sameInputs[i].text, ref.results[i], lang+":", a.results[i])
			}
		}
	}
}

// sameCallText is the argument of the call benchmark: a short paragraph.
const sameCallText = "The quick brown fox jumps over the lazy dog.\nPack my box with five dozen liquor jugs.\n"

// BenchmarkLanguages compares the wordcount plugin of each language, served
// by `mcphost serve` over stdio to the official Go SDK client, in
// sub-benchmarks {go,rust,js}/…:
//
//	size        the module's bytes (wasm-bytes); for JavaScript the source
//	            (js-bytes) and the engine all JavaScript plugins share
//	            (engine-bytes)
//	cold        process start to the initialize answer, compilation cache
//	            off (compiling the module included; the shutdown is not)
//	cached      the same with a warm compilation cache
//	call        one tools/call wordcount round trip on sameCallText
//	call_64KiB  the same on 64 KiB of text, where the language's speed shows
//	rss         the server's resident memory after a call, less that of a
//	            server without plugins: the compiled module and one instance
//
// then baseline/cold, a server without plugins, and table, whose output is
// a table of all the results:
//
//	go test ./internal/testrig/e2e -run '^$' -bench Languages -benchtime 200x -timeout 30m
//
// (most of its ~10 minutes are the 200 cold starts of the Go plugin; for
// a quicker table use -benchtime 20x).
func BenchmarkLanguages(b *testing.B) {
	rows := map[string]*sameRow{}
	perOp := func(b *testing.B) time.Duration { return b.Elapsed() / time.Duration(max(b.N, 1)) }

	// starts measures process start to the initialize answer of f.
	starts := func(b *testing.B, f fixture) {
		for b.Loop() {
			cs := f.connectB(b)
			b.StopTimer()
			_ = cs.Close()
			b.StartTimer()
		}
	}
	calls := func(b *testing.B, f fixture, text string) {
		cs := f.connectB(b)
		ctx := context.Background()
		params := &mcp.CallToolParams{Name: "wordcount", Arguments: map[string]any{"text": text}}
		// The first call creates the plugin instance: not measured.
		if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
			b.Fatal(err, res)
		}
		for b.Loop() {
			res, err := cs.CallTool(ctx, params)
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	}

	for _, lang := range sameLangs {
		r := &sameRow{}
		rows[lang] = r
		b.Run(lang, func(b *testing.B) {
			p := buildSame(b, lang)
			if p.skip != "" {
				r.skip = p.skip
				b.Skip(p.skip)
			}
			b.Run("size", func(b *testing.B) {
				for b.Loop() {
				}
				if lang == "js" {
					engine := len(js.Engine())
					b.ReportMetric(float64(len(p.data)), "js-bytes")
					b.ReportMetric(float64(engine), "engine-bytes")
					r.size = fmt.Sprintf("%s .js + %s engine", kb(len(p.data)), kb(engine))
				} else {
					b.ReportMetric(float64(len(p.data)), "wasm-bytes")
					r.size = kb(len(p.data)) + " wasm"
				}
				b.ReportMetric(0, "ns/op") // nothing is timed
			})
			b.Run("cold", func(b *testing.B) {
				starts(b, sameFixture(b, p, "off"))
				r.cold = perOp(b)
			})
			b.Run("cached", func(b *testing.B) {
				f := sameFixture(b, p, filepath.Join(b.TempDir(), "cache"))
				_ = f.connectB(b).Close() // warm the cache
				starts(b, f)
				r.cached = perOp(b)
			})
			served := sameFixture(b, p, filepath.Join(b.TempDir(), "cache"))
			b.Run("call", func(b *testing.B) {
				calls(b, served, sameCallText)
				r.call = perOp(b)
			})
			b.Run("call_64KiB", func(b *testing.B) {
				text := strings.Repeat(sameCallText, 64<<10/len(sameCallText)+1)[:64<<10]
				calls(b, served, text)
				r.call64k = perOp(b)
			})
			b.Run("rss", func(b *testing.B) {
				for b.Loop() {
				}
				r.rss = serverRSS(b, served, true) - serverRSS(b, sameFixture(b, samePlugin{}, ""), false)
				b.ReportMetric(float64(r.rss), "rss-bytes")
				b.ReportMetric(0, "ns/op") // nothing is timed
			})
		})
	}
	base := &sameRow{size: "-"}
	rows["baseline"] = base
	b.Run("baseline", func(b *testing.B) {
		b.Run("cold", func(b *testing.B) {
			starts(b, sameFixture(b, samePlugin{}, "off"))
			base.cold = perOp(b)
		})
	})
	// The output of a benchmark with sub-benchmarks shows only with -v:
	// the table is the output of one more.
	b.Run("table", func(b *testing.B) {
		for b.Loop() {
		}
		b.ReportMetric(0, "ns/op") // nothing is timed
		b.Log(sameTable(rows))
	})
}

// serverRSS starts a server of f, makes one wordcount call when call is
// set, and returns the server's resident memory (VmRSS, Linux only; 0
// elsewhere) after a collection of its heap settles.
func serverRSS(b *testing.B, f fixture, call bool) int {
	b.Helper()
	cmd := f.command()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	if call {
		if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "wordcount", Arguments: map[string]any{"text": sameCallText}}); err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
	time.Sleep(500 * time.Millisecond) // kept: the server's heap settles, an event it does not announce
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmRSS:" {
			kib, _ := strconv.Atoi(f[1])
			return kib << 10
		}
	}
	return 0
}

// sameRow is one line of BenchmarkLanguages' table.
type sameRow struct {
	size                        string
	cold, cached, call, call64k time.Duration
	rss                         int
	skip                        string
}

// sameTable formats BenchmarkLanguages' results.
func sameTable(rows map[string]*sameRow) string {
	var out strings.Builder
	w := tabwriter.NewWriter(&out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "language\tsize\tcold start\tcached start\ttools/call\ttools/call 64 KiB\tRSS, 1 instance\t")
	show := func(d time.Duration) string {
		switch {
		case d == 0:
			return "-"
		case d >= time.Second:
			return fmt.Sprintf("%.2f s", d.Seconds())
		case d >= time.Millisecond:
			return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
		}
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	}
	for _, lang := range append(sameLangs, "baseline") {
		r := rows[lang]
		switch {
		case r == nil:
		case r.skip != "":
			fmt.Fprintf(w, "%s\tSKIPPED: no toolchain\t\t\t\t\t\t\n", lang)
		default:
			rss := "-"
			if r.rss > 0 {
				rss = kb(r.rss)
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", lang, r.size, show(r.cold), show(r.cached), show(r.call), show(r.call64k), rss)
		}
	}
	_ = w.Flush()
	return "wordcount in each language (baseline: a server without plugins):\n" + strings.TrimSuffix(out.String(), "\n")
}

// kb formats a byte count.
func kb(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
}
