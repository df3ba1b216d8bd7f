package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcphost/mcphost/internal/jsonrpc"
)

// httpCallers are the numbers of concurrent callers of the HTTP
// throughput measurement, each with a session of its own.
var httpCallers = []int{1, 16, 64}

// HTTPRound is one round of one server at one number of callers.
type HTTPRound struct {
	CallsPerSec  float64 `json:"calls_per_sec"`
	CPUUSPerCall float64 `json:"cpu_us_per_call"`
}

// HTTPResult is the Streamable HTTP throughput of one server at one number
// of concurrent callers.
type HTTPResult struct {
	Lang    string      `json:"lang"`
	Callers int         `json:"callers"`
	Rounds  []HTTPRound `json:"rounds"`
	// CallsPerSec and CPUUSPerCall are the medians of the rounds'.
	CallsPerSec  float64 `json:"calls_per_sec"`
	CPUUSPerCall float64 `json:"cpu_us_per_call"`
	// Ratio is CallsPerSec over the native server's at as many callers.
	Ratio float64 `json:"ratio"`
}

// urlPattern finds the address a server listens on in its log.
var urlPattern = regexp.MustCompile(`url=(http://\S+)`)

// urlWatcher is a server's stderr: it sends the first url=… it sees.
type urlWatcher struct {
	mu   sync.Mutex
	buf  []byte
	url  chan string
	sent bool
}

func (w *urlWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.sent {
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	if m := urlPattern.FindSubmatch(w.buf); m != nil {
		w.sent = true
		w.url <- string(m[1])
		w.buf = nil
	}
	return len(p), nil
}

// httpServer is a server of the HTTP measurement.
type httpServer struct {
	lang string
	argv []string
	s    *server
	url  string
}

// start starts the server and waits for the address it listens on.
func (h *httpServer) start() error {
	w := &urlWatcher{url: make(chan string, 1)}
	s, err := startServer(h.argv, w)
	if err != nil {
		return err
	}
	h.s = s
	select {
	case h.url = <-w.url:
		return nil
	case <-time.After(2 * time.Minute):
		return fmt.Errorf("%s: no url=… in its log after 2 minutes", h.lang)
	}
}

func (h *httpServer) stop() {
	_ = h.s.cmd.Process.Signal(syscall.SIGTERM)
	h.s.stop()
}

// httpClient is shared by every session: enough idle connections for
// every caller.
var httpClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 256}, Timeout: time.Minute}

// httpSession is one MCP session over Streamable HTTP.
type httpSession struct {
	url, id string
	nextID  atomic.Int64
}

// openSession initializes a session at url.
func openSession(url string) (*httpSession, error) {
	h := &httpSession{url: url}
	if _, err := h.call("initialize", initializeParams); err != nil {
		return nil, err
	}
	if h.id == "" {
		return nil, errors.New("initialize: no Mcp-Session-Id")
	}
	_, err := h.post(jsonrpc.Message{JSONRPC: "2.0", Method: "notifications/initialized"})
	return h, err
}

// close ends the session.
func (h *httpSession) close() {
	req, err := http.NewRequest(http.MethodDelete, h.url, nil)
	if err != nil {
		return
	}
	h.headers(req)
	if resp, err := httpClient.Do(req); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
}

func (h *httpSession) headers(req *http.Request) {
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if h.id != "" {
		req.Header.Set("Mcp-Session-Id", h.id)
		req.Header.Set("MCP-Protocol-Version", protocolVersion)
	}
}

// call sends a request and returns its result.
func (h *httpSession) call(method string, params any) (json.RawMessage, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	id := json.RawMessage(strconv.FormatInt(h.nextID.Add(1), 10))
	m, err := h.post(jsonrpc.Message{JSONRPC: "2.0", ID: id, Method: method, Params: raw})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	if m == nil {
		return nil, fmt.Errorf("%s: no answer", method)
	}
	if m.Error != nil {
		return nil, fmt.Errorf("%s: %w", method, m.Error)
	}
	return m.Result, nil
}

// post sends msg and returns the response to it, read from a JSON body or
// from an event stream; nil for a notification's 202.
func (h *httpSession) post(msg jsonrpc.Message) (*jsonrpc.Message, error) {
	body, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	h.headers(req)
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		h.id = id
	}
	if resp.StatusCode == http.StatusAccepted {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil, nil
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("HTTP %s: %s", resp.Status, b)
	}
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		var m jsonrpc.Message
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			return nil, err
		}
		return &m, nil
	}
	// An event stream: the response is the data of an event whose message
	// answers msg; notifications and priming events come before it.
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:"))
		if !ok || len(bytes.TrimSpace(data)) == 0 {
			continue
		}
		var m jsonrpc.Message
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, err
		}
		if m.IsResponse() && string(m.ID) == string(msg.ID) {
			return &m, nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, errors.New("the event stream ended without the answer")
}

// callGreet calls greet on the session and fails on a tool error.
func (h *httpSession) callGreet() error {
	raw, err := h.call("tools/call", map[string]any{"name": "greet", "arguments": greetArgs})
	if err != nil {
		return err
	}
	return toolResult("greet", raw)
}

// runHTTP measures the throughput of each server at each number of
// callers for window, round-robin over the servers in each round.
func runHTTP(servers []*httpServer, rounds int, window time.Duration) ([]*HTTPResult, error) {
	for _, h := range servers {
		if err := h.start(); err != nil {
			return nil, err
		}
		defer h.stop()
		sess, err := openSession(h.url)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", h.lang, err)
		}
		for range warmupCalls {
			if err := sess.callGreet(); err != nil {
				return nil, fmt.Errorf("%s: %w", h.lang, err)
			}
		}
		sess.close()
	}
	results := map[string]*HTTPResult{}
	var order []*HTTPResult
	for round := range rounds {
		for _, callers := range httpCallers {
			for k := range servers {
				h := servers[(k+round)%len(servers)]
				r, err := throughput(h, callers, window)
				if err != nil {
					return nil, fmt.Errorf("%s, %d callers: %w", h.lang, callers, err)
				}
				key := fmt.Sprint(h.lang, callers)
				if results[key] == nil {
					results[key] = &HTTPResult{Lang: h.lang, Callers: callers}
					order = append(order, results[key])
				}
				results[key].Rounds = append(results[key].Rounds, r)
				progress("HTTP, round %d/%d: %s, %d callers: %.0f calls/s, CPU %.0f µs a call", round+1, rounds, h.lang, callers, r.CallsPerSec, r.CPUUSPerCall)
			}
		}
	}
	for _, r := range order {
		r.CallsPerSec = median(r.Rounds, func(x HTTPRound) float64 { return x.CallsPerSec })
		r.CPUUSPerCall = median(r.Rounds, func(x HTTPRound) float64 { return x.CPUUSPerCall })
	}
	for _, r := range order {
		if n := results[fmt.Sprint("native", r.Callers)]; n != nil && n.CallsPerSec > 0 {
			r.Ratio = r.CallsPerSec / n.CallsPerSec
		}
	}
	return order, nil
}

// throughput opens a session per caller, then has every caller call greet
// over and over for window, and counts the calls answered.
func throughput(h *httpServer, callers int, window time.Duration) (HTTPRound, error) {
	sessions := make([]*httpSession, callers)
	for i := range sessions {
		s, err := openSession(h.url)
		if err != nil {
			return HTTPRound{}, err
		}
		sessions[i] = s
		defer s.close()
	}
	before, err := h.s.cpu()
	if err != nil {
		return HTTPRound{}, err
	}
	var calls atomic.Int64
	errs := make(chan error, callers)
	start := time.Now()
	deadline := start.Add(window)
	var wg sync.WaitGroup
	for _, s := range sessions {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				if err := s.callGreet(); err != nil {
					errs <- err
					return
				}
				calls.Add(1)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	after, err := h.s.cpu()
	if err != nil {
		return HTTPRound{}, err
	}
	close(errs)
	if err := <-errs; err != nil {
		return HTTPRound{}, err
	}
	n := calls.Load()
	if n == 0 {
		return HTTPRound{}, errors.New("no call answered")
	}
	return HTTPRound{CallsPerSec: float64(n) / elapsed.Seconds(), CPUUSPerCall: us(after-before) / float64(n)}, nil
}
