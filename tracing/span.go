package tracing

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
)

// mcphost's spans are its own, behind OpenTelemetry's API: with the SDK's,
// every span sampled and exported cost a stdio tools/call over a fifth
// more CPU; these, written out in the wire format as they end (encode.go),
// under half of that (RATIONALE.md, docs/observability.md). They behave
// as the SDK's do, with its default limits: samplers decide as its
// samplers of the same names (sampler.go), a span
// keeps at most 128 attributes (the last value of a key wins), 128 events
// (the oldest go first) and 128 links, and counts what it dropped.

// Limits of a span, the SDK's defaults.
const (
	maxAttributes = 128
	maxEvents     = 128
	maxLinks      = 128
)

// provider makes the tracers of mcphost's scopes, whose sampled spans go to
// the batcher.
type provider struct {
	embedded.TracerProvider
	sampler sampler
	batch   *batcher

	mu      sync.Mutex
	tracers map[scopeKey]*tracer
}

// newProvider returns the provider of spans that sampler samples and
// batch exports.
func newProvider(sampler sampler, batch *batcher) *provider {
	return &provider{sampler: sampler, batch: batch, tracers: map[scopeKey]*tracer{}}
}

// scopeKey identifies an instrumentation scope.
type scopeKey struct{ name, version, schemaURL string }

// Tracer returns the tracer of the scope name.
func (p *provider) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	cfg := trace.NewTracerConfig(opts...)
	key := scopeKey{name, cfg.InstrumentationVersion(), cfg.SchemaURL()}
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.tracers[key]
	if t == nil {
		t = &tracer{p: p, scope: p.batch.addScope(key, cfg.InstrumentationAttributes())}
		p.tracers[key] = t
	}
	return t
}

// tracer starts the spans of one scope.
type tracer struct {
	embedded.Tracer
	p     *provider
	scope int // the batcher's index of the scope
}

// Start starts a span as the SDK does: under the span of ctx unless
// trace.WithNewRoot, sampled as the provider's sampler decides, recording
// only if sampled.
func (t *tracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	cfg := trace.NewSpanStartConfig(opts...)
	ctx, s := t.start(ctx, cfg.NewRoot(), name, cfg.SpanKind(), cfg.Timestamp())
	if s, ok := s.(*span); ok {
		s.attrs.set(cfg.Attributes())
		for _, l := range cfg.Links() {
			s.addLink(l)
		}
	}
	return ctx, s
}

// StartSpan starts a span as Start does with the options
// trace.WithSpanKind(kind), trace.WithTimestamp(start) unless start is
// zero, trace.WithNewRoot() if root, and trace.WithLinks of link if it is
// valid, without what the options cost (package host's spanStarter).
func (t *tracer) StartSpan(ctx context.Context, name string, kind trace.SpanKind, start time.Time, root bool, link trace.SpanContext) (context.Context, trace.Span) {
	ctx, s := t.start(ctx, root, name, kind, start)
	if s, ok := s.(*span); ok && link.IsValid() {
		s.addLink(trace.Link{SpanContext: link})
	}
	return ctx, s
}

// start starts a span under the span of ctx, or a root if root, and
// returns it and ctx carrying it.
func (t *tracer) start(ctx context.Context, root bool, name string, kind trace.SpanKind, start time.Time) (context.Context, trace.Span) {
	var parent trace.SpanContext // invalid for a root
	if !root {
		parent = trace.SpanContextFromContext(ctx)
	}
	tid := parent.TraceID()
	if !tid.IsValid() {
		tid = newTraceID()
	}
	scc := trace.SpanContextConfig{TraceID: tid, SpanID: newSpanID(), TraceState: parent.TraceState(), TraceFlags: parent.TraceFlags() &^ trace.FlagsSampled}
	sampled := t.p.sampler.sampled(parent, tid)
	if sampled {
		scc.TraceFlags |= trace.FlagsSampled
	}
	sc := trace.NewSpanContext(scc)
	if !sampled {
		s := &nonRecordingSpan{sc: sc, p: t.p}
		return trace.ContextWithSpan(ctx, s), s
	}
	s := &span{t: t, sc: sc, parentID: parent.SpanID(), parentRemote: parent.IsRemote(), name: name, kind: trace.ValidateSpanKind(kind),
		start: start, attrs: spanAttrs.Get().(*attributes)}
	if s.start.IsZero() {
		s.start = time.Now()
	}
	return trace.ContextWithSpan(ctx, s), s
}

// newTraceID returns a random trace ID, never the invalid one.
func newTraceID() trace.TraceID {
	var id trace.TraceID
	for !id.IsValid() {
		binary.NativeEndian.PutUint64(id[:8], rand.Uint64())
		binary.NativeEndian.PutUint64(id[8:], rand.Uint64())
	}
	return id
}

// newSpanID returns a random span ID, never the invalid one.
func newSpanID() trace.SpanID {
	var id trace.SpanID
	for !id.IsValid() {
		binary.NativeEndian.PutUint64(id[:], rand.Uint64())
	}
	return id
}

// span is a recording span.
type span struct {
	embedded.Span
	t            *tracer
	sc           trace.SpanContext
	parentID     trace.SpanID // invalid for a root
	parentRemote bool         // the parent came from another process
	kind         trace.SpanKind

	ended atomic.Bool // set under mu, read without it by IsRecording

	mu                sync.Mutex
	status            codes.Code
	name              string
	start             time.Time
	end               int64       // in nanoseconds since the epoch
	attrs             *attributes // from spanAttrs, given back when the span ends
	more              *eventsAndLinks
	statusDescription string
}

// eventsAndLinks are a span's events and links, which few spans have: a
// span without them is the smaller for it.
type eventsAndLinks struct {
	events []event
	links  []link
	// The counts of the events and links the limits dropped.
	droppedEvents, droppedLinks int
}

// eventsAndLinks returns s.more, made when s had none; s.mu must be held,
// or s not yet shared.
func (s *span) eventsAndLinks() *eventsAndLinks {
	if s.more == nil {
		s.more = &eventsAndLinks{}
	}
	return s.more
}

// event is a span's event.
type event struct {
	name  string
	time  int64
	attrs attributes // field 3 of an Event
}

// link is a span's link.
type link struct {
	sc    trace.SpanContext
	attrs attributes // field 4 of a Link
}

// SpanContext returns the span's identity.
func (s *span) SpanContext() trace.SpanContext { return s.sc }

// IsRecording reports whether the span has not ended.
func (s *span) IsRecording() bool { return !s.ended.Load() }

// SetStatus sets the span's status, as the SDK does: Ok is final, Error
// wins over Unset, and only Error keeps a description.
func (s *span) SetStatus(code codes.Code, description string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended.Load() || s.status > code { // Unset 0, Error 1, Ok 2
		return
	}
	s.status, s.statusDescription = code, ""
	if code == codes.Error {
		s.statusDescription = description
	}
}

// SetName renames the span.
func (s *span) SetName(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended.Load() {
		s.name = name
	}
}

// SetAttributes sets attributes; a key set again takes its new value.
func (s *span) SetAttributes(kvs ...attribute.KeyValue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended.Load() {
		s.attrs.set(kvs)
	}
}

// attributes are the attributes of a span, an event or a link, written as
// its KeyValue fields, field (appendKeyValue): bytes the collector does
// not scan. They hold at most maxAttributes keys, the last value set of a
// key winning; dropped counts the invalid ones and those past the limit.
type attributes struct {
	field   int
	buf     []byte
	keys    []string // of the KeyValues in buf, in order, as written (spanString)
	ends    []int    // where each KeyValue ends in buf
	dropped int
}

// spanAttrs are the attributes of spans (field 9 of a Span), for reuse.
var spanAttrs = sync.Pool{New: func() any { return &attributes{field: 9, buf: make([]byte, 0, 1024)} }}

// maxPooledAttrs bounds the attributes given back to spanAttrs: a span
// with attributes of megabytes does not keep them.
const maxPooledAttrs = 64 << 10

// set sets kvs: a key set again loses its earlier value. Keys are compared
// as written: two keys that differ only in invalid UTF-8, or past
// maxSpanString bytes, are one.
func (a *attributes) set(kvs []attribute.KeyValue) {
	for _, kv := range kvs {
		if !kv.Valid() {
			a.dropped++
			continue
		}
		key := spanString(string(kv.Key))
		if i := slices.Index(a.keys, key); i >= 0 {
			a.remove(i)
		}
		if len(a.keys) >= maxAttributes {
			a.dropped++
			continue
		}
		a.buf = appendKeyValue(a.buf, a.field, key, kv.Value)
		a.keys = append(a.keys, key)
		a.ends = append(a.ends, len(a.buf))
	}
}

// remove removes the KeyValue of index i.
func (a *attributes) remove(i int) {
	start := 0
	if i > 0 {
		start = a.ends[i-1]
	}
	cut := a.ends[i] - start
	a.buf = append(a.buf[:start], a.buf[a.ends[i]:]...)
	for j := i + 1; j < len(a.ends); j++ {
		a.ends[j] -= cut
	}
	a.keys = slices.Delete(a.keys, i, i+1)
	a.ends = slices.Delete(a.ends, i, i+1)
}

// reset empties a for reuse.
func (a *attributes) reset() {
	clear(a.keys) // a key may be a plugin's string
	a.buf, a.keys, a.ends, a.dropped = a.buf[:0], a.keys[:0], a.ends[:0], 0
}

// AddEvent adds an event; beyond the limit, the oldest event goes.
func (s *span) AddEvent(name string, opts ...trace.EventOption) {
	cfg := trace.NewEventConfig(opts...)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended.Load() {
		s.addEvent(name, cfg)
	}
}

// addEvent adds an event of cfg; s.mu must be held.
func (s *span) addEvent(name string, cfg trace.EventConfig) {
	e := event{name: name, time: cfg.Timestamp().UnixNano(), attrs: attributes{field: 3}}
	e.attrs.set(cfg.Attributes())
	m := s.eventsAndLinks()
	if len(m.events) == maxEvents {
		m.events = append(m.events[:0], m.events[1:]...)
		m.droppedEvents++
	}
	m.events = append(m.events, e)
}

// RecordError adds an exception event for err, as the SDK does.
func (s *span) RecordError(err error, opts ...trace.EventOption) {
	if err == nil {
		return
	}
	opts = append(opts, trace.WithAttributes(
		attribute.String("exception.type", errorType(err)),
		attribute.String("exception.message", err.Error()),
	))
	cfg := trace.NewEventConfig(opts...)
	if cfg.StackTrace() {
		opts = append(opts, trace.WithAttributes(attribute.String("exception.stacktrace", string(debug.Stack()))))
		cfg = trace.NewEventConfig(opts...)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended.Load() {
		s.addEvent("exception", cfg)
	}
}

// errorType names err's type as the SDK's exception events do.
func errorType(err error) string {
	t := reflect.TypeOf(err)
	if t.PkgPath() == "" && t.Name() == "" {
		return t.String()
	}
	return fmt.Sprintf("%s.%s", t.PkgPath(), t.Name())
}

// AddLink links the span to another.
func (s *span) AddLink(l trace.Link) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended.Load() {
		s.addLink(l)
	}
}

// addLink adds l, unless it links nothing; s.mu must be held, or s not
// yet shared.
func (s *span) addLink(l trace.Link) {
	if !l.SpanContext.IsValid() && len(l.Attributes) == 0 {
		return
	}
	m := s.eventsAndLinks()
	if len(m.links) == maxLinks {
		m.droppedLinks++
		return
	}
	kept := link{sc: l.SpanContext, attrs: attributes{field: 4}}
	kept.attrs.set(l.Attributes)
	m.links = append(m.links, kept)
}

// TracerProvider returns the provider that made the span.
func (s *span) TracerProvider() trace.TracerProvider { return s.t.p }

// End ends the span, once, and hands it to the batcher if sampled.
func (s *span) End(opts ...trace.SpanEndOption) {
	cfg := trace.NewSpanEndConfig(opts...)
	var end int64
	if t := cfg.Timestamp(); !t.IsZero() {
		end = t.UnixNano()
	} else {
		end = s.start.UnixNano() + int64(time.Since(s.start)) // on the monotonic clock
	}
	s.mu.Lock()
	if s.ended.Load() {
		s.mu.Unlock()
		return
	}
	s.end = end
	s.ended.Store(true)
	attrs := s.attrs
	s.attrs = nil
	s.mu.Unlock()
	if s.sc.IsSampled() {
		s.t.p.batch.add(s.t.scope, s, attrs)
	}
	if cap(attrs.buf) <= maxPooledAttrs {
		attrs.reset()
		spanAttrs.Put(attrs)
	}
}

// nonRecordingSpan is a span not sampled: it carries its identity to its
// children and records nothing.
type nonRecordingSpan struct {
	embedded.Span
	sc trace.SpanContext
	p  *provider
}

func (s *nonRecordingSpan) SpanContext() trace.SpanContext          { return s.sc }
func (s *nonRecordingSpan) IsRecording() bool                       { return false }
func (s *nonRecordingSpan) SetStatus(codes.Code, string)            {}
func (s *nonRecordingSpan) SetName(string)                          {}
func (s *nonRecordingSpan) SetAttributes(...attribute.KeyValue)     {}
func (s *nonRecordingSpan) AddEvent(string, ...trace.EventOption)   {}
func (s *nonRecordingSpan) RecordError(error, ...trace.EventOption) {}
func (s *nonRecordingSpan) AddLink(trace.Link)                      {}
func (s *nonRecordingSpan) End(...trace.SpanEndOption)              {}
func (s *nonRecordingSpan) TracerProvider() trace.TracerProvider    { return s.p }
