package sandbox

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
)

// redactedText replaces a secret value in what the sandbox logs and in its
// errors.
const redactedText = "[REDACTED]"

// configValues returns the values the plugin reads with config_get: Config
// and Secrets together.
func configValues(g Grants) map[string]string {
	out := maps.Clone(g.Config)
	if out == nil {
		out = make(map[string]string, len(g.Secrets))
	}
	maps.Copy(out, g.Secrets)
	return out
}

// secretReplacer returns a replacer of every non-empty value of g's
// Secrets and Redacted, the longest first, or nil when there is none.
func secretReplacer(g Grants) *strings.Replacer {
	return replacerOf(slices.Concat(slices.Collect(maps.Values(g.Secrets)), g.Redacted))
}

// replacerOf returns a replacer of every non-empty value of values by
// redactedText, the longest first, or nil when there is none.
func replacerOf(all []string) *strings.Replacer {
	var values []string
	for _, v := range all {
		if v != "" {
			values = append(values, v)
		}
	}
	if len(values) == 0 {
		return nil
	}
	slices.SortFunc(values, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	values = slices.Compact(values)
	pairs := make([]string, 0, 2*len(values))
	for _, v := range values {
		pairs = append(pairs, v, redactedText)
	}
	return strings.NewReplacer(pairs...)
}

// Redact returns s with the values of g's secrets, and of its Redacted,
// replaced by [REDACTED]; within JSON, a value that JSON escapes is
// replaced as escaped too.
func (g Grants) Redact(s string) string {
	r := secretReplacer(g)
	if r == nil {
		return s
	}
	s = r.Replace(s)
	var escaped Grants // the values as JSON writes them within a string
	for _, v := range slices.Concat(slices.Collect(maps.Values(g.Secrets)), g.Redacted) {
		if e, ok := jsonEscaped(v); ok {
			escaped.Redacted = append(escaped.Redacted, e)
		}
	}
	if e := secretReplacer(escaped); e != nil {
		s = e.Replace(s)
	}
	return s
}

// jsonEscaped returns v as JSON writes it within a string, and whether
// that differs from v.
func jsonEscaped(v string) (string, bool) {
	b, err := json.Marshal(v)
	if err != nil || string(b[1:len(b)-1]) == v {
		return "", false
	}
	return string(b[1 : len(b)-1]), true
}

// maxRedactions bounds the values a Redactions keeps: past it, the
// oldest is dropped (a broker's tokens are refreshed; an old one has
// expired).
const maxRedactions = 256

// Redactions are secret values a plugin is handed while it runs, after
// it was made: the access tokens a token broker gives it. The sandbox
// replaces them by "[REDACTED]" wherever its Grants' Secrets are
// replaced (Options.Redactions). Safe for concurrent use; a nil
// *Redactions holds nothing.
type Redactions struct {
	mu     sync.RWMutex
	values []string // oldest first
	r      *strings.Replacer
}

// Add makes v redacted from now on, as JSON escapes it within a string
// too; "" is ignored, and so is every value on a nil *Redactions.
func (r *Redactions) Add(v string) {
	if r == nil || v == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if slices.Contains(r.values, v) {
		return
	}
	r.values = append(r.values, v)
	if e, ok := jsonEscaped(v); ok {
		r.values = append(r.values, e)
	}
	if n := len(r.values) - maxRedactions; n > 0 {
		r.values = slices.Delete(r.values, 0, n)
	}
	r.r = replacerOf(r.values)
}

// Replace returns s with every value added replaced.
func (r *Redactions) Replace(s string) string {
	if r == nil {
		return s
	}
	r.mu.RLock()
	rep := r.r
	r.mu.RUnlock()
	if rep == nil {
		return s
	}
	return rep.Replace(s)
}

// redactor removes a plugin's secret values from text: its Grants' and
// those it learns while it runs. A nil *redactor removes nothing.
type redactor struct {
	granted *strings.Replacer // nil when none
	learned *Redactions       // nil when none
}

// newRedactor returns the redactor of g and learned, nil when there is
// nothing to redact.
func newRedactor(g Grants, learned *Redactions) *redactor {
	granted := secretReplacer(g)
	if granted == nil && learned == nil {
		return nil
	}
	return &redactor{granted: granted, learned: learned}
}

// Replace returns s with the secret values replaced.
func (r *redactor) Replace(s string) string {
	if r == nil {
		return s
	}
	if r.granted != nil {
		s = r.granted.Replace(s)
	}
	return r.learned.Replace(s)
}

// redacted returns s with the plugin's secret values replaced.
func (p *Plugin) redacted(s string) string {
	return p.redact.Replace(s)
}

// redactHandler removes secret values from log records: from the message
// and from every attribute, whatever its kind (errors and other values are
// formatted first).
type redactHandler struct {
	next slog.Handler
	r    *redactor
}

func (h redactHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.Replace(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h redactHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = h.attr(a)
	}
	return redactHandler{next: h.next.WithAttrs(clean), r: h.r}
}

func (h redactHandler) WithGroup(name string) slog.Handler {
	return redactHandler{next: h.next.WithGroup(name), r: h.r}
}

// attr returns a with secret values replaced.
func (h redactHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.r.Replace(v.String()))
	case slog.KindGroup:
		group := v.Group()
		clean := make([]any, len(group))
		for i, g := range group {
			clean[i] = h.attr(g)
		}
		return slog.Group(a.Key, clean...)
	case slog.KindAny:
		s := fmt.Sprint(v.Any())
		if r := h.r.Replace(s); r != s {
			return slog.String(a.Key, r)
		}
	}
	return a
}
