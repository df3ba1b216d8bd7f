package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mcphost/mcphost/internal/jsonrpc"
)

// server is a running MCP server over stdio and the client side of its
// pipes: raw JSON-RPC, one request at a time, so that the client costs
// the same whatever the server.
type server struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Reader
	started time.Time
	nextID  int
}

// startServer starts argv with stderr to stderrFile (nil: discarded).
func startServer(argv []string, stderrFile io.Writer) (*server, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = stderrFile
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20), started: time.Now()}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return s, nil
}

// call sends a request and returns the result of its response, skipping
// notifications and requests from the server before it.
func (s *server) call(method string, params any) (json.RawMessage, error) {
	s.nextID++
	id := json.RawMessage(strconv.Itoa(s.nextID))
	if err := s.send(id, method, params); err != nil {
		return nil, err
	}
	for {
		line, err := s.out.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("%s: reading the answer: %w", method, err)
		}
		var m jsonrpc.Message
		if err := json.Unmarshal(line, &m); err != nil {
			return nil, fmt.Errorf("%s: answer %.200q: %w", method, line, err)
		}
		if !m.IsResponse() || string(m.ID) != string(id) {
			continue
		}
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %w", method, m.Error)
		}
		return m.Result, nil
	}
}

// notify sends a notification.
func (s *server) notify(method string) error { return s.send(nil, method, nil) }

func (s *server) send(id json.RawMessage, method string, params any) error {
	m := jsonrpc.Message{JSONRPC: "2.0", ID: id, Method: method}
	if params != nil {
		raw, err := json.Marshal(params)
		if err != nil {
			return err
		}
		m.Params = raw
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_, err = s.in.Write(append(b, '\n'))
	return err
}

// protocolVersion is the MCP revision the benchmark's client speaks.
const protocolVersion = "2025-11-25"

// initializeParams are the params of the client's initialize.
var initializeParams = map[string]any{
	"protocolVersion": protocolVersion,
	"capabilities":    map[string]any{},
	"clientInfo":      map[string]any{"name": "mcphost-bench", "version": "1"},
}

// initialize runs the MCP handshake.
func (s *server) initialize() error {
	if _, err := s.call("initialize", initializeParams); err != nil {
		return err
	}
	return s.notify("notifications/initialized")
}

// listTools returns the names of all tools, following cursors.
func (s *server) listTools() ([]string, error) {
	var names []string
	params := map[string]any{}
	for {
		raw, err := s.call("tools/list", params)
		if err != nil {
			return nil, err
		}
		var page struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, err
		}
		for _, t := range page.Tools {
			names = append(names, t.Name)
		}
		if page.NextCursor == "" {
			return names, nil
		}
		params = map[string]any{"cursor": page.NextCursor}
	}
}

// callTool calls tool with args and fails on a tool error.
func (s *server) callTool(tool string, args map[string]any) error {
	raw, err := s.call("tools/call", map[string]any{"name": tool, "arguments": args})
	if err != nil {
		return err
	}
	return toolResult(tool, raw)
}

// toolResult fails when raw, the result of a tools/call of tool, is not
// a result or is a tool error.
func toolResult(tool string, raw json.RawMessage) error {
	var res struct {
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("%s: %w", tool, err)
	}
	if res.IsError {
		return fmt.Errorf("%s: tool error: %.200s", tool, raw)
	}
	return nil
}

// stop closes stdin and waits for the server to end, killing it after a
// few seconds.
func (s *server) stop() {
	_ = s.in.Close()
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

// memory returns the server's resident memory and its peak (VmRSS, VmHWM
// of /proc/PID/status), in bytes.
func (s *server) memory() (rss, peak int64, err error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, 0, err
	}
	for line := range strings.Lines(string(status)) {
		f := strings.Fields(line)
		if len(f) != 3 || f[2] != "kB" {
			continue
		}
		kib, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = kib << 10
		case "VmHWM:":
			peak = kib << 10
		}
	}
	if rss == 0 || peak == 0 {
		return 0, 0, fmt.Errorf("no VmRSS or VmHWM in /proc/%d/status", s.cmd.Process.Pid)
	}
	return rss, peak, nil
}

// cpu returns the CPU time the server's threads have run, to the
// nanosecond: the sum of the first field of /proc/PID/task/*/schedstat.
// (/proc/PID/stat's utime and stime are counted by sampling at 10 ms
// ticks: over a round of calls, off by a tenth or more.) A thread that
// exits takes its time with it; Go's runtime keeps the threads it starts.
func (s *server) cpu() (time.Duration, error) {
	dir := fmt.Sprintf("/proc/%d/task", s.cmd.Process.Pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var total time.Duration
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, task.Name(), "schedstat"))
		if errors.Is(err, fs.ErrNotExist) {
			continue // the thread exited since the listing
		}
		if err != nil {
			return 0, err
		}
		f := strings.Fields(string(b))
		if len(f) != 3 {
			return 0, fmt.Errorf("%s/%s/schedstat: %q", dir, task.Name(), b)
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s/%s/schedstat: %w", dir, task.Name(), err)
		}
		total += time.Duration(ns)
	}
	return total, nil
}
