// Package audit writes mcphost's audit trail ([telemetry] audit): one JSON
// record, a line, per call that reaches a plugin's item (tools/call,
// prompts/get, resources/read, completion/complete) or a task, and per
// thing the server denied a request. A record says when, who (subject,
// client, hashed session), at which protocol version, which plugin and
// item, how it ended, how long the plugin call waited and ran, and the
// trace it belongs to; never a session id as it is, nor arguments unless
// the plugin's audit_arguments asks, with its secrets redacted.
package audit

import (
	"context"
	"io"
	"log/slog"
	"strings"

	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
)

// Trail is the audit trail. It is a host.Observer of the requests it
// records; it is safe for concurrent use.
type Trail struct {
	log    *slog.Logger
	closer io.Closer // the file, nil for stderr
}

// Open returns the trail tc asks for, writing to stderr or to its file
// (rotated by size), or nil when it is off.
func Open(tc config.TelemetryConfig, stderr io.Writer) (*Trail, error) {
	switch tc.Audit {
	case config.AuditStderr:
		return newTrail(stderr, nil), nil
	case config.AuditFile:
		f, err := openRotating(tc.AuditFile, int64(tc.AuditMaxMiB)<<20, tc.AuditMaxFiles)
		if err != nil {
			return nil, err
		}
		return newTrail(f, f), nil
	}
	return nil, nil
}

func newTrail(w io.Writer, closer io.Closer) *Trail {
	return &Trail{log: slog.New(slog.NewJSONHandler(w, nil)), closer: closer}
}

// Close closes the trail's file.
func (t *Trail) Close() error {
	if t.closer == nil {
		return nil
	}
	return t.closer.Close()
}

// audited reports whether the trail records requests of method.
func audited(method string) bool {
	switch method {
	case "tools/call", "prompts/get", "resources/read", "completion/complete":
		return true
	}
	return strings.HasPrefix(method, "tasks/")
}

// Served records a request of an audited method (host.Observer).
func (t *Trail) Served(op host.Operation) {
	if !audited(op.Method) {
		return
	}
	attrs := []slog.Attr{
		slog.String("method", op.Method),
		slog.String("subject", op.Subject),
		slog.String("client", op.Client),
		slog.String("session", op.Session),
		slog.String("era", op.ProtocolVersion),
		slog.String("transport", op.Transport),
		slog.String("plugin", op.Plugin),
		slog.String("item", item(op)),
		slog.String("outcome", outcome(op)),
		slog.Float64("duration_ms", ms(op.Duration.Seconds())),
		slog.Float64("queue_ms", ms(op.Wait.Seconds())),
		slog.Float64("run_ms", ms(op.Run.Seconds())),
		slog.String("trace_id", op.TraceID),
	}
	if op.ErrorCode != 0 {
		attrs = append(attrs, slog.Int("error_code", op.ErrorCode))
	}
	if op.Arguments != nil {
		attrs = append(attrs, slog.Any("arguments", op.Arguments))
	}
	t.log.LogAttrs(context.Background(), slog.LevelInfo, "call", attrs...)
}

// Denied records something the server denied a request (host.Observer).
func (t *Trail) Denied(d host.Denial) {
	t.log.LogAttrs(context.Background(), slog.LevelWarn, "denied",
		slog.String("reason", d.Reason),
		slog.String("detail", d.Detail),
		slog.String("method", d.Method),
		slog.String("subject", d.Subject),
		slog.String("session", d.Session),
		slog.String("era", d.ProtocolVersion),
		slog.String("transport", d.Transport),
		slog.String("plugin", d.Plugin),
		slog.String("item", d.Item),
		slog.String("trace_id", d.TraceID),
	)
}

// DeniedHTTP records a request the HTTP layer refused before it reached
// the engine: for its token (auth) or for using another subject's session
// (mcphttp). subject is the request's, "" when unknown; remote its client
// address.
func (t *Trail) DeniedHTTP(reason, detail, subject, remote string) {
	t.log.LogAttrs(context.Background(), slog.LevelWarn, "denied",
		slog.String("reason", reason),
		slog.String("detail", detail),
		slog.String("subject", subject),
		slog.String("remote", remote),
		slog.String("transport", host.TransportHTTP),
	)
}

// SessionEnded is not recorded (host.Observer).
func (t *Trail) SessionEnded(host.EndedSession) {}

// PluginCalled is not recorded on its own: the request's record says how
// its plugin call ended (host.Observer).
func (t *Trail) PluginCalled(host.PluginCall) {}

// item is what a request named: its tool, prompt or resource.
func item(op host.Operation) string {
	switch {
	case op.Tool != "":
		return op.Tool
	case op.Prompt != "":
		return op.Prompt
	}
	return op.ResourceURI
}

// outcome says how a request ended: how its plugin call failed (timeout,
// out_of_memory, ...) when it did, else tool_error for a tool result
// with isError, error for a JSON-RPC error (error_code says which), or ok.
func outcome(op host.Operation) string {
	switch {
	case op.PluginOutcome != "" && op.PluginOutcome != host.OutcomeOK:
		return op.PluginOutcome
	case op.ToolError:
		return host.OutcomeToolError
	case op.ErrorCode != 0:
		return host.OutcomeError
	}
	return host.OutcomeOK
}

// ms is s seconds in milliseconds, to the microsecond.
func ms(s float64) float64 {
	return float64(int64(s*1e6+0.5)) / 1e3
}
