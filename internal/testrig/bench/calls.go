package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// callServer is one server of the call benchmark, started once and
// called in every round.
type callServer struct {
	lang string // a template language, or "native"
	argv []string
	s    *server
}

// CallRound is one round's batch of calls to one server.
type CallRound struct {
	MedianUS     float64 `json:"median_us"`
	CPUUSPerCall float64 `json:"cpu_us_per_call"`
	// WallRatio and CPURatio are MedianUS and CPUUSPerCall over the
	// native server's in the same round.
	WallRatio float64 `json:"wall_ratio"`
	CPURatio  float64 `json:"cpu_ratio"`
}

// CallResult is the sequential stdio tools/call cost of one server.
type CallResult struct {
	Lang          string      `json:"lang"`
	CallsPerRound int         `json:"calls_per_round"`
	Rounds        []CallRound `json:"rounds"`
	// MedianUS and CPUUSPerCall are the medians of the rounds'.
	MedianUS     float64 `json:"median_us"`
	CPUUSPerCall float64 `json:"cpu_us_per_call"`
	// P99US and P999US are over the calls of every round together.
	P99US  float64 `json:"p99_us"`
	P999US float64 `json:"p999_us"`
	// WallRatio and CPURatio are the medians of the rounds' ratios (1
	// for the native server itself): a ratio taken within a round is
	// spared the machine's drift between rounds.
	WallRatio float64 `json:"wall_ratio"`
	CPURatio  float64 `json:"cpu_ratio"`
}

// greetArgs are the arguments of every call.
var greetArgs = map[string]any{"name": "World"}

// warmupCalls are made to each server before the rounds: the first
// creates the plugin's instance, the rest warm the caches and let the
// collectors settle (after 200, the native server's CPU per call still
// fell by a tenth from the first round to the third).
const warmupCalls = 2000

// sliceCalls is how many calls a server gets at a time within a round:
// a round alternates between the servers in slices this long, so that
// a machine's drift within the round (a noisy neighbour, a slower CPU
// for a few seconds) falls on every server alike, not on whichever came
// last.
const sliceCalls = 250

// runCalls starts the servers, warms them, then calls greet perRound
// times on each, for rounds rounds. A round goes over the servers in
// slices of sliceCalls calls, round-robin (the first server changes
// every round).
func runCalls(servers []*callServer, rounds, perRound int) ([]*CallResult, error) {
	for _, cs := range servers {
		s, err := startServer(cs.argv, nil)
		if err != nil {
			return nil, err
		}
		cs.s = s
		defer s.stop()
		if err := s.initialize(); err != nil {
			return nil, fmt.Errorf("%s: %w", cs.lang, err)
		}
		for range warmupCalls {
			if err := s.callTool("greet", greetArgs); err != nil {
				return nil, fmt.Errorf("%s: %w", cs.lang, err)
			}
		}
	}
	results := make([]*CallResult, len(servers))
	all := make([][]float64, len(servers))
	for i, cs := range servers {
		results[i] = &CallResult{Lang: cs.lang, CallsPerRound: perRound}
	}
	for round := range rounds {
		wall := make([][]float64, len(servers))
		cpu := make([]time.Duration, len(servers))
		for done := 0; done < perRound; done += sliceCalls {
			n := min(sliceCalls, perRound-done)
			for k := range servers {
				i := (k + round) % len(servers)
				cs := servers[i]
				before, err := cs.s.cpu()
				if err != nil {
					return nil, err
				}
				for range n {
					t := time.Now()
					if err := cs.s.callTool("greet", greetArgs); err != nil {
						return nil, fmt.Errorf("%s: %w", cs.lang, err)
					}
					wall[i] = append(wall[i], us(time.Since(t)))
				}
				after, err := cs.s.cpu()
				if err != nil {
					return nil, err
				}
				cpu[i] += after - before
			}
		}
		for i, cs := range servers {
			r := CallRound{MedianUS: percentile(wall[i], 50), CPUUSPerCall: us(cpu[i]) / float64(perRound)}
			results[i].Rounds = append(results[i].Rounds, r)
			all[i] = append(all[i], wall[i]...)
			progress("calls, round %d/%d: %s: median %.0f µs, CPU %.0f µs a call", round+1, rounds, cs.lang, r.MedianUS, r.CPUUSPerCall)
		}
	}
	var native *CallResult
	for i, r := range results {
		r.MedianUS = median(r.Rounds, func(c CallRound) float64 { return c.MedianUS })
		r.CPUUSPerCall = median(r.Rounds, func(c CallRound) float64 { return c.CPUUSPerCall })
		r.P99US = percentile(all[i], 99)
		r.P999US = percentile(all[i], 99.9)
		if r.Lang == "native" {
			native = r
		}
	}
	if native != nil {
		for _, r := range results {
			for k := range r.Rounds {
				round, base := &r.Rounds[k], native.Rounds[k]
				round.WallRatio = round.MedianUS / base.MedianUS
				if base.CPUUSPerCall > 0 {
					round.CPURatio = round.CPUUSPerCall / base.CPUUSPerCall
				}
			}
			r.WallRatio = median(r.Rounds, func(c CallRound) float64 { return c.WallRatio })
			r.CPURatio = median(r.Rounds, func(c CallRound) float64 { return c.CPURatio })
		}
	}
	return results, nil
}

// profileCallServers has each server write a CPU profile into dir, as
// calls-LANG.pprof, when it stops.
func profileCallServers(servers []*callServer, dir string) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, cs := range servers {
		flag := "--cpuprofile" // mcphost serve's
		if cs.lang == "native" {
			flag = "-cpuprofile"
		}
		cs.argv = append(cs.argv, flag, filepath.Join(dir, "calls-"+cs.lang+".pprof"))
	}
	return nil
}

// percentile returns the p-th percentile of xs (nearest rank); xs is
// left as it was.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	rank := int(p/100*float64(len(s))+0.999999) - 1
	return s[min(max(rank, 0), len(s)-1)]
}

// median returns the median of f over xs.
func median[T any](xs []T, f func(T) float64) float64 {
	v := make([]float64, len(xs))
	for i, x := range xs {
		v[i] = f(x)
	}
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// mib formats a byte count in MiB.
func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
