// Package tracing sends mcphost's spans to an OpenTelemetry collector over
// OTLP, HTTP/protobuf or gRPC ([telemetry] traces in mcphost.toml). The
// standard OTEL_* environment variables win over the config where both
// are set. The spans themselves are started where the work is: package
// host starts one per request and per plugin call, and the host
// functions' and the sandbox's start theirs under the span of the call
// that made them (docs/observability.md).
package tracing

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/mcphost/mcphost/config"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of mcphost's spans.
const ScopeName = "github.com/mcphost/mcphost"

// Tracing is a tracer provider that exports mcphost's spans.
type Tracing struct {
	provider *sdktrace.TracerProvider
}

// New returns the tracing that tc and the process's environment ask for,
// or nil when traces are off: OTEL_SDK_DISABLED
// or OTEL_TRACES_EXPORTER = "none" turn them off, OTEL_TRACES_EXPORTER =
// "otlp" on; OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL, _ENDPOINT and
// OTEL_TRACES_SAMPLER win over otlp_protocol, otlp_endpoint and
// trace_sample_ratio; OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES over
// the resource's service.name (mcphost) and service.version (version).
func New(ctx context.Context, tc config.TelemetryConfig, version string) (*Tracing, error) {
	on, err := enabled(tc)
	if err != nil || !on {
		return nil, err
	}
	batching, err := batchSettingsFromEnv()
	if err != nil {
		return nil, err
	}
	exporter, err := newExporter(ctx, tc)
	if err != nil {
		return nil, err
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName("mcphost"), semconv.ServiceVersion(version)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(), // after: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
	)
	if err != nil {
		return nil, fmt.Errorf("[telemetry] traces: the resource: %w", err)
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithSpanProcessor(newBatcher(exporter, batching)), sdktrace.WithResource(res)}
	if os.Getenv("OTEL_TRACES_SAMPLER") == "" { // else the SDK reads it
		opts = append(opts, sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(tc.TraceSampleRatio))))
	}
	return &Tracing{provider: sdktrace.NewTracerProvider(opts...)}, nil
}

// enabled reports whether spans are exported.
func enabled(tc config.TelemetryConfig) (bool, error) {
	if strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED")), "true") {
		return false, nil
	}
	switch exporter := strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")); exporter {
	case "":
		return tc.Traces == config.TracesOTLP, nil
	case "none":
		return false, nil
	case "otlp":
		return true, nil
	default:
		return false, fmt.Errorf("OTEL_TRACES_EXPORTER = %q: mcphost exports traces over OTLP only (set it to \"otlp\" or \"none\")", exporter)
	}
}

// newExporter returns the OTLP exporter of the protocol and endpoint
// that the environment, else tc, names.
func newExporter(ctx context.Context, tc config.TelemetryConfig) (sdktrace.SpanExporter, error) {
	protocol := firstSet("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
	if protocol == "" {
		protocol = tc.OTLPProtocol
	}
	// The config's endpoint applies only when the environment names none:
	// an option given in code would win over the environment.
	var endpoint *url.URL
	if tc.OTLPEndpoint != "" && firstSet("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT") == "" {
		u, err := url.Parse(tc.OTLPEndpoint)
		if err != nil {
			return nil, fmt.Errorf("[telemetry] otlp_endpoint: %w", err)
		}
		endpoint = u
	}
	switch protocol {
	case config.OTLPHTTP, "":
		var opts []otlptracehttp.Option
		if endpoint != nil {
			// A base URL, as OTEL_EXPORTER_OTLP_ENDPOINT: the signal's path
			// follows it.
			opts = append(opts, otlptracehttp.WithEndpoint(endpoint.Host),
				otlptracehttp.WithURLPath(strings.TrimSuffix(endpoint.Path, "/")+"/v1/traces"))
			if endpoint.Scheme == "http" {
				opts = append(opts, otlptracehttp.WithInsecure())
			}
		}
		return otlptracehttp.New(ctx, opts...)
	case config.OTLPGRPC:
		var opts []otlptracegrpc.Option
		if endpoint != nil {
			opts = append(opts, otlptracegrpc.WithEndpoint(endpoint.Host))
			if endpoint.Scheme == "http" {
				opts = append(opts, otlptracegrpc.WithInsecure())
			}
		}
		return otlptracegrpc.New(ctx, opts...)
	}
	return nil, fmt.Errorf("OTLP protocol %q: mcphost sends %q or %q", protocol, config.OTLPHTTP, config.OTLPGRPC)
}

// firstSet returns the value of the first of keys that is set, "" when
// none is.
func firstSet(keys ...string) string {
	for _, k := range keys {
		if v := strings.TrimSpace(os.Getenv(k)); v != "" {
			return v
		}
	}
	return ""
}

// Tracer returns the tracer of mcphost's spans.
func (t *Tracing) Tracer() trace.Tracer {
	return t.provider.Tracer(ScopeName)
}

// Shutdown exports the spans not sent yet and stops, within ctx.
func (t *Tracing) Shutdown(ctx context.Context) error {
	return t.provider.Shutdown(ctx)
}
