package tracing

import (
	"encoding/binary"

	"go.opentelemetry.io/otel/trace"
)

// sampler decides, as the SDK's samplers of the same names do
// (OTEL_TRACES_SAMPLER), whether a span is sampled, from its parent and
// its trace ID alone: the SDK's take a context and a record of the span
// to start, and cost a sampled span a third of its start
// (TestSamplersDecideAsTheSDKsDo checks each against the SDK's).
type sampler struct {
	// parentBased: a span with a parent is sampled when its parent is
	// (parentbased_*); the root decides the rest.
	parentBased bool
	// root samples a span whose trace ID's last 63 bits, big-endian, are
	// below bound (traceidratio's); all, every span (always_on, or a ratio
	// of 1 or more).
	all   bool
	bound uint64
}

// ratioSampler returns the sampler of traceidratio with ratio, or of
// parentbased_traceidratio.
func ratioSampler(ratio float64, parentBased bool) sampler {
	if ratio >= 1 {
		return sampler{parentBased: parentBased, all: true}
	}
	return sampler{parentBased: parentBased, bound: uint64(max(ratio, 0) * (1 << 63))}
}

// sampled reports whether a span of trace tid under parent (invalid for
// a root) is sampled.
func (s sampler) sampled(parent trace.SpanContext, tid trace.TraceID) bool {
	if s.parentBased && parent.IsValid() {
		return parent.IsSampled()
	}
	return s.all || binary.BigEndian.Uint64(tid[8:16])>>1 < s.bound
}
