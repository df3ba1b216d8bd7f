package host

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzSession feeds a session mutated JSON-RPC, a line a message, seeded
// with the client side of every transcript in testdata/transcripts. Whatever
// comes in, the session must not panic or wedge: every request it started
// ends within a bound, and everything it sends is one JSON-RPC 2.0 message
// (or batch). make test runs it for a bounded time under the race detector.
func FuzzSession(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "transcripts", "*.txtar"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no transcripts to seed from: %v", err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		tr, err := parseTranscript(data)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(strings.Join(tr.in, "\n"))
	}
	catalog := transcriptCatalog()
	f.Fuzz(func(t *testing.T, input string) {
		srv := NewServer(Options{Name: "fuzz", Version: "1", PageSize: 2}, catalog)
		out := &checkedOutbound{t: t}
		sess := srv.NewSession(out)
		for line := range strings.Lines(input) {
			sess.Handle(context.Background(), []byte(line), out)
		}
		srv.listeners.end(sess.conn) // as the transports do at the end of input: subscriptions never end on their own
		done := make(chan struct{})
		go func() { sess.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("requests still running 5s after the input ended:\n%s", input)
		}
		sess.Close()
	})
}

// checkedOutbound fails the test on anything sent that is not a JSON-RPC
// 2.0 message or a batch of them.
type checkedOutbound struct{ t *testing.T }

func (c *checkedOutbound) Send(msg []byte) error {
	var one struct {
		JSONRPC string `json:"jsonrpc"`
	}
	if json.Unmarshal(msg, &one) == nil && one.JSONRPC == "2.0" {
		return nil
	}
	var batch []struct {
		JSONRPC string `json:"jsonrpc"`
	}
	if err := json.Unmarshal(msg, &batch); err != nil || len(batch) == 0 {
		c.t.Errorf("sent something that is not a JSON-RPC message: %q", msg)
		return nil
	}
	for _, m := range batch {
		if m.JSONRPC != "2.0" {
			c.t.Errorf("sent a batch with a message that is not JSON-RPC 2.0: %q", msg)
		}
	}
	return nil
}
