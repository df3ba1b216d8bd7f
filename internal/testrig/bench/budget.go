package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mcphost/mcphost/sandbox"
)

// The budget part: round-robin calls over n distinct plugins under a
// memory budget with room for a fifth of them, their compiled code and one
// instance each (issue 25's floor: 50 standard-Go plugins, room for 10).
// Every call past the first fifth finds the budget spent, so the server
// closes idle instances and unloads the plugins called longest ago to make
// room, and builds the called plugin again from the compilation cache.

// budgetShare is the share of the plugins the budget has room for.
const budgetShare = 5

// budgetPasses are the measured passes over every plugin, after one that
// fills the compilation cache.
const budgetPasses = 2

// Limits of the budget part's plugins, written into its config and given
// to sandbox.Engine.Reservation to size the budget.
const (
	budgetMemoryMiB = 64
	budgetMaxOutput = 1 << 20
)

// BudgetResult is the budget part of one language.
type BudgetResult struct {
	Lang    string `json:"lang"`
	Plugins int    `json:"plugins"`
	// Fits is how many plugins the budget has room for: BudgetMiB over
	// what one plugin's code and instance reserve (InstanceMiB + CodeMiB).
	Fits        int     `json:"fits"`
	BudgetMiB   int     `json:"budget_mib"`
	InstanceMiB float64 `json:"instance_mib"`
	CodeMiB     float64 `json:"code_mib"`
	// Calls were made, Failed of them failed (an error or a tool error),
	// and FirstError is the first failure's message.
	Calls      int    `json:"calls"`
	Failed     int    `json:"failed"`
	FirstError string `json:"first_error,omitempty"`
	// MedianMS and P99MS are over the measured calls, each of a plugin
	// that was, in all likelihood, unloaded since its last call.
	MedianMS float64 `json:"median_ms"`
	P99MS    float64 `json:"p99_ms"`
	// PeakRSS is VmHWM at the end, start-up included; RSS is VmRSS then.
	PeakRSS int64 `json:"peak_rss_bytes"`
	RSS     int64 `json:"rss_bytes"`
}

// runBudget measures the budget part of template t with the n plugins of
// folder dir.
func runBudget(mcphost, work string, t *template, dir string, n int) (*BudgetResult, error) {
	instance, code, err := reservation(work, t)
	if err != nil {
		return nil, err
	}
	fits := max(n/budgetShare, 1)
	perPlugin := instance + code
	budget := int((uint64(fits)*perPlugin + perPlugin/2 + 1<<20 - 1) >> 20)
	budget = max(budget, sandbox.MinMemoryBudgetMiB)
	r := &BudgetResult{Lang: t.lang, Plugins: n, Fits: fits, BudgetMiB: budget,
		InstanceMiB: float64(instance) / (1 << 20), CodeMiB: float64(code) / (1 << 20)}

	cache, err := os.MkdirTemp(work, "budget-cache-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(cache)
	cfg := fmt.Sprintf("[server]\ncache_dir = %q\nstartup_wait = \"1h\"\nmemory_budget_mib = %d\n\n[defaults]\nmemory_mib = %d\nmax_output_bytes = %d\n",
		cache, budget, budgetMemoryMiB, budgetMaxOutput)
	path := filepath.Join(work, "mcphost-budget-"+t.lang+".toml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	s, err := startServer([]string{mcphost, "serve", "--plugins", dir, "--config", path, "--watch=false"}, nil)
	if err != nil {
		return nil, err
	}
	defer s.stop()
	if err := s.initialize(); err != nil {
		return nil, err
	}
	tools, err := s.listTools()
	if err != nil {
		return nil, err
	}
	if len(tools) != n {
		return nil, fmt.Errorf("budget, %s: %d tools listed, want %d", t.lang, len(tools), n)
	}
	var wall []float64
	for pass := range budgetPasses + 1 {
		for _, tool := range tools {
			start := time.Now()
			err := s.callTool(tool, greetArgs)
			if pass == 0 {
				continue // fills the compilation cache
			}
			wall = append(wall, ms(time.Since(start)))
			r.Calls++
			if err != nil {
				if r.Failed == 0 {
					r.FirstError = err.Error()
				}
				r.Failed++
			}
		}
	}
	r.MedianMS, r.P99MS = percentile(wall, 50), percentile(wall, 99)
	if r.RSS, r.PeakRSS, err = s.memory(); err != nil {
		return nil, err
	}
	progress("budget: %s ×%d, room for %d (%d MiB; a plugin's code %.0f MiB, an instance %.0f MiB): %d of %d calls failed, median %.0f ms, p99 %.0f ms, peak RSS %s",
		t.lang, n, fits, budget, r.CodeMiB, r.InstanceMiB, r.Failed, r.Calls, r.MedianMS, r.P99MS, mib(r.PeakRSS))
	return r, nil
}

// reservation returns what a plugin of t reserves from a server's memory
// budget with the budget part's limits: an instance, and its code.
func reservation(work string, t *template) (instance, code uint64, err error) {
	cache, err := os.MkdirTemp(work, "reservation-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(cache)
	e, err := sandbox.NewEngine(sandbox.EngineOptions{CacheDir: cache})
	if err != nil {
		return 0, 0, err
	}
	defer e.Close()
	return e.Reservation(context.Background(), t.distinct(1), sandbox.Options{Limits: sandbox.Limits{MemoryMiB: budgetMemoryMiB, MaxOutputBytes: budgetMaxOutput}})
}
