package tracing

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// recordingExporter keeps the batches exported to it; while gate is not
// nil, an export waits for it to close.
type recordingExporter struct {
	mu       sync.Mutex
	batches  [][]string // span names
	exported chan struct{}
	gate     chan struct{}
	shutdown bool
}

func newRecordingExporter() *recordingExporter {
	return &recordingExporter{exported: make(chan struct{}, 100)}
}

func (e *recordingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if e.gate != nil {
		<-e.gate
	}
	var names []string
	for _, s := range spans {
		names = append(names, s.Name())
	}
	e.mu.Lock()
	e.batches = append(e.batches, names)
	e.mu.Unlock()
	e.exported <- struct{}{}
	return nil
}

func (e *recordingExporter) Shutdown(context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.shutdown = true
	return nil
}

func (e *recordingExporter) got() [][]string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([][]string(nil), e.batches...)
}

// provider returns a tracer provider whose spans go through a batcher
// with settings s to e, sampled unless sampled is false.
func provider(e sdktrace.SpanExporter, s batchSettings, sampled bool) (*sdktrace.TracerProvider, *batcher) {
	b := newBatcher(e, s)
	sampler := sdktrace.AlwaysSample()
	if !sampled {
		sampler = sdktrace.NeverSample()
	}
	return sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(b), sdktrace.WithSampler(sampler)), b
}

func endSpans(p *sdktrace.TracerProvider, names ...string) {
	for _, n := range names {
		_, s := p.Tracer(ScopeName).Start(context.Background(), n)
		s.End()
	}
}

// A full batch is exported at once, without waiting for the schedule
// delay; the spans of a batch not full wait for it.
func TestAFullBatchIsExportedAtOnceTheRestAfterTheDelay(t *testing.T) {
	e := newRecordingExporter()
	p, _ := provider(e, batchSettings{delay: 300 * time.Millisecond, exportTimeout: time.Second, maxQueue: 100, maxBatch: 3}, true)
	defer p.Shutdown(context.Background())
	start := time.Now()
	endSpans(p, "a", "b", "c")
	select {
	case <-e.exported:
	case <-time.After(250 * time.Millisecond):
		t.Fatal("a full batch was not exported before the delay")
	}
	endSpans(p, "d")
	<-e.exported
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Errorf("a batch of one was exported after %v, before the delay", took)
	}
	if got := e.got(); len(got) != 2 || strings.Join(got[0], ",") != "a,b,c" || strings.Join(got[1], ",") != "d" {
		t.Errorf("batches %v, want [a b c] then [d]", got)
	}
}

// Spans that end while the queue is full are dropped, and the drop is
// reported to OpenTelemetry's error handler; Shutdown exports what is
// queued, shuts the exporter down, and later spans are not taken.
func TestAFullQueueDropsSpansAndShutdownExportsTheRest(t *testing.T) {
	var reported []error
	var mu sync.Mutex
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { mu.Lock(); reported = append(reported, err); mu.Unlock() }))
	defer otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {}))

	e := newRecordingExporter()
	e.gate = make(chan struct{})
	p, b := provider(e, batchSettings{delay: time.Hour, exportTimeout: time.Second, maxQueue: 4, maxBatch: 2}, true)
	endSpans(p, "a", "b") // a full batch: the export goroutine takes it and waits at the gate
	for deadline := time.Now().Add(5 * time.Second); ; {
		b.mu.Lock()
		n := len(b.queue)
		b.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the export goroutine did not take the full batch")
		}
		time.Sleep(time.Millisecond)
	}
	endSpans(p, "c", "d", "e", "f", "g", "h") // the queue holds four
	close(e.gate)
	_ = p.Shutdown(context.Background()) // the drop is reported by whichever export comes next
	endSpans(p, "after")
	got := e.got()
	var names []string
	for _, batch := range got {
		if len(batch) > 2 {
			t.Errorf("batch %v is larger than the batch size 2", batch)
		}
		names = append(names, batch...)
	}
	if strings.Join(names, ",") != "a,b,c,d,e,f" || !e.shutdown {
		t.Errorf("exported %v (shut down %v), want a..f and the exporter shut down", names, e.shutdown)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != 1 || !strings.Contains(reported[0].Error(), "dropped 2 spans") {
		t.Errorf("reported %v, want the drop", reported)
	}
}

// Spans that were not sampled are not exported.
func TestUnsampledSpansAreNotExported(t *testing.T) {
	e := newRecordingExporter()
	p, _ := provider(e, batchSettings{delay: time.Hour, exportTimeout: time.Second, maxQueue: 10, maxBatch: 10}, false)
	endSpans(p, "a")
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := e.got(); len(got) != 0 {
		t.Errorf("exported %v", got)
	}
}

// The OTEL_BSP_* variables set the batcher as they set the SDK's; a value
// that is not a positive number of milliseconds or spans is an error that
// names the variable.
func TestBatchSettingsComeFromTheEnvironment(t *testing.T) {
	for _, k := range []string{"OTEL_BSP_SCHEDULE_DELAY", "OTEL_BSP_EXPORT_TIMEOUT", "OTEL_BSP_MAX_QUEUE_SIZE", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE"} {
		t.Setenv(k, "")
	}
	if s, err := batchSettingsFromEnv(); err != nil || s != (batchSettings{delay: 5 * time.Second, exportTimeout: 30 * time.Second, maxQueue: 2048, maxBatch: 512}) {
		t.Errorf("defaults: %+v, %v", s, err)
	}
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "250")
	t.Setenv("OTEL_BSP_MAX_QUEUE_SIZE", "100")
	t.Setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "512")
	if s, err := batchSettingsFromEnv(); err != nil || s.delay != 250*time.Millisecond || s.maxQueue != 100 || s.maxBatch != 100 {
		t.Errorf("set: %+v, %v; want a delay of 250 ms and batches no larger than the queue", s, err)
	}
	for _, bad := range []string{"0", "-5", "5s", "many"} {
		t.Setenv("OTEL_BSP_EXPORT_TIMEOUT", bad)
		if _, err := batchSettingsFromEnv(); err == nil || !strings.Contains(err.Error(), "OTEL_BSP_EXPORT_TIMEOUT") {
			t.Errorf("OTEL_BSP_EXPORT_TIMEOUT = %q: %v", bad, err)
		}
		if _, err := New(t.Context(), otlp("", "http://127.0.0.1:1"), "v"); err == nil {
			t.Errorf("New with OTEL_BSP_EXPORT_TIMEOUT = %q: no error", bad)
		}
	}
}

// ForceFlush exports what is queued now; an export that fails is returned
// and reported.
func TestForceFlushExportsNowAndReturnsFailures(t *testing.T) {
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {}))
	e := newRecordingExporter()
	p, _ := provider(e, batchSettings{delay: time.Hour, exportTimeout: time.Second, maxQueue: 10, maxBatch: 10}, true)
	defer p.Shutdown(context.Background())
	endSpans(p, "a")
	if err := p.ForceFlush(context.Background()); err != nil || len(e.got()) != 1 {
		t.Errorf("ForceFlush: %v, exported %v", err, e.got())
	}
	failing, _ := provider(failingExporter{}, batchSettings{delay: time.Hour, exportTimeout: time.Second, maxQueue: 10, maxBatch: 10}, true)
	endSpans(failing, "a")
	if err := failing.ForceFlush(context.Background()); err == nil || !strings.Contains(err.Error(), "collector down") {
		t.Errorf("ForceFlush to a failing exporter: %v", err)
	}
	_ = failing.Shutdown(context.Background())
}

type failingExporter struct{}

func (failingExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error {
	return errors.New("collector down")
}
func (failingExporter) Shutdown(context.Context) error { return nil }
