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
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// batcher is a span processor that hands ended spans to an exporter in
// batches, as the SDK's batch span processor does and with its settings
// (OTEL_BSP_*), but wakes its export goroutine once a batch, not once a
// span: the SDK's sends each span over a channel to that goroutine, and
// a request's two spans then cost two goroutine switches, which on a
// busy server were most of what tracing cost (RATIONALE.md).
type batcher struct {
	exporter sdktrace.SpanExporter
	settings batchSettings

	mu      sync.Mutex
	queue   []sdktrace.ReadOnlySpan
	dropped int // spans the full queue refused since the last export
	stopped bool

	wake chan struct{} // a batch is full; capacity 1
	stop chan struct{} // closed by Shutdown
	done chan struct{} // closed when the export goroutine returns

	exporting sync.Mutex // one export at a time, in the order spans ended
}

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

// newBatcher starts a batcher that exports to exporter.
func newBatcher(exporter sdktrace.SpanExporter, s batchSettings) *batcher {
	b := &batcher{exporter: exporter, settings: s,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go b.run()
	return b
}

// OnStart does nothing: only ended spans are exported.
func (b *batcher) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd queues a sampled span, or drops it when the queue is full, and
// wakes the export goroutine when it completes a batch.
func (b *batcher) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return
	}
	b.mu.Lock()
	switch {
	case b.stopped:
	case len(b.queue) >= b.settings.maxQueue:
		b.dropped++
	default:
		b.queue = append(b.queue, s)
		if len(b.queue) == b.settings.maxBatch {
			select {
			case b.wake <- struct{}{}:
			default:
			}
		}
	}
	b.mu.Unlock()
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
		b.export(context.Background())
	}
}

// export sends what is queued, a batch at a time, each within the export
// timeout and ctx; it reports what fails to OpenTelemetry's error
// handler, as the SDK's processor does, and returns the first failure.
func (b *batcher) export(ctx context.Context) error {
	b.exporting.Lock()
	defer b.exporting.Unlock()
	b.mu.Lock()
	spans, dropped := b.queue, b.dropped
	b.queue, b.dropped = make([]sdktrace.ReadOnlySpan, 0, b.settings.maxBatch), 0
	b.mu.Unlock()
	var first error
	if dropped > 0 {
		first = fmt.Errorf("mcphost dropped %d spans: the queue of %d (OTEL_BSP_MAX_QUEUE_SIZE) was full", dropped, b.settings.maxQueue)
		otel.Handle(first)
	}
	for len(spans) > 0 {
		n := min(len(spans), b.settings.maxBatch)
		tctx, cancel := context.WithTimeout(ctx, b.settings.exportTimeout)
		err := b.exporter.ExportSpans(tctx, spans[:n])
		cancel()
		if err != nil {
			otel.Handle(err)
			if first == nil {
				first = err
			}
		}
		spans = spans[n:]
	}
	return first
}

// ForceFlush exports every queued span now.
func (b *batcher) ForceFlush(ctx context.Context) error {
	return b.export(ctx)
}

// Shutdown stops taking spans, exports those queued and shuts the
// exporter down, within ctx. Only the first call does anything.
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
	if serr := b.exporter.Shutdown(ctx); err == nil {
		err = serr
	}
	return err
}
