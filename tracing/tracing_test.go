package tracing

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/internal/testrig/otlptest"
	"go.opentelemetry.io/otel/trace"
)

// env is environment variables to set for a test, which then cannot run
// in parallel: the OpenTelemetry SDK reads the process's environment.
type env map[string]string

// set sets e's variables until the test ends, and unsets the others New
// reads.
func (e env) set(t *testing.T) {
	for _, key := range []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG",
		"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL",
		"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES"} {
		t.Setenv(key, e[key])
	}
}

// exportOne starts and ends a span named name with tc and the environment
// e, and shuts the tracing down, which exports it.
func exportOne(t *testing.T, tc config.TelemetryConfig, e env, name string) {
	t.Helper()
	e.set(t)
	tr, err := New(t.Context(), tc, "v1.2.3")
	if err != nil || tr == nil {
		t.Fatalf("New: %v, %v", tr, err)
	}
	_, span := tr.Tracer().Start(t.Context(), name)
	span.End()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tr.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

// wantSpan checks that r received the span name, from the resource of
// service mcphost (or service), in mcphost's scope.
func wantSpan(t *testing.T, r *otlptest.Receiver, name, service string) {
	t.Helper()
	if rs := r.Next(t, 10*time.Second); rs != nil {
		attrs := map[string]string{}
		for _, kv := range rs.GetResource().GetAttributes() {
			attrs[kv.GetKey()] = kv.GetValue().GetStringValue()
		}
		if attrs["service.name"] != service || attrs["service.version"] != "v1.2.3" {
			t.Errorf("resource %v: want service.name %s and service.version v1.2.3", attrs, service)
		}
		ss := rs.GetScopeSpans()
		if len(ss) != 1 || ss[0].GetScope().GetName() != ScopeName || len(ss[0].GetSpans()) != 1 || ss[0].GetSpans()[0].GetName() != name {
			t.Errorf("scope spans %v: want one span %q in scope %s", ss, name, ScopeName)
		}
	}
}

// wantNone checks that r received nothing.
func wantNone(t *testing.T, r *otlptest.Receiver) {
	t.Helper()
	if rs := r.Received(); len(rs) > 0 {
		t.Errorf("received %v, want nothing", rs)
	}
}

func otlp(protocol, endpoint string) config.TelemetryConfig {
	return config.TelemetryConfig{Traces: config.TracesOTLP, OTLPProtocol: protocol, OTLPEndpoint: endpoint, TraceSampleRatio: 1}
}

// Spans reach a collector in the OTLP wire format of either protocol, at
// the endpoint the config names.
func TestSpansReachTheCollectorOverEitherProtocol(t *testing.T) {
	overHTTP, overGRPC := otlptest.HTTP(t), otlptest.GRPC(t)
	exportOne(t, otlp(config.OTLPHTTP, overHTTP.URL), env{}, "over http")
	wantSpan(t, overHTTP, "over http", "mcphost")
	exportOne(t, otlp(config.OTLPGRPC, overGRPC.URL), env{}, "over grpc")
	wantSpan(t, overGRPC, "over grpc", "mcphost")
}

// The standard environment variables win over the config: the endpoint,
// the protocol, the service name; OTEL_TRACES_EXPORTER turns traces on or
// off, and names only what mcphost has.
func TestTheEnvironmentWinsOverTheConfig(t *testing.T) {
	configured, fromEnv, fromEnvGRPC := otlptest.HTTP(t), otlptest.HTTP(t), otlptest.GRPC(t)
	exportOne(t, otlp(config.OTLPHTTP, configured.URL), env{"OTEL_EXPORTER_OTLP_ENDPOINT": fromEnv.URL, "OTEL_SERVICE_NAME": "team-tools"}, "env endpoint")
	wantSpan(t, fromEnv, "env endpoint", "team-tools")
	wantNone(t, configured)
	exportOne(t, otlp(config.OTLPHTTP, ""), env{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT": fromEnvGRPC.URL}, "env protocol")
	wantSpan(t, fromEnvGRPC, "env protocol", "mcphost")
	exportOne(t, config.TelemetryConfig{Traces: config.TracesOff, TraceSampleRatio: 1}, env{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": fromEnv.URL}, "env on")
	wantSpan(t, fromEnv, "env on", "mcphost")

	for _, e := range []env{{"OTEL_TRACES_EXPORTER": "none"}, {"OTEL_SDK_DISABLED": "true"}} {
		e.set(t)
		if tr, err := New(t.Context(), otlp(config.OTLPHTTP, configured.URL), "v1.2.3"); tr != nil || err != nil {
			t.Errorf("%v: %v, %v; want traces off", e, tr, err)
		}
	}
	for _, e := range []env{{"OTEL_TRACES_EXPORTER": "zipkin"}, {"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}} {
		e.set(t)
		if _, err := New(t.Context(), otlp(config.OTLPHTTP, configured.URL), "v1.2.3"); err == nil {
			t.Errorf("%v: no error", e)
		}
	}
}

// trace_sample_ratio samples that share of new traces; OTEL_TRACES_SAMPLER
// wins over it.
func TestSamplingFollowsTheRatioUnlessTheEnvironmentSaysOtherwise(t *testing.T) {
	r := otlptest.HTTP(t)
	for _, c := range []struct {
		ratio   float64
		e       env
		sampled bool
	}{
		{1, env{}, true},
		{0, env{}, false},
		{1, env{"OTEL_TRACES_SAMPLER": "always_off"}, false},
		{0, env{"OTEL_TRACES_SAMPLER": "always_on"}, true},
	} {
		tc := otlp(config.OTLPHTTP, r.URL)
		tc.TraceSampleRatio = c.ratio
		c.e.set(t)
		tr, err := New(t.Context(), tc, "v1.2.3")
		if err != nil {
			t.Fatal(err)
		}
		_, span := tr.Tracer().Start(t.Context(), "x")
		if span.IsRecording() != c.sampled {
			t.Errorf("ratio %v, %v: sampled %v, want %v", c.ratio, c.e, span.IsRecording(), c.sampled)
		}
		span.End()
		_ = tr.Shutdown(t.Context())
	}
}

// OTEL_TRACES_SAMPLER names the SDK's samplers, with the ratio of
// OTEL_TRACES_SAMPLER_ARG; one mcphost does not have, or a ratio not from
// 0 to 1, stops New with an error that names the variable.
func TestTheSamplerVariablesAreReadAsTheSDKReadsThem(t *testing.T) {
	for _, c := range []struct {
		e       env
		sampled bool
	}{
		{env{"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0"}, false},
		{env{"OTEL_TRACES_SAMPLER": "TraceIDRatio"}, true}, // no argument: all
		{env{"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": " 1 "}, true},
		{env{"OTEL_TRACES_SAMPLER": "parentbased_always_off"}, false},
		{env{"OTEL_TRACES_SAMPLER": "parentbased_always_on"}, true},
	} {
		c.e.set(t)
		s, err := samplerFromEnv(0.5)
		if err != nil {
			t.Errorf("%v: %v", c.e, err)
			continue
		}
		if got := s.sampled(trace.SpanContext{}, newTraceID()); got != c.sampled {
			t.Errorf("%v: sampled %v, want %v", c.e, got, c.sampled)
		}
	}
	for _, c := range []struct {
		e        env
		variable string
	}{
		{env{"OTEL_TRACES_SAMPLER": "jaeger_remote"}, "OTEL_TRACES_SAMPLER"},
		{env{"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "1.5"}, "OTEL_TRACES_SAMPLER_ARG"},
		{env{"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "half"}, "OTEL_TRACES_SAMPLER_ARG"},
		{env{"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "NaN"}, "OTEL_TRACES_SAMPLER_ARG"},
	} {
		c.e.set(t)
		if _, err := New(t.Context(), otlp(config.OTLPHTTP, "http://127.0.0.1:1"), "v"); err == nil || !strings.Contains(err.Error(), c.variable) {
			t.Errorf("%v: New: %v, want an error naming %s", c.e, err, c.variable)
		}
	}
}
