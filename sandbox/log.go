package sandbox

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"

	extism "github.com/extism/go-sdk"
)

// Bounds on what a plugin can put into the host's log.
const (
	// maxLogMessage is how much of one log message or output line is kept.
	maxLogMessage = 4 << 10
	// maxLogPerCall is how many bytes of log messages and output one call
	// may log; the rest of the call's output is dropped.
	maxLogPerCall = 64 << 10
)

// guestLog forwards what one instance logs through Extism and writes to its
// stdout and stderr to the plugin's logger, within the per-call budget.
type guestLog struct {
	logger *slog.Logger
	ctx    context.Context // of the current call
	budget int
	stdout lineWriter
	stderr lineWriter
	// said is the plugin's own account of a crash in this call: the
	// first line of its stderr that reads like a panic or fatal error
	// (and the next, where the message follows on it), "" when none.
	said string
	// saidMore is set while said awaits the line that follows it.
	saidMore bool
}

// maxSaid bounds what a crash message quotes of the plugin's stderr.
const maxSaid = 300

// crashHeadlines start the lines in which language runtimes announce a
// crash on stderr: Go, TinyGo and Rust panics, Go's fatal errors (out of
// memory, stack overflow), Rust's allocation failures.
var crashHeadlines = []string{"panic: ", "fatal error: ", "runtime: ", "thread '", "memory allocation of "}

// note records line, a line of stderr, as what the plugin said of a crash
// when it reads like one and nothing was recorded yet in this call.
func (g *guestLog) note(line string) {
	switch {
	case g.saidMore:
		g.said, g.saidMore = clip(g.said+" "+strings.TrimSpace(line), maxSaid), false
	case g.said != "":
	case slices.ContainsFunc(crashHeadlines, func(h string) bool { return strings.HasPrefix(line, h) }):
		g.said = clip(strings.TrimSpace(line), maxSaid)
		// Rust 1.73 and later: "thread 'x' panicked at src/lib.rs:3:5:",
		// the message on the next line.
		g.saidMore = strings.HasPrefix(line, "thread '") && strings.HasSuffix(line, ":")
	}
}

// clip cuts s to at most n bytes, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func newGuestLog(logger *slog.Logger) *guestLog {
	g := &guestLog{logger: logger}
	g.stdout = lineWriter{log: g, stream: "stdout"}
	g.stderr = lineWriter{log: g, stream: "stderr"}
	g.reset(context.Background())
	return g
}

// reset starts a call: ctx is the context log records are emitted with.
func (g *guestLog) reset(ctx context.Context) {
	g.ctx = ctx
	g.budget = maxLogPerCall
	g.said, g.saidMore = "", false
}

// flush logs the unterminated last lines of stdout and stderr.
func (g *guestLog) flush() {
	g.stdout.flush()
	g.stderr.flush()
}

func (g *guestLog) emit(level slog.Level, msg string, attrs ...slog.Attr) {
	if g.budget <= 0 || !g.logger.Enabled(g.ctx, level) {
		return
	}
	if len(msg) > maxLogMessage {
		msg = msg[:maxLogMessage] + " [truncated]"
	}
	g.budget -= len(msg)
	g.logger.LogAttrs(g.ctx, level, msg, attrs...)
	if g.budget <= 0 {
		g.logger.LogAttrs(g.ctx, slog.LevelWarn, "plugin log limit reached, dropping the rest of this call's output",
			slog.Int("limit_bytes", maxLogPerCall))
	}
}

// kernel logs a message at an Extism level: the plugin's log_debug,
// log_info, log_warn and log_error calls, and Extism's own messages.
func (g *guestLog) kernel(level extism.LogLevel, msg string) {
	l := slog.LevelDebug
	switch level {
	case extism.LogLevelInfo:
		l = slog.LevelInfo
	case extism.LogLevelWarn:
		l = slog.LevelWarn
	case extism.LogLevelError:
		l = slog.LevelError
	}
	g.emit(l, msg)
}

// lineWriter logs what a plugin writes to one output stream, line by line.
type lineWriter struct {
	log    *guestLog
	stream string
	line   []byte // the current line, at most maxLogMessage bytes
}

// Write implements io.Writer. It never fails: output beyond the budget is
// dropped.
func (w *lineWriter) Write(p []byte) (int, error) {
	for rest := p; len(rest) > 0 && w.log.budget > 0; {
		line, after, found := bytes.Cut(rest, []byte{'\n'})
		w.line = append(w.line, line[:min(len(line), maxLogMessage-len(w.line))]...)
		if found {
			w.flush()
		}
		rest = after
	}
	return len(p), nil
}

func (w *lineWriter) flush() {
	if w.stream == "stderr" {
		w.log.note(string(w.line))
	}
	if len(w.line) > 0 {
		w.log.emit(slog.LevelInfo, string(w.line), slog.String("stream", w.stream))
		w.line = w.line[:0]
	}
}
