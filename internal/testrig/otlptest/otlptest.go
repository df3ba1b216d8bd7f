// Package otlptest runs OpenTelemetry collectors for tests: loopback
// receivers of OTLP trace exports, over HTTP/protobuf and gRPC, that
// decode what they receive with the OTLP protobuf types, as a real
// collector does.
package otlptest

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// Receiver collects the spans exported to it.
type Receiver struct {
	// URL is the base URL to export to (otlp_endpoint,
	// OTEL_EXPORTER_OTLP_ENDPOINT).
	URL   string
	spans chan *tracepb.ResourceSpans
}

// HTTP starts a receiver of OTLP/HTTP protobuf exports at /v1/traces,
// stopped when the test ends. An export that does not decode fails t.
func HTTP(t testing.TB) *Receiver {
	r := &Receiver{spans: make(chan *tracepb.ResourceSpans, 1024)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var export coltracepb.ExportTraceServiceRequest
		if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(body, &export) != nil {
			t.Errorf("an export to %s as %s does not decode", req.URL.Path, req.Header.Get("Content-Type"))
			http.Error(w, "bad export", http.StatusBadRequest)
			return
		}
		r.take(&export)
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// GRPC starts a receiver of OTLP/gRPC exports, stopped when the test ends.
func GRPC(t testing.TB) *Receiver {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &Receiver{spans: make(chan *tracepb.ResourceSpans, 1024), URL: "http://" + ln.Addr().String()}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, traceService{r: r})
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return r
}

type traceService struct {
	coltracepb.UnimplementedTraceServiceServer
	r *Receiver
}

func (s traceService) Export(_ context.Context, export *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	s.r.take(export)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

func (r *Receiver) take(export *coltracepb.ExportTraceServiceRequest) {
	for _, rs := range export.GetResourceSpans() {
		r.spans <- rs
	}
}

// Next returns the next resource's spans received, failing t when none
// arrives within timeout.
func (r *Receiver) Next(t testing.TB, timeout time.Duration) *tracepb.ResourceSpans {
	t.Helper()
	select {
	case rs := <-r.spans:
		return rs
	case <-time.After(timeout):
		t.Fatalf("no spans reached the receiver within %v", timeout)
		return nil
	}
}

// Received returns the spans received so far, without waiting.
func (r *Receiver) Received() []*tracepb.ResourceSpans {
	var out []*tracepb.ResourceSpans
	for {
		select {
		case rs := <-r.spans:
			out = append(out, rs)
		default:
			return out
		}
	}
}

// Spans returns every span of rs, of every scope.
func Spans(rs []*tracepb.ResourceSpans) []*tracepb.Span {
	var out []*tracepb.Span
	for _, r := range rs {
		for _, ss := range r.GetScopeSpans() {
			out = append(out, ss.GetSpans()...)
		}
	}
	return out
}

// Attrs returns a span's attributes as strings: ints and doubles as Go
// formats them, bools as true or false.
func Attrs(s *tracepb.Span) map[string]string {
	out := map[string]string{}
	for _, kv := range s.GetAttributes() {
		switch v := kv.GetValue().GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			out[kv.GetKey()] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			out[kv.GetKey()] = strconv.FormatInt(v.IntValue, 10)
		case *commonpb.AnyValue_DoubleValue:
			out[kv.GetKey()] = strconv.FormatFloat(v.DoubleValue, 'g', -1, 64)
		case *commonpb.AnyValue_BoolValue:
			out[kv.GetKey()] = strconv.FormatBool(v.BoolValue)
		}
	}
	return out
}
