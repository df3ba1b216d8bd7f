package redistest

import (
	"bufio"
	"net"
	"strings"
	"testing"
)

// TestStartedRedisNeedsItsUserAndKeepsDataAcrossARestart checks the
// harness: a command without a login is refused, mcphost's user may not
// run a command mcphost does not, and a key set before Restart is there
// after it.
func TestStartedRedisNeedsItsUserAndKeepsDataAcrossARestart(t *testing.T) {
	s := Start(t)
	conn, err := net.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := roundTrip(conn, bufio.NewReader(conn), "GET", "k"); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Errorf("GET without logging in: got %v, want NOAUTH", err)
	}
	r := bufio.NewReader(conn)
	if _, err := roundTrip(conn, r, "AUTH", s.User, s.Password); err != nil {
		t.Fatal(err)
	}
	if _, err := roundTrip(conn, r, "KEYS", "*"); err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Errorf("KEYS as mcphost's user: got %v, want NOPERM: the user may run only %s", err, MCPHostCommands)
	}
	if got, err := s.Do("SET", "k", "v"); err != nil || got != "OK" {
		t.Fatalf("SET: %q, %v", got, err)
	}
	s.Restart()
	if got, err := s.Do("GET", "k"); err != nil || got != "v" {
		t.Errorf("GET after a restart: %q, %v; want v", got, err)
	}
}
