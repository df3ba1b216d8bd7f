// Package haproxytest starts a real load balancer for a test: Debian's
// haproxy (2.6) on a loopback port, in HTTP mode with X-Forwarded-For,
// spreading requests round robin over its backends without stickiness.
package haproxytest

import (
	"encoding/csv"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/poll"
	"github.com/mcphost/mcphost/internal/testrig/testenv"
)

// Proxy is a haproxy a test started.
type Proxy struct {
	// URL is its base URL, "http://127.0.0.1:port".
	URL string
	out *os.File // what it wrote: warnings, and with Options.Log its log
}

// Options configure Start.
type Options struct {
	// Check is the path haproxy asks each backend every 200 ms, taking it
	// out while it answers other than 2xx or 3xx (or not at all), and back
	// after two good answers; "" for no health check.
	Check string
	// Log makes haproxy log each request in its HTTP log format (client,
	// backend/server, timers, status, termination state, the captured
	// header in braces, request line), which Log returns.
	Log bool
	// LogHeader is a request header whose value each log line carries.
	LogHeader string
}

// Start runs haproxy in front of backends (host:port each) until the test
// ends. Without haproxy it skips the test, unless CI is set: then it fails
// it (scripts/setup-haproxy.sh installs it).
func Start(t testing.TB, opts Options, backends ...string) *Proxy {
	t.Helper()
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		testenv.Missing(t, "haproxy is not installed (scripts/setup-haproxy.sh installs it)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	front := ln.Addr().String()
	ln.Close()
	var servers strings.Builder
	check := ""
	if opts.Check != "" {
		fmt.Fprintf(&servers, "\toption httpchk GET %s\n", opts.Check)
		check = " check inter 200ms fall 1 rise 2"
	}
	for i, b := range backends {
		fmt.Fprintf(&servers, "\tserver r%d %s%s\n", i, b, check)
	}
	logging, capture := "", ""
	if opts.Log {
		logging = "\tlog stdout format raw local0 info\n\toption httplog\n"
	}
	if opts.LogHeader != "" {
		capture = fmt.Sprintf("\tcapture request header %s len 64\n", opts.LogHeader)
	}
	cfg := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, `global
	maxconn 1024
defaults
%s	mode http
	option forwardfor
	retries 3
	option redispatch 1
	timeout connect 5s
	timeout client 60s
	timeout server 60s
frontend mcp
	bind %s
	stats enable
	stats uri /haproxy-stats
%s	default_backend mcphost
backend mcphost
	balance roundrobin
%s`, logging, front, capture, servers.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	// A file, not a pipe: haproxy drops a log line that it cannot write
	// at once, as into a full pipe.
	out, err := os.Create(filepath.Join(t.TempDir(), "haproxy.out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-db", "-f", cfg)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("haproxy said:\n%s", readAll(out))
		}
	})
	if !poll.Within(10*time.Second, func() bool {
		c, err := net.Dial("tcp", front)
		if err == nil {
			c.Close()
		}
		return err == nil
	}) {
		t.Fatalf("haproxy does not listen on %s:\n%s", front, readAll(out))
	}
	return &Proxy{URL: "http://" + front, out: out}
}

// Log returns what haproxy wrote so far: with Options.Log, a line per
// request it answered.
func (p *Proxy) Log() string { return readAll(p.out) }

// readAll returns what f holds.
func readAll(f *os.File) string {
	b, _ := os.ReadFile(f.Name())
	return string(b)
}

// Up returns how many of the proxy's backends its health checks find up,
// from its statistics (CSV): up, and the last check passed (haproxy counts
// a server up before its first check).
func (p *Proxy) Up(t testing.TB) int {
	t.Helper()
	resp, err := http.Get(p.URL + "/haproxy-stats;csv")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rows, err := csv.NewReader(resp.Body).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("haproxy's statistics: %v", err)
	}
	status, check := slices.Index(rows[0], "status"), slices.Index(rows[0], "check_status")
	if status < 0 || check < 0 {
		t.Fatalf("haproxy's statistics have no status or check_status: %v", rows[0])
	}
	up := 0
	for _, row := range rows[1:] {
		if row[0] == "mcphost" && row[1] != "BACKEND" && row[status] == "UP" && row[check] == "L7OK" {
			up++
		}
	}
	return up
}
