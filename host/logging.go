package host

import (
	"context"
	"slices"
)

// logLevel is an RFC 5424 severity as MCP names them, by rank.
type logLevel int

// logLevels are the MCP logging levels, least severe first.
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// defaultLogLevel is the minimum level sent to a client that never called
// logging/setLevel.
const defaultLogLevel logLevel = 1 // info

func parseLogLevel(s string) (logLevel, bool) {
	i := slices.Index(logLevels, s)
	return logLevel(i), i >= 0
}

func handleSetLevel(_ context.Context, req *request, p *setLevelParams) (any, error) {
	lvl, ok := parseLogLevel(p.Level)
	if !ok {
		return nil, rpcErrorf(CodeInvalidParams, "invalid params: unknown level %q (want one of %v)", p.Level, logLevels)
	}
	if err := req.session().update(func(rec *sessionRecord) { rec.LogLevel = lvl }); err != nil {
		return nil, err
	}
	return struct{}{}, nil
}

// wantsLog reports whether the session takes messages of this level.
func (sess *Session) wantsLog(lvl logLevel) bool {
	rec, ok := sess.record()
	if !ok {
		return lvl >= defaultLogLevel
	}
	return lvl >= rec.LogLevel
}
