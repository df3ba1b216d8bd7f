package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
)

// records parses the JSON lines of b.
func records(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("a record is not JSON: %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// A call record says when, who, at which version, which plugin and item,
// how it ended and how long its plugin call waited and ran; requests that
// reach no plugin's item (a listing) are not recorded; a denial is.
func TestRecordsSayWhoCalledWhatAndHowItEnded(t *testing.T) {
	var buf bytes.Buffer
	tr := newTrail(&buf, nil)
	tr.Served(host.Operation{Method: "tools/list", Subject: "alice"})
	tr.Served(host.Operation{Method: "tools/call", Tool: "hash", Subject: "alice", Client: "claude", Session: "8b24f1a166ac8c39",
		ProtocolVersion: "2025-11-25", Transport: host.TransportHTTP, Plugin: "tools", PluginOutcome: host.OutcomeOK,
		Duration: 3 * time.Millisecond, Wait: 250 * time.Microsecond, Run: 2 * time.Millisecond, TraceID: "0af7651916cd43dd8448eb211c80319c"})
	tr.Served(host.Operation{Method: "tools/call", Tool: "spin", Plugin: "hostile", PluginOutcome: "timeout", ToolError: true})
	tr.Served(host.Operation{Method: "prompts/get", Prompt: "nope", ErrorCode: host.CodeInvalidParams})
	tr.Denied(host.Denial{Reason: host.DeniedEgress, Detail: "an HTTP request that no allowed_hosts entry of plugin attacker grants",
		Method: "tools/call", Plugin: "attacker", Subject: "bob", Session: "1234", ProtocolVersion: "2026-07-28"})
	recs := records(t, buf.Bytes())
	if len(recs) != 4 {
		t.Fatalf("%d records, want 4 (three calls, one denial): %v", len(recs), recs)
	}
	want := map[string]any{
		"msg": "call", "method": "tools/call", "subject": "alice", "client": "claude", "session": "8b24f1a166ac8c39",
		"era": "2025-11-25", "transport": "http", "plugin": "tools", "item": "hash", "outcome": "ok",
		"duration_ms": 3.0, "queue_ms": 0.25, "run_ms": 2.0, "trace_id": "0af7651916cd43dd8448eb211c80319c",
	}
	for k, v := range want {
		if recs[0][k] != v {
			t.Errorf("call record: %s = %v, want %v (%v)", k, recs[0][k], v, recs[0])
		}
	}
	if _, err := time.Parse(time.RFC3339Nano, fmt.Sprint(recs[0]["time"])); err != nil {
		t.Errorf("call record: time %v: %v", recs[0]["time"], err)
	}
	if _, ok := recs[0]["arguments"]; ok {
		t.Error("a call record carries arguments its plugin does not audit")
	}
	if recs[1]["outcome"] != "timeout" || recs[2]["outcome"] != "error" || recs[2]["error_code"] != float64(host.CodeInvalidParams) {
		t.Errorf("outcomes: %v, %v; want timeout, then error -32602", recs[1], recs[2])
	}
	if d := recs[3]; d["msg"] != "denied" || d["reason"] != "egress" || d["plugin"] != "attacker" || d["subject"] != "bob" || d["era"] != "2026-07-28" {
		t.Errorf("denial record: %v", d)
	}
}

// A plugin that audits arguments has them in its call records, as the
// engine gave them (redacted already).
func TestArgumentsAreRecordedOnlyWhenGiven(t *testing.T) {
	var buf bytes.Buffer
	newTrail(&buf, nil).Served(host.Operation{Method: "tools/call", Tool: "hash", Arguments: json.RawMessage(`{"text":"[REDACTED]"}`)})
	recs := records(t, buf.Bytes())
	if args, _ := recs[0]["arguments"].(map[string]any); args["text"] != "[REDACTED]" {
		t.Errorf("arguments %v", recs[0]["arguments"])
	}
}

// The file turns over before a record would take it past its size: the
// newest records in the file, older ones in file.1, file.2, at most keep
// old files; no record is split; the files are the owner's only.
func TestTheFileTurnsOverBySize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	f, err := openRotating(path, 400, 2)
	if err != nil {
		t.Fatal(err)
	}
	tr := newTrail(f, f)
	for i := range 20 {
		tr.Served(host.Operation{Method: "tools/call", Tool: fmt.Sprintf("t%02d", i)})
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, name := range []string{path + ".2", path + ".1", path} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 400 {
			t.Errorf("%s has %d bytes, over 400", name, len(b))
		}
		info, _ := os.Stat(name)
		if info.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", name, info.Mode().Perm())
		}
		for _, r := range records(t, b) {
			tools = append(tools, r["item"].(string))
		}
	}
	if _, err := os.Stat(path + ".3"); !os.IsNotExist(err) {
		t.Errorf("a third old file is kept: %v", err)
	}
	if len(tools) == 0 || tools[len(tools)-1] != "t19" || !sortedRun(tools) {
		t.Errorf("records across the files, oldest first: %v; want a run ending with the last, t19", tools)
	}
}

// sortedRun reports whether names follow each other without a gap.
func sortedRun(names []string) bool {
	for i := 1; i < len(names); i++ {
		var a, b int
		fmt.Sscanf(names[i-1], "t%d", &a)
		fmt.Sscanf(names[i], "t%d", &b)
		if b != a+1 {
			return false
		}
	}
	return true
}

// Open follows [telemetry]: nothing when off, stderr, or the file.
func TestOpenFollowsTheConfig(t *testing.T) {
	var stderr bytes.Buffer
	if tr, err := Open(config.TelemetryConfig{Audit: config.AuditOff}, &stderr); tr != nil || err != nil {
		t.Errorf("off: %v %v", tr, err)
	}
	tr, err := Open(config.TelemetryConfig{Audit: config.AuditStderr}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	tr.Served(host.Operation{Method: "prompts/get", Prompt: "p"})
	if !strings.Contains(stderr.String(), `"item":"p"`) {
		t.Errorf("stderr: %q", stderr.String())
	}
	path := filepath.Join(t.TempDir(), "a.jsonl")
	tr, err = Open(config.TelemetryConfig{Audit: config.AuditFile, AuditFile: path, AuditMaxMiB: 1, AuditMaxFiles: 1}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	tr.Served(host.Operation{Method: "resources/read", ResourceURI: "memo://a"})
	tr.Close()
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), `"item":"memo://a"`) {
		t.Errorf("the file: %q", b)
	}
}

// A request the HTTP layer refused is recorded with its reason, subject
// and client address.
func TestHTTPDenialsAreRecorded(t *testing.T) {
	var buf bytes.Buffer
	newTrail(&buf, nil).DeniedHTTP("session_owner", "the request used the session of another subject", "bob", "127.0.0.1:5555")
	r := records(t, buf.Bytes())
	if len(r) != 1 || r[0]["msg"] != "denied" || r[0]["reason"] != "session_owner" || r[0]["subject"] != "bob" || r[0]["remote"] != "127.0.0.1:5555" {
		t.Errorf("records %v", r)
	}
}
