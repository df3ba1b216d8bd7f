package tracing

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Each sampler decides as the SDK's of the same name does, for spans
// with no parent and under parents local and remote, sampled or not, for
// random trace IDs and ratios, ratios past 0 and 1 and the bounds' own
// neighbours among them.
func TestSamplersDecideAsTheSDKsDo(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ratios := []float64{0, 1, -1, 2, 0.5, 1e-9, 1 - 1e-9}
	for range 20 {
		ratios = append(ratios, rng.Float64())
	}
	type pair struct {
		name string
		own  sampler
		sdk  sdktrace.Sampler
	}
	var samplers []pair
	for _, r := range ratios {
		samplers = append(samplers,
			pair{"traceidratio", ratioSampler(r, false), sdktrace.TraceIDRatioBased(r)},
			pair{"parentbased_traceidratio", ratioSampler(r, true), sdktrace.ParentBased(sdktrace.TraceIDRatioBased(r))})
	}
	samplers = append(samplers,
		pair{"always_on", ratioSampler(1, false), sdktrace.AlwaysSample()},
		pair{"always_off", ratioSampler(0, false), sdktrace.NeverSample()},
		pair{"parentbased_always_on", ratioSampler(1, true), sdktrace.ParentBased(sdktrace.AlwaysSample())},
		pair{"parentbased_always_off", ratioSampler(0, true), sdktrace.ParentBased(sdktrace.NeverSample())})
	parents := []trace.SpanContext{{}}
	for _, remote := range []bool{false, true} {
		for _, flags := range []trace.TraceFlags{0, trace.FlagsSampled} {
			parents = append(parents, trace.NewSpanContext(trace.SpanContextConfig{TraceID: newTraceID(), SpanID: newSpanID(), TraceFlags: flags, Remote: remote}))
		}
	}
	for _, s := range samplers {
		for range 500 {
			tid := newTraceID()
			if rng.IntN(4) == 0 { // a trace ID at the bound, or next to it
				bound := s.own.bound + uint64(rng.IntN(3)) - 1
				binary.BigEndian.PutUint64(tid[8:], bound<<1)
			}
			for _, parent := range parents {
				ctx := trace.ContextWithSpanContext(context.Background(), parent)
				want := s.sdk.ShouldSample(sdktrace.SamplingParameters{ParentContext: ctx, TraceID: tid}).Decision == sdktrace.RecordAndSample
				if got := s.own.sampled(parent, tid); got != want {
					t.Fatalf("%s (%v): trace %s, parent %v: sampled %v, the SDK's %v", s.name, s.own, tid, parent, got, want)
				}
			}
		}
	}
}
