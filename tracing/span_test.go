package tracing

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/otlptest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// at is a fixed time, seconds after a fixed start, so that both tracers
// record the same times.
func at(seconds int) time.Time { return time.Unix(1_800_000_000+int64(seconds), 0) }

// everyKindOfSpan starts and ends, with tracer, spans that use every part
// of the API the way mcphost's code and a plugin's host calls could:
// every attribute type, duplicate and invalid keys, more attributes and
// events than the limits, links, events, errors, every status, a remote
// parent with a trace state, a new root, every kind.
func everyKindOfSpan(tracer trace.Tracer) {
	remote := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, SpanID: trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8},
		TraceFlags: trace.FlagsSampled, Remote: true,
	})
	state, _ := trace.ParseTraceState("vendor=value,other=x")
	remote = remote.WithTraceState(state)
	linked := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9}, SpanID: trace.SpanID{8, 8, 8, 8, 8, 8, 8, 8}})
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), remote)

	ctx, req := tracer.Start(ctx, "tools/call hash", trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(at(0)),
		trace.WithLinks(trace.Link{SpanContext: linked, Attributes: []attribute.KeyValue{attribute.String("why", "header")}}, trace.Link{}),
		trace.WithAttributes(attribute.String("mcp.method.name", "tools/call"), attribute.String("", "no key")))
	req.SetAttributes(
		attribute.String("s", "ünïcode \x00 and more"), attribute.String("empty", ""), attribute.Bool("t", true), attribute.Bool("f", false),
		attribute.Int("i", -42), attribute.Int64("zero", 0), attribute.Float64("pi", 3.14159), attribute.Float64("nzero", 0),
		attribute.StringSlice("ss", []string{"a", "", "c"}), attribute.BoolSlice("bs", []bool{true, false}),
		attribute.IntSlice("is", []int{1, -2, 3}), attribute.Float64Slice("fs", []float64{1.5, -0.25}),
		attribute.ByteSlice("bytes", []byte{0, 1, 255}), attribute.Slice("mixed", attribute.StringValue("x"), attribute.IntValue(7)),
		attribute.String("s", "set again"),
	)
	pluginCtx, call := tracer.Start(ctx, "call_tool tools", trace.WithTimestamp(at(1)))
	call.AddEvent("queued", trace.WithTimestamp(at(2)), trace.WithAttributes(attribute.Int("depth", 3)))
	call.RecordError(errors.New("instance trapped"), trace.WithTimestamp(at(3)))
	call.SetName("call_tool tools!")
	call.SetStatus(codes.Error, "trapped")
	call.SetStatus(codes.Unset, "ignored")
	_, host := tracer.Start(pluginCtx, "http_request", trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(at(4)))
	host.SetStatus(codes.Ok, "an ok status has no description")
	host.SetStatus(codes.Error, "ok is final")
	host.End(trace.WithTimestamp(at(5)))
	call.End(trace.WithTimestamp(at(6)))
	call.SetAttributes(attribute.String("after", "end")) // ignored

	_, many := tracer.Start(ctx, "many", trace.WithTimestamp(at(7)))
	for i := range maxAttributes + 5 {
		many.SetAttributes(attribute.Int(fmt.Sprintf("a%03d", i), i))
	}
	for i := range maxEvents + 3 {
		many.AddEvent(fmt.Sprintf("e%03d", i), trace.WithTimestamp(at(8)))
	}
	many.End(trace.WithTimestamp(at(9)))

	_, root := tracer.Start(ctx, "new root", trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindProducer), trace.WithTimestamp(at(10)))
	root.End(trace.WithTimestamp(at(11)))
	_, consumer := tracer.Start(ctx, "", trace.WithSpanKind(trace.SpanKindConsumer), trace.WithTimestamp(at(12)))
	consumer.End(trace.WithTimestamp(at(13)))

	// As package host starts its spans: StartSpan, where the tracer has it.
	_, fastRoot := startSpan(tracer, ctx, "started as a root, linked", trace.SpanKindServer, at(15), true, remote)
	fastRoot.End(trace.WithTimestamp(at(16)))
	_, fastChild := startSpan(tracer, ctx, "started under the request", trace.SpanKindInternal, at(17), false, trace.SpanContext{})
	fastChild.SetAttributes(attribute.String("mcphost.plugin.name", "tools"))
	fastChild.End(trace.WithTimestamp(at(18)))
	req.End(trace.WithTimestamp(at(14)))
}

// spansOfEveryKind is how many spans everyKindOfSpan ends.
const spansOfEveryKind = 8

// startSpan starts a span with tracer's StartSpan, or, where it has none
// (the SDK's), with the options that StartSpan stands for.
func startSpan(with trace.Tracer, ctx context.Context, name string, kind trace.SpanKind, start time.Time, root bool, link trace.SpanContext) (context.Context, trace.Span) {
	if t, ok := with.(*tracer); ok {
		return t.StartSpan(ctx, name, kind, start, root, link)
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(kind), trace.WithTimestamp(start), trace.WithLinks(trace.Link{SpanContext: link})}
	if root {
		opts = append(opts, trace.WithNewRoot())
	}
	return with.Start(ctx, name, opts...)
}

// normalized returns the spans received, by name, their random ids
// replaced by the names of the spans they identify (a root's trace id is
// its own name) and their attributes sorted by key, and their resource.
func normalized(t *testing.T, r *otlptest.Receiver) (map[string]*tracepb.Span, *resourcepb.Resource) {
	t.Helper()
	var spans []*tracepb.Span
	var res *resourcepb.Resource
	for len(spans) < spansOfEveryKind {
		rs := r.Next(t, 10*time.Second)
		if rs == nil {
			t.FailNow()
		}
		res = rs.GetResource()
		for _, ss := range rs.GetScopeSpans() {
			if ss.GetScope().GetName() != ScopeName {
				t.Errorf("scope %v, want %s", ss.GetScope(), ScopeName)
			}
			spans = append(spans, ss.GetSpans()...)
		}
	}
	names := map[string]string{}
	for _, s := range spans {
		names[string(s.GetSpanId())] = s.GetName()
		if len(s.GetParentSpanId()) == 0 {
			names[string(s.GetTraceId())] = "trace of " + s.GetName()
		}
	}
	rename := func(id []byte) []byte {
		if n, ok := names[string(id)]; ok {
			return []byte(n)
		}
		return id
	}
	byName := map[string]*tracepb.Span{}
	for _, s := range spans {
		s = proto.Clone(s).(*tracepb.Span)
		s.TraceId, s.SpanId, s.ParentSpanId = rename(s.TraceId), rename(s.SpanId), rename(s.ParentSpanId)
		slices.SortFunc(s.Attributes, func(a, b *commonpb.KeyValue) int { return strings.Compare(a.Key, b.Key) })
		byName[s.GetName()] = s
	}
	return byName, res
}

// mcphost's spans reach a collector exactly as the SDK's do: the same
// spans, started and ended through the API the same way, exported by the
// SDK and by mcphost to two loopback collectors, decode to the same
// protobuf messages, field for field (ids and the order of attributes
// aside, which are random and unordered).
func TestSpansAreEncodedAsTheSDKEncodesThem(t *testing.T) {
	res, err := resource.New(t.Context(), resource.WithAttributes(attribute.String("service.name", "mcphost"), attribute.Int("n", 1)))
	if err != nil {
		t.Fatal(err)
	}
	fromSDK, fromOwn := otlptest.HTTP(t), otlptest.HTTP(t)

	sdkExporter, err := otlptracehttp.New(t.Context(), otlptracehttp.WithEndpointURL(fromSDK.URL+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	sdk := sdktrace.NewTracerProvider(sdktrace.WithSyncer(sdkExporter), sdktrace.WithResource(res), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	everyKindOfSpan(sdk.Tracer(ScopeName))
	if err := sdk.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}

	client := otlptracehttp.NewClient(otlptracehttp.WithEndpointURL(fromOwn.URL + "/v1/traces"))
	if err := client.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	own := newProvider(ratioSampler(1, false), newBatcher(client, res, batchSettings{delay: time.Hour, exportTimeout: 10 * time.Second, maxQueue: 100, maxBatch: 100}))
	everyKindOfSpan(own.Tracer(ScopeName))
	if err := own.batch.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}

	want, wantRes := normalized(t, fromSDK)
	got, gotRes := normalized(t, fromOwn)
	if len(want) != spansOfEveryKind {
		t.Fatalf("the SDK exported %d spans, want %d", len(want), spansOfEveryKind)
	}
	for name, w := range want {
		if g := got[name]; !proto.Equal(w, g) {
			t.Errorf("span %q differs from the SDK's:\nthe SDK's: %s\nmcphost's: %s", name, prototext.Format(w), prototext.Format(g))
		}
	}
	if len(got) != len(want) {
		t.Errorf("mcphost exported %d spans, the SDK %d", len(got), len(want))
	}
	if !proto.Equal(wantRes, gotRes) {
		t.Errorf("resource %v, the SDK's %v", gotRes, wantRes)
	}
}
