package mcphttp

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/testrig/poll"
)

// clientFrom returns an HTTP client whose connections come from the
// loopback address ip (any 127.0.0.0/8 address is the local host on Linux).
func clientFrom(ip string) *http.Client {
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext, MaxIdleConnsPerHost: 64}}
}

// initializeFrom sends an initialize from client, with X-Forwarded-For
// values (none when empty), and returns the status.
func initializeFrom(t *testing.T, client *http.Client, url string, forwardedFor ...string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for _, v := range forwardedFor {
		req.Header.Add("X-Forwarded-For", v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestAnInitializeFloodDoesNotLockOutOtherClients: one client address
// that opens session after session, never finishing their initialization,
// reaches its own cap, not the server's; and sessions that never finish
// initializing end within seconds, so a newcomer is not refused for long.
func TestAnInitializeFloodDoesNotLockOutOtherClients(t *testing.T) {
	ts := httptest.NewUnstartedServer(nil)
	srv := host.NewServer(host.Options{Name: "test", Version: "1"}, nil)
	h := NewHandler(srv, ts.Listener.Addr().String(), Options{InitTimeout: 2 * time.Second})
	ts.Config.Handler = h
	ts.Start()
	t.Cleanup(func() { h.Close(); ts.Close() })

	flooder := clientFrom("127.0.0.2")
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1100 / 8 {
				code := initializeFrom(t, flooder, ts.URL)
				mu.Lock()
				codes[code]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if codes[http.StatusServiceUnavailable] == 0 {
		t.Errorf("1,100 sessions from one address were all accepted: %v", codes)
	}
	start := time.Now()
	if code := initializeFrom(t, clientFrom("127.0.0.3"), ts.URL); code != http.StatusOK || time.Since(start) > time.Second {
		t.Fatalf("a client on another address: %d after %v", code, time.Since(start))
	}
	// Sessions that never sent notifications/initialized end soon.
	poll.Until(t, 5*time.Second, "the sessions that never finished initializing end", func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return len(h.sessions) == 0
	})
	if code := initializeFrom(t, flooder, ts.URL); code != http.StatusOK {
		t.Fatalf("the flooding address, once its sessions ended: %d", code)
	}
}
