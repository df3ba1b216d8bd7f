package tracing

import (
	"encoding/binary"
	"math"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// A span is written in OTLP's protobuf wire format (opentelemetry-proto,
// trace/v1/trace.proto) as it ends, into the batch it is exported with:
// no protobuf objects are built for it, field by field, as the SDK's
// exporters do, and nothing of it stays for the collector to scan but
// bytes. What is written is what the SDK's exporters send for the same
// span (TestSpansAreEncodedAsTheSDKEncodesThem decodes both).

// Protobuf wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// OTLP's span flags beside the W3C trace flags (SpanFlags).
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

func appendTag(b []byte, field, wire int) []byte {
	return binary.AppendUvarint(b, uint64(field)<<3|uint64(wire))
}

func appendVarint(b []byte, field int, v uint64) []byte {
	return binary.AppendUvarint(appendTag(b, field, wireVarint), v)
}

func appendFixed64(b []byte, field int, v uint64) []byte {
	return binary.LittleEndian.AppendUint64(appendTag(b, field, wireFixed64), v)
}

func appendFixed32(b []byte, field int, v uint32) []byte {
	return binary.LittleEndian.AppendUint32(appendTag(b, field, wireFixed32), v)
}

// appendBytes appends v as field, of the bytes wire type, as it is.
func appendBytes[T string | []byte](b []byte, field int, v T) []byte {
	b = binary.AppendUvarint(appendTag(b, field, wireBytes), uint64(len(v)))
	return append(b, v...)
}

// appendString appends v as a string field, as spanString makes it.
func appendString(b []byte, field int, v string) []byte {
	return appendBytes(b, field, spanString(v))
}

// beginMessage starts field, a message, whose length is not known yet: it
// returns b with room bytes kept for the length, and where they are, for
// endMessage.
func beginMessage(b []byte, field, room int) ([]byte, int) {
	b = appendTag(b, field, wireBytes)
	at := len(b)
	for range room {
		b = append(b, 0)
	}
	return b, at
}

// endMessage writes the length of the message begun at at with room
// bytes for it, moving its body when the length takes more or fewer.
func endMessage(b []byte, at, room int) []byte {
	n := len(b) - at - room
	if room == 1 && n < 0x80 {
		b[at] = byte(n)
		return b
	}
	var length [binary.MaxVarintLen64]byte
	k := binary.PutUvarint(length[:], uint64(n))
	if k != room {
		if k > room {
			b = append(b, length[:k-room]...) // room for the longer length
		}
		copy(b[at+k:], b[at+room:at+room+n])
		b = b[:at+k+n]
	}
	copy(b[at:], length[:k])
	return b
}

// appendKeyValue appends kv as field, a KeyValue, its key written as
// key: kv.Key as spanString makes it.
func appendKeyValue(b []byte, field int, key string, v attribute.Value) []byte {
	b, at := beginMessage(b, field, 1)
	if key != "" {
		b = appendBytes(b, 1, key)
	}
	b = appendValue(b, 2, v)
	return endMessage(b, at, 1)
}

// appendKeyValues appends each of kvs as field.
func appendKeyValues(b []byte, field int, kvs []attribute.KeyValue) []byte {
	for _, kv := range kvs {
		b = appendKeyValue(b, field, spanString(string(kv.Key)), kv.Value)
	}
	return b
}

// appendValue appends v as field, an AnyValue. The members of its oneof
// are written even when they are zero: a oneof's member has presence.
func appendValue(b []byte, field int, v attribute.Value) []byte {
	b, at := beginMessage(b, field, 1)
	switch v.Type() {
	case attribute.STRING:
		b = appendString(b, 1, v.AsString())
	case attribute.BOOL:
		var n uint64
		if v.AsBool() {
			n = 1
		}
		b = appendVarint(b, 2, n)
	case attribute.INT64:
		b = appendVarint(b, 3, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		b = appendFixed64(b, 4, math.Float64bits(v.AsFloat64()))
	case attribute.BYTESLICE:
		b = appendBytes(b, 7, v.AsByteSlice())
	case attribute.BOOLSLICE, attribute.INT64SLICE, attribute.FLOAT64SLICE, attribute.STRINGSLICE, attribute.SLICE:
		b = appendArray(b, 5, v)
	case attribute.EMPTY:
	default:
		b = appendString(b, 1, "INVALID") // as the SDK's exporters
	}
	return endMessage(b, at, 1)
}

// appendArray appends the slice v as field, an ArrayValue.
func appendArray(b []byte, field int, v attribute.Value) []byte {
	b, at := beginMessage(b, field, 1)
	switch v.Type() {
	case attribute.BOOLSLICE:
		b = appendValues(b, v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		b = appendValues(b, v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		b = appendValues(b, v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		b = appendValues(b, v.AsStringSlice(), attribute.StringValue)
	case attribute.SLICE:
		b = appendValues(b, v.AsSlice(), func(x attribute.Value) attribute.Value { return x })
	}
	return endMessage(b, at, 1)
}

// appendValues appends each of xs, as value makes it, as field 1 of an
// ArrayValue.
func appendValues[T any](b []byte, xs []T, value func(T) attribute.Value) []byte {
	for _, x := range xs {
		b = appendValue(b, 1, value(x))
	}
	return b
}

// maxSpanString bounds the bytes of a string in a span: a plugin chooses
// some of them (its error texts, up to max_output_bytes), and a queue of
// spans each holding megabytes would hold gigabytes.
const maxSpanString = 4 << 10

// spanString is s as a span carries it: its invalid UTF-8 replaced by
// U+FFFD (protobuf's strings are UTF-8, and a collector refuses a whole
// export with one that is not; the SDK's exporters fail to marshal it,
// and lose the batch), cut to maxSpanString bytes, at a character's
// start.
func spanString(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(s) <= maxSpanString {
		return s
	}
	cut := maxSpanString
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// appendSpan appends s, ended, with its attributes attrs, as field 2 of a
// ScopeSpans: a Span.
func appendSpan(b []byte, s *span, attrs *attributes) []byte {
	b, at := beginMessage(b, 2, 2) // a span takes 128 bytes or more
	tid, sid := s.sc.TraceID(), s.sc.SpanID()
	b = appendBytes(b, 1, tid[:])
	b = appendBytes(b, 2, sid[:])
	if state := s.sc.TraceState(); state.Len() > 0 {
		b = appendString(b, 3, state.String())
	}
	if s.parentID.IsValid() {
		b = appendBytes(b, 4, s.parentID[:])
	}
	if s.name != "" {
		b = appendString(b, 5, s.name)
	}
	if s.kind != trace.SpanKindUnspecified {
		b = appendVarint(b, 6, uint64(s.kind)) // OTLP numbers the kinds as the API does
	}
	b = appendFixed64(b, 7, unixNano(s.start.UnixNano()))
	b = appendFixed64(b, 8, unixNano(s.end))
	b = attrs.appendTo(b, 10)
	if m := s.more; m != nil {
		for _, e := range m.events {
			b = appendEvent(b, e)
		}
		if m.droppedEvents > 0 {
			b = appendVarint(b, 12, uint64(m.droppedEvents))
		}
		for _, l := range m.links {
			b = appendLink(b, l)
		}
		if m.droppedLinks > 0 {
			b = appendVarint(b, 14, uint64(m.droppedLinks))
		}
	}
	b = appendStatus(b, s.status, s.statusDescription)
	b = appendFixed32(b, 16, spanFlags(s.sc.TraceFlags(), s.parentRemote))
	return endMessage(b, at, 2)
}

// appendTo appends the attributes, then their dropped count as the field
// droppedField unless none was dropped.
func (a *attributes) appendTo(b []byte, droppedField int) []byte {
	b = append(b, a.buf...)
	if a.dropped > 0 {
		b = appendVarint(b, droppedField, uint64(a.dropped))
	}
	return b
}

// spanFlags are OTLP's flags of a span whose own trace flags are tf and
// whose parent is remote or not, or of a link to a span (tf its flags).
func spanFlags(tf trace.TraceFlags, remote bool) uint32 {
	flags := uint32(tf) | flagHasIsRemote
	if remote {
		flags |= flagIsRemote
	}
	return flags
}

// appendEvent appends e as field 11 of a Span.
func appendEvent(b []byte, e event) []byte {
	b, at := beginMessage(b, 11, 1)
	if t := unixNano(e.time); t != 0 {
		b = appendFixed64(b, 1, t)
	}
	if e.name != "" {
		b = appendString(b, 2, e.name)
	}
	b = e.attrs.appendTo(b, 4)
	return endMessage(b, at, 1)
}

// appendLink appends l as field 13 of a Span. Like the SDK's exporters,
// it leaves out the linked span's trace state.
func appendLink(b []byte, l link) []byte {
	b, at := beginMessage(b, 13, 1)
	tid, sid := l.sc.TraceID(), l.sc.SpanID()
	b = appendBytes(b, 1, tid[:])
	b = appendBytes(b, 2, sid[:])
	b = l.attrs.appendTo(b, 5)
	b = appendFixed32(b, 6, spanFlags(l.sc.TraceFlags(), l.sc.IsRemote()))
	return endMessage(b, at, 1)
}

// appendStatus appends field 15 of a Span, its Status, always present as
// in the SDK's exporters.
func appendStatus(b []byte, code codes.Code, description string) []byte {
	b, at := beginMessage(b, 15, 1)
	if description != "" {
		b = appendString(b, 2, description)
	}
	switch code { // OTLP: UNSET 0, OK 1, ERROR 2
	case codes.Ok:
		b = appendVarint(b, 3, 1)
	case codes.Error:
		b = appendVarint(b, 3, 2)
	}
	return endMessage(b, at, 1)
}

// unixNano is t in nanoseconds since the epoch, 0 before it.
func unixNano(t int64) uint64 { return uint64(max(0, t)) }
