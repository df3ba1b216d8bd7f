// Package clienv holds what the mcphost commands that run plugins (serve,
// check and the developer commands) read the same way: the config file and
// the level of mcphost's own logs.
package clienv

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/host"
	"go.opentelemetry.io/otel/trace"
)

// ConfigFile is the name of the config file looked up in a folder.
const ConfigFile = "mcphost.toml"

// ConfigEnv is the environment variable that names the config file when
// --config is not given.
const ConfigEnv = "MCPHOST_CONFIG"

// NewLogger returns a logger on w at the named level (--log-level), in
// format (--log-format): "text" or "json".
func NewLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %q is not one of debug, info, warn, error", level)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch format {
	case "text":
		return slog.New(traceIDs{slog.NewTextHandler(w, opts)}), nil
	case "json":
		return slog.New(traceIDs{slog.NewJSONHandler(w, opts)}), nil
	}
	return nil, fmt.Errorf("--log-format: %q is not one of text, json", format)
}

// traceIDs adds to a record the trace_id of the span of its context, when
// it has one, and the hashed id of the session of the request it was
// logged for (host.SessionOf), when there is one: the log lines of a
// request join its trace and its session's audit records.
type traceIDs struct{ slog.Handler }

func (h traceIDs) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.HasTraceID() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()))
	}
	if session := host.SessionOf(ctx); session != "" {
		r.AddAttrs(slog.String("session", session))
	}
	return h.Handler.Handle(ctx, r)
}

func (h traceIDs) WithAttrs(attrs []slog.Attr) slog.Handler {
	return traceIDs{h.Handler.WithAttrs(attrs)}
}

func (h traceIDs) WithGroup(name string) slog.Handler {
	return traceIDs{h.Handler.WithGroup(name)}
}

// FindConfig returns the config file to read: flag (--config) when given,
// else $MCPHOST_CONFIG when set, else mcphost.toml in pluginsDir, else
// mcphost.toml in the user's config directory (os.UserConfigDir, under
// mcphost/), when either exists; "" for the built-in defaults. The working
// directory is not searched: a desktop client starts serve from anywhere.
func FindConfig(flag, pluginsDir string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if env := os.Getenv(ConfigEnv); env != "" {
		if _, err := os.Stat(env); err != nil {
			return "", fmt.Errorf("%s: %w", ConfigEnv, err)
		}
		return env, nil
	}
	candidates := []string{}
	if pluginsDir != "" {
		candidates = append(candidates, filepath.Join(pluginsDir, ConfigFile))
	}
	if dir, err := os.UserConfigDir(); err == nil {
		candidates = append(candidates, filepath.Join(dir, "mcphost", ConfigFile))
	}
	for _, c := range candidates {
		if _, err := os.Stat(c); err == nil {
			return c, nil
		}
	}
	return "", nil
}

// LoadConfig reads the config that FindConfig finds, or returns the
// built-in defaults when it finds none.
func LoadConfig(flag, pluginsDir string) (*config.Config, error) {
	path, err := FindConfig(flag, pluginsDir)
	if err != nil {
		return nil, err
	}
	if path == "" {
		return config.Default(), nil
	}
	return config.Load(path)
}

// Source describes where cfg came from, for the log: its file, or the
// built-in defaults.
func Source(cfg *config.Config) string {
	if cfg.Path == "" {
		return "built-in defaults (no --config, " + ConfigEnv + ", " + ConfigFile + " in the plugins folder or the user's config directory)"
	}
	return cfg.Path
}

// UnreadWorkingDirConfig returns a warning when the working directory has
// a mcphost.toml that is not cfg's file (earlier versions read it), and ""
// otherwise.
func UnreadWorkingDirConfig(cfg *config.Config) string {
	abs, err := filepath.Abs(ConfigFile)
	if err != nil || abs == cfg.Path {
		return ""
	}
	if _, err := os.Stat(abs); err != nil {
		return ""
	}
	return fmt.Sprintf("%s is not read: the config is %s; pass --config %s to use it", abs, Source(cfg), ConfigFile)
}
