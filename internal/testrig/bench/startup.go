package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// settle is how long a server idles after its first tools/list before its
// resident memory is read: its heap settles, an event it does not announce.
const settle = time.Second

// startupCase is one start-up configuration: n distinct plugins of one
// language (or the native server, lang "native"), cold or warm cache.
type startupCase struct {
	lang    string
	n       int
	plugins string // the plugins folder
}

// StartupSample is one measured start.
type StartupSample struct {
	// FirstListMS is process start to the answer of the first tools/list
	// (after initialize and initialized).
	FirstListMS float64 `json:"first_list_ms"`
	// IdleRSS is VmRSS after the list and a settle; PeakRSS is VmHWM.
	IdleRSS int64 `json:"idle_rss_bytes"`
	PeakRSS int64 `json:"peak_rss_bytes"`
	// FirstCallMS is the first tools/call of greet, made after the memory
	// was read: for a plugin not instantiated yet, its build (from the
	// compilation cache when warm) and its first instance.
	FirstCallMS float64 `json:"first_call_ms"`
}

// StartupResult is the start-up of one configuration over the rounds.
type StartupResult struct {
	Lang    string `json:"lang"`
	Plugins int    `json:"plugins"`
	// Cache is "cold" (an empty compilation cache), "warm" (the cache the
	// cold start of the same round filled) or "none" (the native server).
	Cache  string          `json:"cache"`
	Rounds []StartupSample `json:"rounds"`
	// Median is the median of the rounds, field by field.
	Median StartupSample `json:"median"`
}

// measureStart starts argv, runs initialize and tools/list, checks that
// the list has want tools, reads the memory after a settle, then times a
// first call of greet.
func measureStart(argv []string, want int) (StartupSample, error) {
	s, err := startServer(argv, nil)
	if err != nil {
		return StartupSample{}, err
	}
	defer s.stop()
	if err := s.initialize(); err != nil {
		return StartupSample{}, err
	}
	tools, err := s.listTools()
	if err != nil {
		return StartupSample{}, err
	}
	wall := time.Since(s.started)
	if len(tools) != want {
		return StartupSample{}, fmt.Errorf("%s: %d tools listed, want %d", argv[0], len(tools), want)
	}
	time.Sleep(settle) // kept: see settle
	rss, peak, err := s.memory()
	if err != nil {
		return StartupSample{}, err
	}
	called := time.Now()
	if err := s.callTool("greet", greetArgs); err != nil {
		return StartupSample{}, err
	}
	return StartupSample{FirstListMS: ms(wall), IdleRSS: rss, PeakRSS: peak, FirstCallMS: ms(time.Since(called))}, nil
}

// serveArgs is the command line of mcphost serve over stdio of the
// plugins folder dir, with flags after, and a config (written into work)
// whose compilation cache is cache and which waits for every plugin before
// it answers initialize, so that the first list is whole.
func serveArgs(mcphost, work, dir, cache string, flags ...string) ([]string, error) {
	return serveArgsWith(mcphost, work, dir, cache, "", flags...)
}

// serveArgsWith is serveArgs with more of the config (its other tables)
// after [server].
func serveArgsWith(mcphost, work, dir, cache, more string, flags ...string) ([]string, error) {
	cfg := fmt.Sprintf("[server]\ncache_dir = %q\nstartup_wait = \"1h\"\n", cache) + more
	path := filepath.Join(work, "mcphost-"+filepath.Base(cache)+".toml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	return append([]string{mcphost, "serve", "--plugins", dir, "--config", path}, flags...), nil
}

// runStartup measures the cases, round-robin: in each round, every case
// starts cold on a new cache, then warm on the cache that start filled,
// and the native server starts once.
func runStartup(mcphost, native, work string, cases []startupCase, rounds int) ([]*StartupResult, error) {
	results := map[string]*StartupResult{}
	var order []*StartupResult
	add := func(lang string, n int, cache string, s StartupSample) {
		key := fmt.Sprint(lang, n, cache)
		r := results[key]
		if r == nil {
			r = &StartupResult{Lang: lang, Plugins: n, Cache: cache}
			results[key] = r
			order = append(order, r)
		}
		r.Rounds = append(r.Rounds, s)
	}
	for round := 1; round <= rounds; round++ {
		s, err := measureStart([]string{native}, 1)
		if err != nil {
			return nil, fmt.Errorf("native: %w", err)
		}
		add("native", 1, "none", s)
		progress("start-up, round %d/%d: native %.0f ms", round, rounds, s.FirstListMS)
		for _, c := range cases {
			cache, err := os.MkdirTemp(work, "cache-")
			if err != nil {
				return nil, err
			}
			argv, err := serveArgs(mcphost, work, c.plugins, cache, "--watch=false")
			if err != nil {
				return nil, err
			}
			for _, temp := range []string{"cold", "warm"} {
				s, err := measureStart(argv, c.n)
				if err != nil {
					return nil, fmt.Errorf("%s, %d plugins, %s cache: %w", c.lang, c.n, temp, err)
				}
				add(c.lang, c.n, temp, s)
				progress("start-up, round %d/%d: %s ×%d %s: first list %.0f ms, idle RSS %s, peak %s, first call %.0f ms",
					round, rounds, c.lang, c.n, temp, s.FirstListMS, mib(s.IdleRSS), mib(s.PeakRSS), s.FirstCallMS)
			}
			if err := os.RemoveAll(cache); err != nil {
				return nil, err
			}
		}
	}
	for _, r := range order {
		r.Median = StartupSample{
			FirstListMS: median(r.Rounds, func(s StartupSample) float64 { return s.FirstListMS }),
			IdleRSS:     int64(median(r.Rounds, func(s StartupSample) float64 { return float64(s.IdleRSS) })),
			PeakRSS:     int64(median(r.Rounds, func(s StartupSample) float64 { return float64(s.PeakRSS) })),
			FirstCallMS: median(r.Rounds, func(s StartupSample) float64 { return s.FirstCallMS }),
		}
	}
	return order, nil
}
