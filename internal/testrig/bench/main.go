// Command bench measures mcphost against a native MCP server (the Go
// SDK's, built by the benchmark: ./native) in one run, and writes the
// results as JSON and as docs/performance.md with its charts:
//
//	make bench        # go run ./internal/testrig/bench
//	make bench-short  # go run ./internal/testrig/bench -short
//	make bench-check  # go run ./internal/testrig/bench -check (in make test)
//
// It measures, round-robin over the configurations so that a machine's
// drift touches them alike, and reports the median of the rounds:
//
//   - start-up: process start to the first answered tools/list, then idle
//     and peak resident memory, of `mcphost serve` with N distinct copies
//     of the greet plugin of each `mcphost new` template and of extism
//     (N = 1 and 50, and 500 for Rust; 1 and 10 with -short), with an
//     empty and a warm compilation cache, then the first call;
//   - calls: sequential tools/call greet over stdio, wall time (median,
//     p99, p99.9) and server CPU per call, and their ratios to the native
//     server's;
//   - rename: a plugin file (its compiled code cached) renamed into the
//     folder a watching server serves, to notifications/tools/list_changed
//     at the client;
//   - HTTP (not with -short): Streamable HTTP throughput with 1, 16 and 64
//     concurrent callers, a session each, and server CPU per call;
//   - budget: round-robin calls over 50 distinct plugins (10 with -short)
//     of each WebAssembly template under a memory budget with room for a
//     fifth of them: failures, time per call, peak resident memory.
//
// The templates' plugins are built by mcphost new and mcphost build, their
// log call taken out; beside them, extism is a third-party plugin with the
// same tool, written against the official Extism Go PDK in the shape of
// hyper-mcp's plugins (./extism). A language whose toolchain is missing (TinyGo,
// Rust) is skipped, loudly, unless CI is set, where that fails the run.
// With -from, it only writes the document from a JSON file of an earlier
// run. With -check, it measures only the calls, of every plugin, and fails
// when a plugin's server CPU per call, as a ratio to the native server's
// (the median of the rounds'), is over its ceiling: issue 25's stretch
// target plus 25% (ceilings.go).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/plugintest"
)

// Report is the JSON the benchmark writes.
type Report struct {
	Meta    Meta             `json:"meta"`
	Startup []*StartupResult `json:"startup"`
	Calls   []*CallResult    `json:"calls"`
	// HTTP is the Streamable HTTP throughput (not measured by -short).
	HTTP []*HTTPResult `json:"http,omitempty"`
	// Rename is the wait for list_changed after a rename into the folder.
	Rename []*RenameResult `json:"rename"`
	// Budget is round-robin calls over many plugins under a memory budget
	// with room for a fifth of them (budget.go).
	Budget []*BudgetResult `json:"budget,omitempty"`
	// Telemetry is the overhead of metrics and traces on the Go
	// template's stdio calls (-parts telemetry).
	Telemetry []*TelemetryResult `json:"telemetry,omitempty"`
	// Skipped are the languages left out, and why.
	Skipped []string `json:"skipped,omitempty"`
}

// Meta says where and how the numbers were taken.
type Meta struct {
	Date          time.Time `json:"date"`
	Short         bool      `json:"short"`
	Rounds        int       `json:"rounds"`
	CallsPerRound int       `json:"calls_per_round"`
	// HTTPWindow is how long the callers of each HTTP round call, in
	// seconds (0: HTTP not measured).
	HTTPWindow float64 `json:"http_window_seconds,omitempty"`
	Plugins    []int   `json:"plugins"`
	MCPHost    string  `json:"mcphost_version"`
	GoVersion  string  `json:"go_version"`
	OS         string  `json:"os"`
	CPU        string  `json:"cpu"`
	CPUs       int     `json:"cpus"`
	// LoadAverage is /proc/loadavg's first three fields when the run began.
	LoadAverage string `json:"load_average"`
	// CallsCPU is the one CPU the call benchmark ran on, client and
	// servers (-pin); nil when it ran on all.
	CallsCPU *int `json:"calls_cpu,omitempty"`
	// Note is what -note said about the machine.
	Note string `json:"note,omitempty"`
	// Seconds is how long the run took.
	Seconds float64 `json:"seconds"`
}

func main() {
	short := flag.Bool("short", false, "the quick version: start-up with 1 and 10 plugins, fewer calls")
	mcphost := flag.String("mcphost", "build/mcphost", "the mcphost binary to measure (make bench builds it)")
	out := flag.String("out", "build/bench/bench.json", "where to write the results")
	doc := flag.String("doc", "docs/performance.md", "the document to write from the results, beside its charts (in a folder of its name without .md); \"\" for none")
	from := flag.String("from", "", "write the document from this JSON file of an earlier run, measuring nothing")
	rounds := flag.Int("rounds", 3, "rounds of every measurement")
	calls := flag.Int("calls", 0, "calls to each server in a round (default 7000, 1000 with -short)")
	note := flag.String("note", "", "a note about the machine, printed in the document (e.g. shared, loaded)")
	parts := flag.String("parts", "startup,calls,rename,http,budget", "the measurements to make, comma-separated (-short leaves http out): startup, calls, rename, http, budget, and telemetry (metrics, and metrics with every span exported, against all off)")
	only := flag.String("langs", strings.Join(langs, ","), "the plugins to measure, comma-separated: templates, and extism")
	plugins := flag.String("plugins", "", "the numbers of distinct plugins to start with, comma-separated (default 1,50; 1,10 with -short), e.g. -langs rust -plugins 500")
	pin := flag.Bool("pin", true, "run the call benchmark, client and servers, on one CPU (the last): a server's CPU per call is then steady from round to round")
	profile := flag.String("profile", "", "write a CPU profile of each server of the call benchmark into this folder, as calls-LANG.pprof (go tool pprof; a plugin's own code shows as _ExternalCode)")
	check := flag.Bool("check", false, "measure only the calls of every plugin, and fail when one's CPU per call over the native server's is over its ceiling (ceilings.go); writes -out, no document")
	flag.Parse()
	o := options{short: *short, rounds: *rounds, calls: *calls, note: *note, parts: set(*parts), langs: set(*only), check: *check, profile: *profile, pin: *pin}
	if *check {
		o.short, o.parts, o.langs, *doc = true, set("calls"), set(strings.Join(langs, ",")), ""
		if o.calls == 0 {
			o.calls = checkCalls
		}
	}
	for n := range set(*plugins) {
		if n == "" {
			continue
		}
		i, err := strconv.Atoi(n)
		if err != nil || i < 1 {
			fmt.Fprintf(os.Stderr, "bench: -plugins %q: want positive numbers\n", *plugins)
			os.Exit(2)
		}
		o.counts = append(o.counts, i)
	}
	slices.Sort(o.counts)
	if *short {
		o.parts["http"] = false
	}
	if err := run(o, *mcphost, *out, *doc, *from); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// options are what a run measures, and how much.
type options struct {
	short         bool
	rounds, calls int
	note          string
	parts         map[string]bool // startup, calls, rename, http, budget, telemetry
	langs         map[string]bool // of langs
	counts        []int           // numbers of plugins to start with; nil: the default
	check         bool            // fail when a CPU ratio is over its ceiling
	profile       string          // where to write the call servers' CPU profiles
	pin           bool            // run the call benchmark on one CPU
}

// set returns the comma-separated items of list as a set.
func set(list string) map[string]bool {
	m := map[string]bool{}
	for item := range strings.SplitSeq(list, ",") {
		m[strings.TrimSpace(item)] = true
	}
	return m
}

func run(o options, mcphost, out, doc, from string) error {
	var rep *Report
	if from != "" {
		b, err := os.ReadFile(from)
		if err != nil {
			return err
		}
		rep = &Report{}
		if err := json.Unmarshal(b, rep); err != nil {
			return fmt.Errorf("%s: %w", from, err)
		}
	} else {
		var err error
		if rep, err = measure(o, mcphost); err != nil {
			return err
		}
		if err := writeJSON(out, rep); err != nil {
			return err
		}
		progress("wrote %s", out)
		if o.check {
			if err := checkCeilings(rep.Calls, langs); err != nil {
				return err
			}
			for _, c := range rep.Calls {
				if c.Lang != "native" {
					progress("%s: CPU per call %.2f× native (rounds %s), ceiling %.2f×", c.Lang, c.CPURatio, roundRatios(c), ceiling(c.Lang))
				}
			}
		}
	}
	if doc == "" {
		return nil
	}
	if err := writeDoc(doc, rep); err != nil {
		return err
	}
	progress("wrote %s", doc)
	return nil
}

// rustManyPlugins is the start-up's third number of plugins, for the Rust
// template alone (its plugins are the smallest) in the full run: a server
// offering hundreds, of which a few are called.
const rustManyPlugins = 500

// httpWindow is how long the callers of an HTTP round call.
const httpWindow = 3 * time.Second

// measure builds what it needs and runs every measurement.
func measure(o options, mcphost string) (*Report, error) {
	began := time.Now()
	root, err := plugintest.ModuleRoot()
	if err != nil {
		return nil, err
	}
	if mcphost, err = filepath.Abs(mcphost); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "mcphost-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)

	counts := o.counts
	switch {
	case counts != nil:
	case o.short:
		counts = []int{1, 10}
	default:
		counts = []int{1, 50}
	}
	if o.calls == 0 {
		o.calls = 7000
		if o.short {
			o.calls = 1000
		}
	}
	rep := &Report{Meta: machine(mcphost, o.note)}
	rep.Meta.Date, rep.Meta.Short, rep.Meta.Rounds, rep.Meta.CallsPerRound, rep.Meta.Plugins = began.UTC(), o.short, o.rounds, o.calls, counts

	progress("building the native server")
	native := filepath.Join(work, "native")
	if msg, err := exec.Command("go", "build", "-C", root, "-o", native, "./internal/testrig/bench/native").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building the native server: %v\n%s", err, msg)
	}
	var cases []startupCase
	var templates []*template
	callServers := []*callServer{{lang: "native", argv: []string{native}}}
	httpServers := []*httpServer{{lang: "native", argv: []string{native, "-http", "127.0.0.1:0"}}}
	for _, lang := range langs {
		if !o.langs[lang] {
			continue
		}
		progress("building the %s plugin", lang)
		t, missing, err := buildTemplate(mcphost, root, work, lang)
		if err != nil {
			return nil, err
		}
		if missing != "" {
			progress("%s", missing)
			rep.Skipped = append(rep.Skipped, missing)
			continue
		}
		templates = append(templates, t)
		langCounts := counts
		if lang == "rust" && o.counts == nil && !o.short {
			langCounts = append(slices.Clone(counts), rustManyPlugins)
		}
		for _, n := range langCounts {
			dir, err := t.pluginsDir(work, n)
			if err != nil {
				return nil, err
			}
			cases = append(cases, startupCase{lang: lang, n: n, plugins: dir})
		}
		// The call benchmark's servers: one plugin, a cache of their own.
		one, err := t.pluginsDir(work, 1)
		if err != nil {
			return nil, err
		}
		argv, err := serveArgs(mcphost, work, one, filepath.Join(work, "calls-cache-"+lang), "--watch=false")
		if err != nil {
			return nil, err
		}
		callServers = append(callServers, &callServer{lang: lang, argv: argv})
		httpServers = append(httpServers, &httpServer{lang: lang, argv: slices.Concat(argv, []string{"--transport", "http", "--listen", "127.0.0.1:0"})})
	}

	if o.parts["startup"] {
		if rep.Startup, err = runStartup(mcphost, native, work, cases, o.rounds); err != nil {
			return nil, err
		}
	}
	if o.parts["calls"] {
		if o.profile != "" {
			if err := profileCallServers(callServers, o.profile); err != nil {
				return nil, err
			}
		}
		calls := func() (err error) {
			rep.Calls, err = runCalls(callServers, o.rounds, o.calls)
			return err
		}
		if o.pin {
			cpu, err := lastCPU()
			if err != nil {
				return nil, err
			}
			rep.Meta.CallsCPU = &cpu
			err = pinned(cpu, calls)
		} else {
			err = calls()
		}
		if err != nil {
			return nil, err
		}
	}
	if o.parts["telemetry"] {
		t := slices.IndexFunc(templates, func(t *template) bool { return t.lang == "go" })
		if t < 0 {
			return nil, fmt.Errorf("-parts telemetry measures the go template: add it to -langs")
		}
		dir, err := templates[t].pluginsDir(work, 1)
		if err != nil {
			return nil, err
		}
		telemetry := func() (err error) {
			rep.Telemetry, err = runTelemetry(mcphost, work, dir, o.profile, o.rounds, o.calls)
			return err
		}
		if o.pin {
			cpu, err := lastCPU()
			if err != nil {
				return nil, err
			}
			err = pinned(cpu, telemetry)
		} else {
			err = telemetry()
		}
		if err != nil {
			return nil, err
		}
	}
	if o.parts["rename"] {
		if rep.Rename, err = runRename(mcphost, work, templates, o.rounds); err != nil {
			return nil, err
		}
	}
	if o.parts["budget"] {
		n := 50
		if o.short {
			n = 10
		}
		for _, t := range templates {
			if t.ext == ".js" { // its plugins share one module, the engine's
				continue
			}
			dir, err := t.pluginsDir(work, n)
			if err != nil {
				return nil, err
			}
			r, err := runBudget(mcphost, work, t, dir, n)
			if err != nil {
				return nil, err
			}
			rep.Budget = append(rep.Budget, r)
		}
	}
	if o.parts["http"] {
		rep.Meta.HTTPWindow = httpWindow.Seconds()
		if rep.HTTP, err = runHTTP(httpServers, o.rounds, httpWindow); err != nil {
			return nil, err
		}
	}
	rep.Meta.Seconds = time.Since(began).Seconds()
	return rep, nil
}

// machine describes this machine and the mcphost binary.
func machine(mcphost, note string) Meta {
	m := Meta{GoVersion: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH, CPUs: runtime.NumCPU(), Note: note}
	if v, err := exec.Command(mcphost, "version").CombinedOutput(); err == nil { // it prints to stderr
		m.MCPHost, _, _ = strings.Cut(strings.TrimSpace(string(v)), "\n")
	}
	if info, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(info)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(load)); len(f) >= 3 {
			m.LoadAverage = strings.Join(f[:3], " ")
		}
	}
	return m
}

func writeJSON(path string, rep *Report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// progress prints a line of progress to stderr.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}
