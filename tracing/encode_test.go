package tracing

import (
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// Whatever a span's name, attributes (a plugin's tool names, arguments
// with audit_arguments, error messages: any bytes) and status are, its
// encoding is a valid Span that decodes to exactly them, but for invalid
// UTF-8, replaced by U+FFFD, and what is past 4 KiB (spanString): lengths
// of every size (one byte and more), keys set twice keep their last
// value.
func FuzzSpanEncoding(f *testing.F) {
	f.Add("tools/call hash", "k", "v", int64(-1), 0.5, true, "error text", 3)
	f.Add("", "a", "", int64(0), math.Inf(-1), false, "", 0)
	f.Add(string(make([]byte, 200)), "\x00", string(make([]byte, 20000)), int64(math.MaxInt64), math.NaN(), true, "x", 200)
	f.Fuzz(func(t *testing.T, name, key, value string, n int64, x float64, on bool, description string, repeats int) {
		if key == "" {
			key = "k"
		}
		client := &recordingClient{exported: make(chan struct{}, 1)}
		p := testProvider(client, batchSettings{delay: 1 << 62, exportTimeout: 1 << 62, maxQueue: 10, maxBatch: 10}, true)
		defer p.batch.Shutdown(t.Context())
		_, s := p.Tracer(ScopeName).Start(t.Context(), name, trace.WithSpanKind(trace.SpanKindServer))
		s.SetAttributes(attribute.String(key, "first"), attribute.Int64(key+".n", n), attribute.Float64(key+".x", x),
			attribute.Bool(key+".on", on), attribute.StringSlice(key+".s", []string{value, name}))
		valid := spanString
		repeats = min(max(repeats, 0), 300)
		want := valid(value)
		if repeats == 0 {
			want = "first"
		}
		for range repeats {
			s.SetAttributes(attribute.String(key, value)) // set again: the last value wins
		}
		s.SetStatus(codes.Error, description)
		s.End()
		if err := p.batch.export(t.Context()); err != nil || len(client.spans) != 1 {
			t.Fatalf("exported %d spans (%v), want 1", len(client.spans), err)
		}
		got := client.spans[0]
		attrs := map[string]any{}
		for _, kv := range got.GetAttributes() {
			if _, twice := attrs[kv.GetKey()]; twice {
				t.Errorf("attribute %q appears twice", kv.GetKey())
			}
			attrs[kv.GetKey()] = kv.GetValue()
		}
		key = valid(key) // as the collector sees it
		sv := func(k string) string { return attrs[k].(interface{ GetStringValue() string }).GetStringValue() }
		if got.GetName() != valid(name) || len(attrs) != 5 || sv(key) != want || got.GetKind() != tracepb.Span_SPAN_KIND_SERVER ||
			got.GetStatus().GetMessage() != valid(description) || got.GetStatus().GetCode() != tracepb.Status_STATUS_CODE_ERROR {
			t.Fatalf("decoded %v, want the span as set", got)
		}
		// Independently of spanString: valid, within the bound, and what
		// the valid text begins with.
		if d := got.GetStatus().GetMessage(); !utf8.ValidString(d) || len(d) > maxSpanString ||
			!strings.HasPrefix(strings.ToValidUTF8(description, "\uFFFD"), d) || len(d) < min(len(strings.ToValidUTF8(description, "\uFFFD")), maxSpanString-3) {
			t.Errorf("status description of %d bytes sent as %d bytes: %q", len(description), len(d), d)
		}
		type anyValue interface {
			GetIntValue() int64
			GetDoubleValue() float64
			GetBoolValue() bool
		}
		gx := attrs[key+".x"].(anyValue).GetDoubleValue()
		if attrs[key+".n"].(anyValue).GetIntValue() != n || attrs[key+".on"].(anyValue).GetBoolValue() != on ||
			math.Float64bits(gx) != math.Float64bits(x) {
			t.Errorf("numbers: %v, want %d %v %v", attrs, n, x, on)
		}
	})
}
