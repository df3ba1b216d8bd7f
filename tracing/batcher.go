package tracing

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/sdk/resource"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// batcher hands ended spans to an OTLP client in batches, as the SDK's
// batch span processor does and with its settings (OTEL_BSP_*), but keeps
// them written in the wire format (encode.go), end to end in one buffer,
// and wakes its export goroutine once a batch, not once a span: the SDK's
// sends each span over a channel to that goroutine, and a request's two
// spans then cost two goroutine switches (RATIONALE.md). A batch goes to
// the client as one ResourceSpans whose ScopeSpans carry their spans'
// bytes as they are (protobuf's unknown fields, which the client's
// marshalling writes out unchanged): the client then does only what is
// left, its endpoint, headers, TLS, compression and retries, the SDK's
// exporter's own.
type batcher struct {
	client         otlptrace.Client
	resource       *resourcepb.Resource
	resourceSchema string
	settings       batchSettings

	mu      sync.Mutex
	scopes  []scope
	queue   spanQueue
	spare   spanQueue // the buffers of the queue last exported, for the next
	dropped int       // spans the full queue refused since the last export
	stopped bool

	wake chan struct{} // a batch is full; capacity 1
	stop chan struct{} // closed by Shutdown
	done chan struct{} // closed when the export goroutine returns

	exporting sync.Mutex // one export at a time, in the order spans ended
	bodies    [][]byte   // each scope's spans in a batch, kept for the next; under exporting
}

// maxQueueBytes bounds the bytes of the spans queued, whatever their
// count: the spans past it are dropped, as those past the queue's size.
const maxQueueBytes = 16 << 20

// scope is an instrumentation scope whose spans are exported.
type scope struct {
	proto     *commonpb.InstrumentationScope
	schemaURL string
}

// spanQueue is spans ended and not exported yet: their encodings end to
// end in buf, and where each ends, and of which scope it is, in spans.
type spanQueue struct {
	buf   []byte
	spans []queuedSpan
}

type queuedSpan struct{ scope, end int }

// batchSettings are the batch span processor's settings, with the
// OpenTelemetry SDK's defaults and variables.
type batchSettings struct {
	delay         time.Duration // OTEL_BSP_SCHEDULE_DELAY: the longest a span waits
	exportTimeout time.Duration // OTEL_BSP_EXPORT_TIMEOUT
	maxQueue      int           // OTEL_BSP_MAX_QUEUE_SIZE: spans beyond it are dropped
	maxBatch      int           // OTEL_BSP_MAX_EXPORT_BATCH_SIZE
}

// batchSettingsFromEnv returns the settings the environment gives, the
// SDK's defaults for those it does not; a value that is not a positive
// integer is an error that names its variable.
func batchSettingsFromEnv() (batchSettings, error) {
	s := batchSettings{delay: 5 * time.Second, exportTimeout: 30 * time.Second, maxQueue: 2048, maxBatch: 512}
	for _, v := range []struct {
		key string
		set func(int)
	}{
		{"OTEL_BSP_SCHEDULE_DELAY", func(n int) { s.delay = time.Duration(n) * time.Millisecond }},
		{"OTEL_BSP_EXPORT_TIMEOUT", func(n int) { s.exportTimeout = time.Duration(n) * time.Millisecond }},
		{"OTEL_BSP_MAX_QUEUE_SIZE", func(n int) { s.maxQueue = n }},
		{"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", func(n int) { s.maxBatch = n }},
	} {
		raw := strings.TrimSpace(os.Getenv(v.key))
		if raw == "" {
			continue
		}
		n, err := strconv.Atoi(raw)
		if err != nil || n <= 0 {
			return s, fmt.Errorf("%s = %q: want a positive integer", v.key, raw)
		}
		v.set(n)
	}
	s.maxBatch = min(s.maxBatch, s.maxQueue)
	return s, nil
}

// newBatcher starts a batcher that uploads to client, started, the spans
// of resource (whose attributes are encoded once, here).
func newBatcher(client otlptrace.Client, resource *resource.Resource, s batchSettings) *batcher {
	res := &resourcepb.Resource{}
	res.ProtoReflect().SetUnknown(appendKeyValues(nil, 1, resource.Attributes()))
	b := &batcher{client: client, resource: res, resourceSchema: resource.SchemaURL(), settings: s,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go b.run()
	return b
}

// addScope adds the scope of key with attrs, and returns its index.
func (b *batcher) addScope(key scopeKey, attrs attribute.Set) int {
	p := &commonpb.InstrumentationScope{Name: key.name, Version: key.version}
	if attrs.Len() > 0 {
		p.ProtoReflect().SetUnknown(appendKeyValues(nil, 3, attrs.ToSlice()))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.scopes = append(b.scopes, scope{proto: p, schemaURL: key.schemaURL})
	return len(b.scopes) - 1
}

// add queues s, a sampled span of the scope of index scope that ended
// with attrs, or drops it when the queue is full, and wakes the
// export goroutine when it completes a batch.
func (b *batcher) add(scope int, s *span, attrs *attributes) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.stopped:
	case len(b.queue.spans) >= b.settings.maxQueue || len(b.queue.buf) >= maxQueueBytes:
		b.dropped++
	default:
		b.queue.buf = appendSpan(b.queue.buf, s, attrs)
		b.queue.spans = append(b.queue.spans, queuedSpan{scope: scope, end: len(b.queue.buf)})
		if len(b.queue.spans) == b.settings.maxBatch {
			select {
			case b.wake <- struct{}{}:
			default:
			}
		}
	}
}

// run exports a batch when one is full, and what is queued every delay.
func (b *batcher) run() {
	defer close(b.done)
	tick := time.NewTicker(b.settings.delay)
	defer tick.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-b.wake:
		case <-tick.C:
		}
		_ = b.export(context.Background())
	}
}

// export sends what is queued, a batch at a time, each within the export
// timeout and ctx; it reports what fails to OpenTelemetry's error
// handler, as the SDK's processor does, and returns the first failure.
func (b *batcher) export(ctx context.Context) error {
	b.exporting.Lock()
	defer b.exporting.Unlock()
	b.mu.Lock()
	q, dropped, scopes := b.queue, b.dropped, b.scopes
	b.queue, b.spare, b.dropped = b.spare, spanQueue{}, 0
	b.mu.Unlock()
	var first error
	if dropped > 0 {
		first = fmt.Errorf("mcphost dropped %d spans: the queue of %d spans (OTEL_BSP_MAX_QUEUE_SIZE) or %d MiB was full", dropped, b.settings.maxQueue, maxQueueBytes>>20)
		otel.Handle(first)
	}
	if len(b.bodies) < len(scopes) {
		b.bodies = append(b.bodies, make([][]byte, len(scopes)-len(b.bodies))...)
	}
	bodies := b.bodies[:len(scopes)]
	start := 0
	for spans := q.spans; len(spans) > 0; {
		n := min(len(spans), b.settings.maxBatch)
		for _, s := range spans[:n] {
			bodies[s.scope] = append(bodies[s.scope], q.buf[start:s.end]...)
			start = s.end
		}
		tctx, cancel := context.WithTimeout(ctx, b.settings.exportTimeout)
		err := b.client.UploadTraces(tctx, []*tracepb.ResourceSpans{b.request(scopes, bodies)})
		cancel()
		if err != nil {
			otel.Handle(err)
			if first == nil {
				first = err
			}
		}
		for i := range bodies {
			bodies[i] = bodies[i][:0]
		}
		spans = spans[n:]
	}
	q.buf, q.spans = q.buf[:0], q.spans[:0]
	b.mu.Lock()
	if b.spare.buf == nil {
		b.spare = q
	}
	b.mu.Unlock()
	return first
}

// request is the ResourceSpans of a batch: the scopes' encoded spans
// (bodies, by scope) as unknown fields of their ScopeSpans, where the
// client's marshalling writes them out unchanged.
func (b *batcher) request(scopes []scope, bodies [][]byte) *tracepb.ResourceSpans {
	rs := &tracepb.ResourceSpans{Resource: b.resource, SchemaUrl: b.resourceSchema}
	for i, body := range bodies {
		if len(body) == 0 {
			continue
		}
		ss := &tracepb.ScopeSpans{Scope: scopes[i].proto, SchemaUrl: scopes[i].schemaURL}
		ss.ProtoReflect().SetUnknown(protoreflect.RawFields(body))
		rs.ScopeSpans = append(rs.ScopeSpans, ss)
	}
	return rs
}

// Shutdown stops taking spans, exports those queued and stops the client,
// within ctx. Only the first call does anything.
func (b *batcher) Shutdown(ctx context.Context) error {
	b.mu.Lock()
	if b.stopped {
		b.mu.Unlock()
		return nil
	}
	b.stopped = true
	b.mu.Unlock()
	close(b.stop)
	select {
	case <-b.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	err := b.export(ctx)
	if serr := b.client.Stop(ctx); err == nil {
		err = serr
	}
	return err
}
