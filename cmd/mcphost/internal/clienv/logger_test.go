package clienv

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

// --log-format json writes one JSON object per line, text key=value
// lines; either way a record logged in the context of a span carries its
// trace_id; an unknown format or level is refused, naming its flag.
func TestLoggerFormatsAndTraceIDs(t *testing.T) {
	span := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{0xaa, 1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled})
	ctx := trace.ContextWithSpanContext(context.Background(), span)
	var buf bytes.Buffer
	logger, err := NewLogger(&buf, "info", "json")
	if err != nil {
		t.Fatal(err)
	}
	logger.InfoContext(ctx, "plugin loaded", "plugin", "notes")
	logger.Info("no span")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var first, second map[string]any
	if len(lines) != 2 || json.Unmarshal([]byte(lines[0]), &first) != nil || json.Unmarshal([]byte(lines[1]), &second) != nil {
		t.Fatalf("json lines: %q", buf.String())
	}
	if first["plugin"] != "notes" || first["trace_id"] != span.TraceID().String() {
		t.Errorf("record in a span: %v, want plugin and its trace_id", first)
	}
	if _, ok := second["trace_id"]; ok {
		t.Errorf("record outside a span: %v, want no trace_id", second)
	}
	buf.Reset()
	text, err := NewLogger(&buf, "info", "text")
	if err != nil {
		t.Fatal(err)
	}
	text.InfoContext(ctx, "hello")
	if !strings.Contains(buf.String(), "msg=hello trace_id="+span.TraceID().String()) {
		t.Errorf("text: %q", buf.String())
	}
	if _, err := NewLogger(&buf, "info", "xml"); err == nil || !strings.Contains(err.Error(), "--log-format") {
		t.Errorf("format xml: %v, want an error naming --log-format", err)
	}
	if _, err := NewLogger(&buf, "loud", "text"); err == nil || !strings.Contains(err.Error(), "--log-level") {
		t.Errorf("level loud: %v, want an error naming --log-level", err)
	}
}
