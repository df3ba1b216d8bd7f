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
	"strconv"
	"strings"

	"github.com/mcphost/mcphost/config"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of mcphost's spans.
const ScopeName = "github.com/mcphost/mcphost"

// Tracing is a tracer provider that exports mcphost's spans.
type Tracing struct {
	provider *provider
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
	sampler, err := samplerFromEnv(tc.TraceSampleRatio)
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
	client, err := newClient(tc)
	if err != nil {
		return nil, err
	}
	if err := client.Start(ctx); err != nil {
		return nil, fmt.Errorf("[telemetry] traces: the OTLP exporter: %w", err)
	}
	return &Tracing{provider: newProvider(sampler, newBatcher(client, res, batching))}, nil
}

// samplerFromEnv returns the sampler OTEL_TRACES_SAMPLER and
// OTEL_TRACES_SAMPLER_ARG name, as the SDK reads them, or, when the former
// is not set (or empty), the one that samples ratio of new traces and
// follows a parent's decision. A sampler the SDK does not have, or a ratio
// not within 0 and 1, is an error that names its variable.
func samplerFromEnv(ratio float64) (sampler, error) {
	name := firstSet("OTEL_TRACES_SAMPLER")
	if name == "" {
		return ratioSampler(ratio, true), nil
	}
	lower := strings.ToLower(name)
	parentBased := strings.HasPrefix(lower, "parentbased_")
	switch strings.TrimPrefix(lower, "parentbased_") {
	case "always_on":
		return ratioSampler(1, parentBased), nil
	case "always_off":
		return ratioSampler(0, parentBased), nil
	case "traceidratio":
		arg := firstSet("OTEL_TRACES_SAMPLER_ARG")
		if arg == "" {
			return ratioSampler(1, parentBased), nil
		}
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || !(r >= 0 && r <= 1) { // NaN too
			return sampler{}, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG = %q: want a ratio from 0 to 1", arg)
		}
		return ratioSampler(r, parentBased), nil
	}
	return sampler{}, fmt.Errorf("OTEL_TRACES_SAMPLER = %q: mcphost has always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off and parentbased_traceidratio", name)
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

// newClient returns the OTLP client, not started, of the protocol and
// endpoint that the environment, else tc, names; the SDK's client reads
// the rest of its settings (headers, timeout, TLS, compression) from the
// environment.
func newClient(tc config.TelemetryConfig) (otlptrace.Client, error) {
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
		return otlptracehttp.NewClient(opts...), nil
	case config.OTLPGRPC:
		var opts []otlptracegrpc.Option
		if endpoint != nil {
			opts = append(opts, otlptracegrpc.WithEndpoint(endpoint.Host))
			if endpoint.Scheme == "http" {
				opts = append(opts, otlptracegrpc.WithInsecure())
			}
		}
		return otlptracegrpc.NewClient(opts...), nil
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
	return t.provider.batch.Shutdown(ctx)
}
