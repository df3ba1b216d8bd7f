package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// writeDoc writes the Markdown document at path from rep, and its charts
// into a folder beside it named after it (docs/performance/*.svg for
// docs/performance.md).
func writeDoc(path string, rep *Report) error {
	chartDir := strings.TrimSuffix(path, filepath.Ext(path))
	if err := os.MkdirAll(chartDir, 0o755); err != nil {
		return err
	}
	charts := map[string]barChart{}
	if len(rep.Startup) > 0 {
		charts["startup-first-list.svg"] = startupChart(rep, "Start to the first answered tools/list (median)", "ms",
			func(s StartupSample) float64 { return s.FirstListMS })
		charts["startup-idle-rss.svg"] = startupChart(rep, "Idle resident memory after the first tools/list (median)", "MiB",
			func(s StartupSample) float64 { return float64(s.IdleRSS) / (1 << 20) })
	}
	if len(rep.Calls) > 0 {
		charts["calls-wall.svg"] = callChart(rep, "tools/call over stdio: wall time per call (median)", "µs",
			func(c *CallResult) float64 { return c.MedianUS })
		charts["calls-cpu.svg"] = callChart(rep, "tools/call over stdio: server CPU per call (median of rounds)", "µs",
			func(c *CallResult) float64 { return c.CPUUSPerCall })
	}
	if len(rep.HTTP) > 0 {
		charts["http-throughput.svg"] = httpChart(rep)
	}
	for name, c := range charts {
		if err := os.WriteFile(filepath.Join(chartDir, name), []byte(c.svg()), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(path, []byte(markdown(rep, filepath.Base(chartDir))), 0o644)
}

// startupLabel names a start-up configuration in tables and charts.
func startupLabel(r *StartupResult) string {
	if r.Lang == "native" {
		return serverName(r.Lang)
	}
	return fmt.Sprintf("%s ×%d %s", r.Lang, r.Plugins, r.Cache)
}

// serverName names the server of lang, a template language or "native",
// in the call tables and charts.
func serverName(lang string) string {
	if lang == "native" {
		return "native (go-sdk)"
	}
	return "mcphost, " + lang
}

// serverColor is the colour of the server of lang in the charts.
func serverColor(lang string) string {
	if lang == "native" {
		return colorNative
	}
	return colorPlugin
}

func startupChart(rep *Report, title, unit string, f func(StartupSample) float64) barChart {
	c := barChart{title: title, unit: unit, legend: [][2]string{
		{colorCold, "empty compilation cache"}, {colorWarm, "warm compilation cache"}, {colorNative, "native go-sdk server"}}}
	for _, r := range rep.Startup {
		color := map[string]string{"cold": colorCold, "warm": colorWarm}[r.Cache]
		if color == "" {
			color = colorNative
		}
		c.bars = append(c.bars, bar{label: startupLabel(r), value: f(r.Median), color: color})
	}
	return c
}

func callChart(rep *Report, title, unit string, f func(*CallResult) float64) barChart {
	c := barChart{title: title, unit: unit, legend: [][2]string{
		{colorPlugin, "mcphost, the greet plugin"}, {colorNative, "native go-sdk server"}}}
	for _, r := range rep.Calls {
		c.bars = append(c.bars, bar{label: serverName(r.Lang), value: f(r), color: serverColor(r.Lang)})
	}
	return c
}

func httpChart(rep *Report) barChart {
	c := barChart{title: "Streamable HTTP: calls per second (median of rounds)", unit: "calls/s", legend: [][2]string{
		{colorPlugin, "mcphost, the greet plugin"}, {colorNative, "native go-sdk server"}}}
	for _, r := range rep.HTTP {
		c.bars = append(c.bars, bar{label: fmt.Sprintf("%s, %d callers", serverName(r.Lang), r.Callers), value: r.CallsPerSec, color: serverColor(r.Lang)})
	}
	return c
}

// markdown is the document: how to run the benchmark, what it measures,
// where these numbers were taken, then the tables and the charts.
func markdown(rep *Report, chartDir string) string {
	var b strings.Builder
	m := rep.Meta
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("# Performance")
	p("")
	p("<!-- Written by internal/testrig/bench (make bench): edits are lost when it runs again. -->")
	p("")
	p("`make bench` measures mcphost against a native MCP server and rewrites this page")
	p("and its charts (%s/*.svg) from the results, which it keeps in", chartDir)
	p("`build/bench/bench.json`. `make bench-short` is its quick version (start-up")
	p("with 1 and 10 plugins, 1,000 calls a round; a few minutes on 2 cores).")
	p("`go run ./internal/testrig/bench -from build/bench/bench.json` rewrites the page")
	p("from a JSON file without measuring; `-help` lists the options: rounds, calls,")
	p("numbers of plugins (`-plugins 1,50,500`), templates (`-langs rust`), parts")
	p("(`-parts startup,calls`), a note about the machine, CPU profiles of the")
	p("call benchmark's servers (`-profile DIR`); `make bench BENCH_FLAGS=…`")
	p("passes them. `make bench-check` measures only the calls, and fails when a")
	p("plugin's CPU per call, as a ratio to the native server's, is over its")
	p("ceiling: issue 25's stretch target plus 25%% (internal/testrig/bench/ceilings.go).")
	p("TinyGo and Rust are measured when their")
	p("toolchains are installed (scripts/setup-tinygo.sh, scripts/setup-rust.sh), and")
	p("skipped loudly otherwise, except under `CI=true`, where that fails the run.")
	p("")
	p("What runs: the greet plugin of each `mcphost new` template (Go, TinyGo, Rust,")
	p("JavaScript), built with `mcphost build`, its log call and the grant it needs")
	p("taken out; *extism*, a third-party plugin with the same tool, written as")
	p("hyper-mcp (v2) plugins are, against the official Extism Go PDK, with no")
	p("mcphost manifest or code (internal/testrig/bench/extism), built with the")
	p("standard Go toolchain; each served by `mcphost serve` over stdio. The")
	p("reference is the same tool in a server written with the official Go SDK")
	p("(internal/testrig/bench/native), built by the benchmark. N plugins are N")
	p("*distinct* copies (a custom section, or a comment, holding the copy's index),")
	p("so that none shares compiled code. The client is the benchmark itself, raw")
	p("JSON-RPC over the server's stdin and stdout, the same for every server.")
	p("Every measurement runs round-robin over the configurations, %d rounds, and", m.Rounds)
	p("the tables give the median of the rounds.")
	p("")
	p("- **Start-up**: process start to the answer of the first `tools/list`, after")
	p("  `initialize` and `notifications/initialized` (`startup_wait` makes")
	p("  initialize wait for every plugin, so the list is whole); then, after %s", settle)
	p("  idle, the resident memory (VmRSS) and its peak (VmHWM), then the time of a")
	p("  first `tools/call` (the plugin's build and first instance, when not made")
	p("  yet). *Cold*: an empty compilation cache; *warm*: the cache the cold start")
	p("  of the same round filled.")
	p("- **Calls**: sequential `tools/call greet` over stdio, %d a round to each", m.CallsPerRound)
	p("  server, after %d calls to warm it: wall time per call (the median of the", warmupCalls)
	p("  rounds' medians; p99 and p99.9 over the calls of all rounds) and the")
	p("  server's CPU time per call (the time its threads ran, to the nanosecond,")
	p("  from /proc/PID/task/*/schedstat), with their ratios to the native")
	p("  server's: each round's figure over the native server's in that round,")
	p("  and the median of the rounds' ratios.")
	if m.CallsCPU != nil {
		p("  The call benchmark, client and servers, ran on CPU %d alone (-pin), where", *m.CallsCPU)
		p("  a server's CPU per call is steady to a few per cent from round to round.")
	}
	p("")
	p("## This run")
	p("")
	p("| | |")
	p("|---|---|")
	p("| date | %s |", m.Date.Format("2006-01-02 15:04 UTC"))
	p("| mcphost | %s |", m.MCPHost)
	p("| Go | %s, %s |", m.GoVersion, m.OS)
	p("| CPU | %s, %d CPUs; load average at the start %s |", m.CPU, m.CPUs, m.LoadAverage)
	kind := "full (make bench)"
	if m.Short {
		kind = "short (make bench-short)"
	}
	p("| run | %s: %d rounds, plugins %s, %d calls a round; %.0f s |", kind, m.Rounds, joinInts(m.Plugins), m.CallsPerRound, m.Seconds)
	if m.Note != "" {
		p("| note | %s |", m.Note)
	}
	for _, s := range rep.Skipped {
		p("| skipped | %s |", strings.Trim(s, "* "))
	}
	if len(rep.Startup) > 0 {
		p("")
		p("## Start-up with many installed plugins")
		p("")
		p("| configuration | first tools/list | rounds (min–max) | idle RSS | peak RSS | then the first call |")
		p("|---|--:|--:|--:|--:|--:|")
		for _, r := range rep.Startup {
			lo, hi := spread(r.Rounds, func(s StartupSample) float64 { return s.FirstListMS })
			p("| %s | %s | %s–%s | %s | %s | %s |", startupLabel(r), millis(r.Median.FirstListMS), millis(lo), millis(hi), mib(r.Median.IdleRSS), mib(r.Median.PeakRSS), millis(r.Median.FirstCallMS))
		}
		p("")
		p("![start to the first tools/list](%s/startup-first-list.svg)", chartDir)
		p("")
		p("![idle resident memory](%s/startup-idle-rss.svg)", chartDir)
	}
	if len(rep.Calls) > 0 {
		p("")
		p("## Calls over stdio")
		p("")
		p("| server | median | p99 | p99.9 | CPU per call | wall ÷ native | CPU ÷ native |")
		p("|---|--:|--:|--:|--:|--:|--:|")
		for _, r := range rep.Calls {
			name := serverName(r.Lang)
			p("| %s | %.0f µs | %.0f µs | %.0f µs | %.0f µs | %.2f× | %.2f× |", name, r.MedianUS, r.P99US, r.P999US, r.CPUUSPerCall, r.WallRatio, r.CPURatio)
		}
		p("")
		p("![wall time per call](%s/calls-wall.svg)", chartDir)
		p("")
		p("![server CPU per call](%s/calls-cpu.svg)", chartDir)
	}
	if len(rep.Rename) > 0 {
		p("")
		p("## A plugin renamed into the watched folder")
		p("")
		p("A distinct copy of the plugin, written beforehand and its compiled code")
		p("cached, is renamed into the folder of a server serving one plugin with")
		p("`--watch`; the time is from the rename to `notifications/tools/list_changed`")
		p("at the client (then the client lists two tools, and the copy is moved out).")
		p("")
		p("| plugin | list_changed after | rounds (min–max) |")
		p("|---|--:|--:|")
		for _, r := range rep.Rename {
			lo, hi := spread(r.RoundsMS, func(v float64) float64 { return v })
			p("| %s | %s | %s–%s |", r.Lang, millis(r.MedianMS), millis(lo), millis(hi))
		}
	}
	if len(rep.Budget) > 0 {
		p("")
		p("## Many plugins in a small memory budget")
		p("")
		p("`memory_budget_mib` has room for a fifth of the plugins: for their compiled")
		p("code and one instance each (`memory_mib = %d`, `max_output_bytes = %d`),", budgetMemoryMiB, budgetMaxOutput)
		p("as `sandbox.Engine.Reservation` counts them. After a pass over every")
		p("plugin that fills the compilation cache, %d passes of one call to each,", budgetPasses)
		p("round robin: each call finds the budget spent, so idle instances are")
		p("closed and the plugins called longest ago unloaded to make room, and the")
		p("called plugin is built again from the cache.")
		p("")
		p("| plugins | room for | budget | code + instance | calls failed | median call | p99 | peak RSS |")
		p("|---|--:|--:|--:|--:|--:|--:|--:|")
		for _, r := range rep.Budget {
			p("| %d × %s | %d | %d MiB | %.0f + %.0f MiB | %d of %d | %s | %s | %s |", r.Plugins, r.Lang, r.Fits, r.BudgetMiB, r.CodeMiB, r.InstanceMiB, r.Failed, r.Calls, millis(r.MedianMS), millis(r.P99MS), mib(r.PeakRSS))
		}
		for _, r := range rep.Budget {
			if r.FirstError != "" {
				p("")
				p("First failure (%s): `%s`", r.Lang, r.FirstError)
			}
		}
	}
	if len(rep.HTTP) == 0 {
		return b.String()
	}
	p("")
	p("## Streamable HTTP throughput")
	p("")
	p("Each caller opens a session of its own, then calls greet over and over for")
	p("%.0f s; the server's CPU time is read before and after.", m.HTTPWindow)
	p("")
	p("| server | callers | calls/s | CPU per call | throughput ÷ native |")
	p("|---|--:|--:|--:|--:|")
	for _, r := range rep.HTTP {
		name := serverName(r.Lang)
		p("| %s | %d | %.0f | %.0f µs | %.2f× |", name, r.Callers, r.CallsPerSec, r.CPUUSPerCall, r.Ratio)
	}
	p("")
	p("![calls per second](%s/http-throughput.svg)", chartDir)
	return b.String()
}

// spread returns the smallest and the largest of f over xs.
func spread[T any](xs []T, f func(T) float64) (lo, hi float64) {
	for i, x := range xs {
		v := f(x)
		if i == 0 || v < lo {
			lo = v
		}
		if i == 0 || v > hi {
			hi = v
		}
	}
	return lo, hi
}

// millis formats milliseconds, with a tenth under 10 ms, as seconds from
// 10 s on.
func millis(v float64) string {
	switch {
	case v >= 10000:
		return fmt.Sprintf("%.1f s", v/1000)
	case v < 10:
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.0f ms", v)
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, " and ")
}
