package tracing

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/sdk/resource"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// recordingClient is an OTLP client that keeps the batches uploaded to
// it, decoded from the wire as a collector would; while gate is not nil,
// an upload waits for it to close. With fail set, every upload fails.
type recordingClient struct {
	mu       sync.Mutex
	batches  [][]string // span names
	spans    []*tracepb.Span
	exported chan struct{}
	gate     chan struct{}
	stopped  bool
	fail     bool
}

func newRecordingClient() *recordingClient {
	return &recordingClient{exported: make(chan struct{}, 100)}
}

func (c *recordingClient) Start(context.Context) error { return nil }

func (c *recordingClient) UploadTraces(ctx context.Context, rss []*tracepb.ResourceSpans) error {
	if c.gate != nil {
		<-c.gate
	}
	if c.fail {
		return errors.New("collector down")
	}
	var names []string
	spans := decodedSpans(rss)
	for _, s := range spans {
		names = append(names, s.GetName())
	}
	c.mu.Lock()
	c.batches = append(c.batches, names)
	c.spans = append(c.spans, spans...)
	c.mu.Unlock()
	c.exported <- struct{}{}
	return nil
}

func (c *recordingClient) Stop(context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	return nil
}

func (c *recordingClient) got() [][]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]string(nil), c.batches...)
}

// decodedSpans marshals rss as a client does, and returns the spans a
// collector decodes from it.
func decodedSpans(rss []*tracepb.ResourceSpans) []*tracepb.Span {
	raw, err := proto.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: rss})
	if err != nil {
		panic(err)
	}
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(raw, &req); err != nil {
		panic(err)
	}
	var spans []*tracepb.Span
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			spans = append(spans, ss.GetSpans()...)
		}
	}
	return spans
}

// testProvider returns a tracer provider whose spans go through a batcher
// with settings s to c, sampled unless sampled is false.
func testProvider(c otlptrace.Client, s batchSettings, sampled bool) *provider {
	ratio := 1.0
	if !sampled {
		ratio = 0
	}
	return newProvider(ratioSampler(ratio, false), newBatcher(c, resource.Empty(), s))
}

func endSpans(p *provider, names ...string) {
	for _, n := range names {
		_, s := p.Tracer(ScopeName).Start(context.Background(), n)
		s.End()
	}
}

// A full batch is exported at once, without waiting for the schedule
// delay; the spans of a batch not full wait for it.
func TestAFullBatchIsExportedAtOnceTheRestAfterTheDelay(t *testing.T) {
	e := newRecordingClient()
	p := testProvider(e, batchSettings{delay: 300 * time.Millisecond, exportTimeout: time.Second, maxQueue: 100, maxBatch: 3}, true)
	defer p.batch.Shutdown(context.Background())
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

	e := newRecordingClient()
	e.gate = make(chan struct{})
	p := testProvider(e, batchSettings{delay: time.Hour, exportTimeout: time.Second, maxQueue: 4, maxBatch: 2}, true)
	b := p.batch
	endSpans(p, "a", "b") // a full batch: the export goroutine takes it and waits at the gate
	for deadline := time.Now().Add(5 * time.Second); ; {
		b.mu.Lock()
		n := len(b.queue.spans)
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
	_ = b.Shutdown(context.Background()) // the drop is reported by whichever export comes next
	endSpans(p, "after")
	got := e.got()
	var names []string
	for _, batch := range got {
		if len(batch) > 2 {
			t.Errorf("batch %v is larger than the batch size 2", batch)
		}
		names = append(names, batch...)
	}
	if strings.Join(names, ",") != "a,b,c,d,e,f" || !e.stopped {
		t.Errorf("exported %v (stopped %v), want a..f and the client stopped", names, e.stopped)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != 1 || !strings.Contains(reported[0].Error(), "dropped 2 spans") {
		t.Errorf("reported %v, want the drop", reported)
	}
}

// Spans that were not sampled are not exported.
func TestUnsampledSpansAreNotExported(t *testing.T) {
	e := newRecordingClient()
	p := testProvider(e, batchSettings{delay: time.Hour, exportTimeout: time.Second, maxQueue: 10, maxBatch: 10}, false)
	endSpans(p, "a")
	if err := p.batch.Shutdown(context.Background()); err != nil {
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

// An export sends what is queued now; one that fails is returned and
// reported.
func TestAnExportSendsWhatIsQueuedAndReturnsFailures(t *testing.T) {
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {}))
	e := newRecordingClient()
	p := testProvider(e, batchSettings{delay: time.Hour, exportTimeout: time.Second, maxQueue: 10, maxBatch: 10}, true)
	defer p.batch.Shutdown(context.Background())
	endSpans(p, "a")
	if err := p.batch.export(context.Background()); err != nil || len(e.got()) != 1 {
		t.Errorf("export: %v, exported %v", err, e.got())
	}
	failing := testProvider(&recordingClient{fail: true}, batchSettings{delay: time.Hour, exportTimeout: time.Second, maxQueue: 10, maxBatch: 10}, true)
	endSpans(failing, "a")
	if err := failing.batch.export(context.Background()); err == nil || !strings.Contains(err.Error(), "collector down") {
		t.Errorf("export to a failing client: %v", err)
	}
	_ = failing.batch.Shutdown(context.Background())
}

// A plugin chooses some of what spans carry (its error texts, up to
// max_output_bytes): a string in a span is cut to 4 KiB, at a character,
// and the queue holds no more than 16 MiB of spans, however many it may
// hold, the rest dropped and reported.
func TestPluginChosenTextsCannotGrowTheQueueWithoutBound(t *testing.T) {
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {}))
	c := newRecordingClient()
	p := testProvider(c, batchSettings{delay: time.Hour, exportTimeout: time.Second, maxQueue: 1 << 20, maxBatch: 1 << 20}, true)
	defer p.batch.Shutdown(context.Background())
	huge := strings.Repeat("é", 32<<10) // 64 KiB, two bytes a character
	for range 8000 {
		_, s := p.Tracer(ScopeName).Start(context.Background(), "call_tool hostile")
		s.SetStatus(codes.Error, huge)
		s.End()
	}
	p.batch.mu.Lock()
	queued, bytes, dropped := len(p.batch.queue.spans), len(p.batch.queue.buf), p.batch.dropped
	p.batch.mu.Unlock()
	if bytes > maxQueueBytes+2*maxSpanString || dropped == 0 || queued+dropped != 8000 {
		t.Fatalf("queued %d spans in %d bytes, dropped %d: want at most %d bytes, the rest dropped", queued, bytes, dropped, maxQueueBytes)
	}
	_ = p.batch.export(context.Background())
	if d := c.spans[0].GetStatus().GetMessage(); len(d) != maxSpanString || d != huge[:maxSpanString] {
		t.Errorf("a status description of %d bytes was sent as %d bytes, want the first %d", len(huge), len(d), maxSpanString)
	}
}
