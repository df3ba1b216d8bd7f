package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mcphost/mcphost/internal/jsonrpc"
)

// RenameResult is how long a client waits for notifications/tools/list_changed
// after a plugin file is renamed into the watched plugins folder of one
// language's server, the plugin's compiled code already cached.
type RenameResult struct {
	Lang     string    `json:"lang"`
	RoundsMS []float64 `json:"rounds_ms"`
	MedianMS float64   `json:"median_ms"`
}

// waitNotification reads the server's messages until a notification of
// method, and fails after timeout.
func (s *server) waitNotification(method string, timeout time.Duration) error {
	kill := time.AfterFunc(timeout, func() { _ = s.cmd.Process.Kill() })
	defer kill.Stop()
	for {
		line, err := s.out.ReadBytes('\n')
		if err != nil {
			return fmt.Errorf("waiting for %s (%v at most): %w", method, timeout, err)
		}
		var m jsonrpc.Message
		if err := json.Unmarshal(line, &m); err != nil {
			return fmt.Errorf("message %.200q: %w", line, err)
		}
		if m.IsNotification() && m.Method == method {
			return nil
		}
	}
}

// runRename measures, for each template, rounds renames of a distinct
// copy into the folder a watching server serves (cases holds each
// template's 1-plugin folder), each followed by list_changed at the
// client; the copy is moved out again between rounds (and that
// list_changed awaited too). A start of the same cache on a folder
// holding the copy compiles it first.
func runRename(mcphost, work string, templates []*template, rounds int) ([]*RenameResult, error) {
	var results []*RenameResult
	for _, t := range templates {
		r, err := renameOne(mcphost, work, t, rounds)
		if err != nil {
			return nil, fmt.Errorf("rename, %s: %w", t.lang, err)
		}
		results = append(results, r)
	}
	return results, nil
}

func renameOne(mcphost, work string, t *template, rounds int) (*RenameResult, error) {
	served, err := t.pluginsDir(filepath.Join(work, "rename-served"), 1)
	if err != nil {
		return nil, err
	}
	// The copy to rename in is copy 2, its compiled code cached by a start
	// on a folder of copies 1 and 2.
	both, err := t.pluginsDir(filepath.Join(work, "rename-both"), 2)
	if err != nil {
		return nil, err
	}
	cache := filepath.Join(work, "rename-cache-"+t.lang)
	warm, err := serveArgs(mcphost, work, both, cache, "--watch=false")
	if err != nil {
		return nil, err
	}
	if _, err := measureStart(warm, 2); err != nil {
		return nil, err
	}
	outside := filepath.Join(both, "greet2"+t.ext)
	inside := filepath.Join(served, "greet2"+t.ext)
	argv, err := serveArgs(mcphost, work, served, cache)
	if err != nil {
		return nil, err
	}
	s, err := startServer(argv, nil)
	if err != nil {
		return nil, err
	}
	defer s.stop()
	if err := s.initialize(); err != nil {
		return nil, err
	}
	if _, err := s.listTools(); err != nil {
		return nil, err
	}
	r := &RenameResult{Lang: t.lang}
	for round := range rounds {
		start := time.Now()
		if err := os.Rename(outside, inside); err != nil {
			return nil, err
		}
		if err := s.waitNotification("notifications/tools/list_changed", time.Minute); err != nil {
			return nil, err
		}
		r.RoundsMS = append(r.RoundsMS, ms(time.Since(start)))
		progress("rename, round %d/%d: %s: list_changed after %.0f ms", round+1, rounds, t.lang, r.RoundsMS[round])
		if err := expectTools(s, 2); err != nil {
			return nil, err
		}
		if err := os.Rename(inside, outside); err != nil {
			return nil, err
		}
		if err := s.waitNotification("notifications/tools/list_changed", time.Minute); err != nil {
			return nil, err
		}
		if err := expectTools(s, 1); err != nil {
			return nil, err
		}
	}
	r.MedianMS = median(r.RoundsMS, func(v float64) float64 { return v })
	return r, nil
}

// expectTools lists the tools of s and fails unless there are n.
func expectTools(s *server, n int) error {
	tools, err := s.listTools()
	if err == nil && len(tools) != n {
		err = fmt.Errorf("%d tools listed after list_changed, want %d: %v", len(tools), n, tools)
	}
	return err
}
