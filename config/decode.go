package config

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/gobwas/glob"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sandbox"
)

// The file is decoded into plain maps and checked against the schema here
// rather than decoded into structs: struct decoding matches keys without
// regard to case and stops at the first type error, while this walk matches
// keys exactly and reports every problem.

// Key names of the schema.
var (
	rootKeys   = []string{"server", "defaults", "plugins", "http", "auth", "endpoints", "telemetry", "state"}
	serverKeys = []string{"name", "title", "cache_dir", "page_size", "startup_wait", "memory_budget_mib", "unload_idle_after", "on_load_error", "cache_max_mib", "tool_names",
		"plugin_cache_dir", "pull_timeout", "tls", "egress_ca_file", "request_state_key_file", "request_state_ttl", "instructions",
		"task_after", "max_tasks", "max_tasks_per_user"}
	defaultsKeys = []string{"memory_mib", "timeout", "max_output_bytes", "max_instances", "max_queue",
		"calls_per_second", "host_calls_per_second", "max_module_mib", "max_list_items", "load_budget", "breaker_failures", "breaker_window", "breaker_backoff", "breaker_max_backoff", "wazero_checks"}
	pluginKeys = append([]string{"prefix", "disabled", "isolation", "cache_ttl", "cache_scope", "host_functions", "allowed_hosts", "allow_private_network",
		"config", "secrets", "sha256", "tools", "prompts", "resources", "mounts", "task_support",
		"skip_tools", "skip_prompts", "skip_resources", "rename", "source", "verify", "allow_unsigned", "keyring", "oauth2", "require_scopes", "audit_arguments"}, defaultsKeys...)
	mountKeys     = []string{"host", "guest", "mode"}
	httpKeys      = []string{"listen", "allowed_hosts", "allowed_origins", "session_idle_timeout", "init_timeout", "max_sessions", "max_sessions_per_client", "max_body_bytes", "max_body_bytes_in_flight", "max_body_bytes_in_flight_per_client", "max_connections", "max_connections_per_client", "trusted_proxies", "max_batch_response_bytes", "drain_delay"}
	authKeys      = []string{"mode", "resource", "token_env", "token_file", "issuer", "jwks_url", "audience", "scopes", "scopes_supported"}
	telemetryKeys = []string{"metrics", "metrics_listen", "metrics_token_file", "metrics_item_names",
		"traces", "otlp_endpoint", "otlp_protocol", "trace_sample_ratio",
		"audit", "audit_file", "audit_max_mib", "audit_max_files", "status_token_file", "status_scope"}
	stateKeys = []string{"backend", "url", "password_file", "password_env", "prefix", "ca_file", "task_lease"}
)

// authModeKeys are the [auth] keys that apply to one mode only.
var authModeKeys = map[AuthMode][]string{
	AuthBearer: {"token_env", "token_file"},
	AuthJWT:    {"issuer", "jwks_url", "audience", "scopes", "scopes_supported"},
}

// Ranges of the numeric settings; those of the limits the sandbox enforces
// are its own (checkSandbox).
const (
	maxPageSize    = 1000
	maxIdleTimeout = 24 * time.Hour
	maxSessions    = 100000
	maxBodyBytes   = 1 << 30
	maxInFlight    = 64 << 30 // bytes of request bodies being received
	maxConns       = 1000000
	maxCallRate    = 100000
	maxListItems   = 100000
	maxFailures    = 1000
	maxWindow      = time.Hour
	maxBackoff     = 24 * time.Hour
	maxTasks       = 1000000
	maxDrainDelay  = 10 * time.Minute
	minTaskLease   = 3 * time.Second
	maxTaskLease   = 10 * time.Minute
)

// parse decodes and checks src, the content of file, whose directory is the
// absolute path dir. It returns the configuration or every problem found.
func parse(file, dir, src string) (*Config, Errors) {
	var root map[string]any
	if _, err := toml.Decode(src, &root); err != nil {
		e := Error{File: file, Msg: err.Error()}
		var pe toml.ParseError
		if errors.As(err, &pe) {
			e.Line, e.Msg = pe.Position.Line, pe.Message
		}
		return nil, Errors{e}
	}
	d := &decoder{file: file, dir: dir, lines: indexLines(src)}
	d.expandEnv(root, nil)
	cfg := Default()
	d.table(root, nil, rootKeys)
	if v, ok := root["server"]; ok {
		d.server(v, keyPath{"server"}, &cfg.Server)
	}
	if v, ok := root["defaults"]; ok {
		if t, ok := d.table(v, keyPath{"defaults"}, defaultsKeys); ok {
			cfg.Defaults = cfg.Defaults.merge(d.limits(t, keyPath{"defaults"}))
			d.checkBackoff(cfg.Defaults, keyPath{"defaults"})
		}
	}
	if v, ok := root["plugins"]; ok {
		d.plugins(v, keyPath{"plugins"}, cfg)
	}
	if v, ok := root["http"]; ok {
		d.http(v, keyPath{"http"}, cfg)
	}
	if v, ok := root["auth"]; ok {
		d.auth(v, keyPath{"auth"}, cfg)
	}
	if v, ok := root["telemetry"]; ok {
		d.telemetry(v, keyPath{"telemetry"}, cfg)
	}
	if v, ok := root["state"]; ok {
		d.state(v, keyPath{"state"}, cfg)
	}
	d.checkRequireScopes(cfg)
	cfg.Endpoints = d.endpoints(root, cfg)
	cfg.derive()
	sort.SliceStable(d.errs, func(i, j int) bool { return d.errs[i].Line < d.errs[j].Line })
	return cfg, d.errs
}

// decoder checks a decoded file against the schema, collecting problems.
type decoder struct {
	file  string
	dir   string
	lines lineIndex
	errs  Errors
}

// errorf reports a problem with the value at p.
func (d *decoder) errorf(p keyPath, format string, args ...any) {
	d.errs = append(d.errs, Error{
		File: d.file,
		Line: d.lines.line(p),
		Key:  p.String(),
		Msg:  p.String() + ": " + fmt.Sprintf(format, args...),
	})
}

// typeError reports that the value v at p is not of type want.
func (d *decoder) typeError(p keyPath, want string, v any) {
	d.errorf(p, "expected %s, got %s", want, typeName(v))
}

// table returns v as a table, reporting it when it is not one and every key
// of it that is not in known.
func (d *decoder) table(v any, p keyPath, known []string) (map[string]any, bool) {
	t, ok := v.(map[string]any)
	if !ok {
		d.typeError(p, "table", v)
		return nil, false
	}
	for _, k := range slices.Sorted(maps.Keys(t)) {
		if slices.Contains(known, k) {
			continue
		}
		kp := p.add(k)
		msg := fmt.Sprintf("unknown key %q", kp.String())
		if s := closest(k, known); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		d.errs = append(d.errs, Error{File: d.file, Line: d.lines.line(kp), Key: kp.String(), Msg: msg})
	}
	return t, true
}

// required reports t missing key, if it is.
func (d *decoder) required(t map[string]any, p keyPath, key string) {
	if _, ok := t[key]; !ok {
		d.errorf(p, "missing %q", key)
	}
}

// str returns the string t[key], if t has key and it is a string.
func (d *decoder) str(t map[string]any, p keyPath, key string) (string, bool) {
	v, ok := t[key]
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	if !ok {
		d.typeError(p.add(key), "string", v)
	}
	return s, ok
}

// oneOf returns the string at key, reporting it unless it is one of
// values (at least two); ok is false when the key is absent or wrong.
func (d *decoder) oneOf(t map[string]any, p keyPath, key string, values ...string) (string, bool) {
	v, ok := d.str(t, p, key)
	if !ok || slices.Contains(values, v) {
		return v, ok
	}
	quoted := make([]string, len(values))
	for i, x := range values {
		quoted[i] = strconv.Quote(x)
	}
	last := len(quoted) - 1
	d.errorf(p.add(key), "%q is not one of %s and %s", v, strings.Join(quoted[:last], ", "), quoted[last])
	return "", false
}

// boolean returns the boolean t[key], if t has key and it is a boolean.
func (d *decoder) boolean(t map[string]any, p keyPath, key string) (bool, bool) {
	v, ok := t[key]
	if !ok {
		return false, false
	}
	b, ok := v.(bool)
	if !ok {
		d.typeError(p.add(key), "boolean", v)
	}
	return b, ok
}

// integer returns the integer t[key], if t has key and it is an integer in
// lo..hi.
func (d *decoder) integer(t map[string]any, p keyPath, key string, lo, hi int64) (int, bool) {
	v, ok := t[key]
	if !ok {
		return 0, false
	}
	n, ok := v.(int64)
	if !ok {
		d.typeError(p.add(key), "integer", v)
		return 0, false
	}
	if n < lo || n > hi {
		d.errorf(p.add(key), "%d is out of range (%d..%d)", n, lo, hi)
		return 0, false
	}
	return int(n), true
}

// duration returns the duration t[key], if t has key and it is a Go
// duration string in (0, limit].
func (d *decoder) duration(t map[string]any, p keyPath, key string, limit time.Duration) (time.Duration, bool) {
	v, ok := t[key]
	if !ok {
		return 0, false
	}
	s, ok := v.(string)
	if !ok {
		d.typeError(p.add(key), `duration string such as "30s"`, v)
		return 0, false
	}
	dur, err := time.ParseDuration(s)
	switch {
	case err != nil:
		d.errorf(p.add(key), `bad duration %q: use a Go duration such as "30s", "1m30s" or "500ms"`, s)
	case dur <= 0:
		d.errorf(p.add(key), "%q is not positive", s)
	case dur > limit:
		d.errorf(p.add(key), "%q is longer than %v", s, limit)
	default:
		return dur, true
	}
	return 0, false
}

// checked returns the string t[key], if t has key and it is a string that
// check accepts.
func (d *decoder) checked(t map[string]any, p keyPath, key string, check func(string) error) (string, bool) {
	s, ok := d.str(t, p, key)
	if !ok {
		return "", false
	}
	if err := check(s); err != nil {
		d.errorf(p.add(key), "%v", err)
		return "", false
	}
	return s, true
}

// strs returns the array of strings t[key], if t has key, reporting
// elements that are not strings or that check rejects.
func (d *decoder) strs(t map[string]any, p keyPath, key string, check func(string) error) []string {
	v, ok := t[key]
	if !ok {
		return nil
	}
	arr, ok := v.([]any)
	if !ok {
		d.typeError(p.add(key), "array of strings", v)
		return nil
	}
	out := make([]string, 0, len(arr))
	for i, e := range arr {
		s, ok := e.(string)
		if !ok {
			d.typeError(p.add(key, index(i)), "string", e)
			continue
		}
		if err := check(s); err != nil {
			d.errorf(p.add(key, index(i)), "%v", err)
		}
		out = append(out, s)
	}
	return out
}

func (d *decoder) server(v any, p keyPath, s *ServerConfig) {
	t, ok := d.table(v, p, serverKeys)
	if !ok {
		return
	}
	if name, ok := d.str(t, p, "name"); ok {
		if name == "" {
			d.errorf(p.add("name"), "must not be empty")
		} else {
			s.Name = name
		}
	}
	if title, ok := d.str(t, p, "title"); ok {
		s.Title = title
	}
	if text, ok := d.str(t, p, "instructions"); ok {
		s.Instructions = text
	}
	if dir, ok := d.str(t, p, "cache_dir"); ok {
		if dir != "" && dir != "off" {
			dir = d.abs(dir)
		}
		s.CacheDir = dir
	}
	if n, ok := d.integer(t, p, "page_size", 1, maxPageSize); ok {
		s.PageSize = n
	}
	if dur, ok := d.duration(t, p, "startup_wait", maxWindow); ok {
		s.StartupWait = dur
	}
	if n, ok := d.integer(t, p, "memory_budget_mib", sandbox.MinMemoryBudgetMiB, sandbox.MaxMemoryBudgetMiB); ok {
		s.MemoryBudgetMiB = n
	}
	if v, ok := t["unload_idle_after"]; ok {
		if v == "never" {
			s.UnloadIdleAfter = 0
		} else if dur, ok := d.duration(t, p, "unload_idle_after", maxUnloadIdleAfter); ok {
			s.UnloadIdleAfter = dur
		}
	}
	if file, ok := d.str(t, p, "egress_ca_file"); ok {
		s.EgressCAFile = d.abs(file)
		if _, err := os.Stat(s.EgressCAFile); err != nil {
			d.errorf(p.add("egress_ca_file"), "%v", err)
		}
	}
	if v, ok := t["tls"]; ok {
		s.TLS = d.tls(v, p.add("tls"))
	}
	if rule, ok := d.oneOf(t, p, "tool_names", ToolNamesPortable, ToolNamesMCP); ok {
		s.ToolNames = rule
	}
	if n, ok := d.integer(t, p, "cache_max_mib", 1, 1<<20); ok {
		s.CacheMaxMiB = n
	}
	if mode, ok := d.oneOf(t, p, "on_load_error", OnLoadErrorFail, OnLoadErrorSkip); ok {
		s.OnLoadError = mode
	}
	if dir, ok := d.str(t, p, "plugin_cache_dir"); ok && dir != "" {
		s.PluginCacheDir = d.abs(dir)
	}
	if dur, ok := d.duration(t, p, "pull_timeout", maxWindow); ok {
		s.PullTimeout = dur
	}
	if file, ok := d.str(t, p, "request_state_key_file"); ok {
		if file == "" {
			d.errorf(p.add("request_state_key_file"), "must not be empty")
		} else {
			s.RequestStateKeyFile = d.abs(file)
		}
	}
	if dur, ok := d.duration(t, p, "request_state_ttl", 24*time.Hour); ok {
		s.RequestStateTTL = dur
	}
	d.tasks(t, p, s)
}

// tasks reads the [server] settings of tasks into s.
func (d *decoder) tasks(t map[string]any, p keyPath, s *ServerConfig) {
	if dur, ok := d.duration(t, p, "task_after", maxWindow); ok {
		s.TaskAfter = dur
	}
	if n, ok := d.integer(t, p, "max_tasks", 1, maxTasks); ok {
		s.MaxTasks = n
	}
	if n, ok := d.integer(t, p, "max_tasks_per_user", 1, maxTasks); ok {
		if s.MaxTasks > 0 && n > s.MaxTasks {
			d.errorf(p.add("max_tasks_per_user"), "%d is more than max_tasks (%d)", n, s.MaxTasks)
		} else {
			s.MaxTasksPerUser = n
		}
	}
}

// tls returns the [server.tls] table v: its files resolved against the
// config's folder and readable.
func (d *decoder) tls(v any, p keyPath) TLSConfig {
	var c TLSConfig
	t, ok := d.table(v, p, []string{"cert", "key"})
	if !ok {
		return c
	}
	for key, dst := range map[string]*string{"cert": &c.Cert, "key": &c.Key} {
		file, ok := d.str(t, p, key)
		if !ok {
			continue
		}
		file = d.abs(file)
		if f, err := os.Open(file); err != nil {
			d.errorf(p.add(key), "%v", err)
		} else {
			f.Close()
		}
		*dst = file
	}
	if (c.Cert == "") != (c.Key == "") {
		missing := "key"
		if c.Cert == "" {
			missing = "cert"
		}
		d.errorf(p, "cert and key go together: %s is missing", missing)
		return TLSConfig{}
	}
	return c
}

// abs resolves a host path against the configuration file's directory.
func (d *decoder) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(d.dir, p)
}

// limits returns the limits table t sets, and which of them it sets.
func (d *decoder) limits(t map[string]any, p keyPath) (Limits, limitKeys) {
	var (
		l   Limits
		set limitKeys
		ok  bool
	)
	// The upper bounds of the limits the sandbox enforces are checkSandbox's.
	if l.MemoryMiB, ok = d.atLeast(t, p, "memory_mib", 1); ok {
		set |= setMemoryMiB
	}
	if l.Timeout, ok = d.duration(t, p, "timeout", math.MaxInt64); ok {
		set |= setTimeout
	}
	if l.MaxOutputBytes, ok = d.atLeast(t, p, "max_output_bytes", 1); ok {
		set |= setMaxOutputBytes
	}
	if l.MaxInstances, ok = d.atLeast(t, p, "max_instances", 1); ok {
		set |= setMaxInstances
	}
	if l.MaxQueue, ok = d.atLeast(t, p, "max_queue", 0); ok {
		set |= setMaxQueue
	}
	if l.CallsPerSecond, ok = d.number(t, p, "calls_per_second", 0, maxCallRate); ok {
		set |= setCallsPerSecond
	}
	if l.HostCallsPerSecond, ok = d.atLeast(t, p, "host_calls_per_second", 1); ok {
		set |= setHostCallsPerSecond
	}
	if l.MaxModuleMiB, ok = d.atLeast(t, p, "max_module_mib", 1); ok {
		set |= setMaxModuleMiB
	}
	if l.MaxListItems, ok = d.integer(t, p, "max_list_items", 1, maxListItems); ok {
		set |= setMaxListItems
	}
	if l.LoadBudget, ok = d.duration(t, p, "load_budget", maxWindow); ok {
		set |= setLoadBudget
	}
	if l.BreakerFailures, ok = d.integer(t, p, "breaker_failures", 0, maxFailures); ok {
		set |= setBreakerFailures
	}
	if l.BreakerWindow, ok = d.duration(t, p, "breaker_window", maxWindow); ok {
		set |= setBreakerWindow
	}
	if l.BreakerBackoff, ok = d.duration(t, p, "breaker_backoff", maxBackoff); ok {
		set |= setBreakerBackoff
	}
	if l.BreakerMaxBackoff, ok = d.duration(t, p, "breaker_max_backoff", maxBackoff); ok {
		set |= setBreakerMaxBackoff
	}
	if l.WazeroChecks, ok = d.boolean(t, p, "wazero_checks"); ok {
		set |= setWazeroChecks
	}
	return l, d.checkSandbox(l, set, p)
}

// atLeast returns the integer t[key], if t has key and it is at least lo:
// below 1 (0 for max_queue) a limit would not reach the sandbox as written,
// which takes such values as its defaults (or as no queue).
func (d *decoder) atLeast(t map[string]any, p keyPath, key string, lo int) (int, bool) {
	n, ok := d.integer(t, p, key, math.MinInt64, math.MaxInt64)
	if ok && n < lo {
		d.errorf(p.add(key), "%d is less than %d", n, lo)
		return 0, false
	}
	return n, ok
}

// checkSandbox reports each limit in set that the sandbox would refuse
// (sandbox.Limits.Validate) once the host hands l to it, and returns set
// without those.
func (d *decoder) checkSandbox(l Limits, set limitKeys, p keyPath) limitKeys {
	for _, k := range []struct {
		key string
		bit limitKeys
	}{
		{"memory_mib", setMemoryMiB},
		{"timeout", setTimeout},
		{"max_output_bytes", setMaxOutputBytes},
		{"max_instances", setMaxInstances},
		{"max_queue", setMaxQueue},
		{"host_calls_per_second", setHostCallsPerSecond},
		{"max_module_mib", setMaxModuleMiB},
	} {
		if set&k.bit == 0 {
			continue
		}
		// One limit at a time, so that each problem is reported at its key;
		// the others are zero, which the sandbox takes as its defaults.
		if err := (Limits{}).merge(l, k.bit).Sandbox().Validate(); err != nil {
			d.errorf(p.add(k.key), "%v", err)
			set &^= k.bit
		}
	}
	return set
}

// checkBackoff reports merged limits whose breaker back-off exceeds its
// cap.
func (d *decoder) checkBackoff(l Limits, p keyPath) {
	if l.BreakerBackoff > l.BreakerMaxBackoff {
		d.errorf(p.add("breaker_backoff"), "%v is longer than breaker_max_backoff (%v)", l.BreakerBackoff, l.BreakerMaxBackoff)
	}
}

// number returns the number (integer or float) t[key], if t has key and it
// is in lo..hi.
func (d *decoder) number(t map[string]any, p keyPath, key string, lo, hi float64) (float64, bool) {
	v, ok := t[key]
	if !ok {
		return 0, false
	}
	var n float64
	switch v := v.(type) {
	case int64:
		n = float64(v)
	case float64:
		n = v
	default:
		d.typeError(p.add(key), "number", v)
		return 0, false
	}
	if n != n || n < lo || n > hi {
		d.errorf(p.add(key), "%v is out of range (%v..%v)", v, lo, hi)
		return 0, false
	}
	return n, true
}

func (d *decoder) plugins(v any, p keyPath, cfg *Config) {
	t, ok := v.(map[string]any)
	if !ok {
		d.typeError(p, "table", v)
		return
	}
	for _, name := range slices.Sorted(maps.Keys(t)) {
		pp := p.add(name)
		if name == "" || !only(name, isBare) {
			d.errorf(pp, "invalid plugin name %q: use only letters, digits, '-' and '_'", name)
		}
		pc := d.plugin(t[name], pp, cfg.Defaults, cfg.Server.ToolNames)
		pc.Name = name
		pc.Rank = d.lines.line(pp)
		cfg.Plugins[name] = pc
	}
}

// only reports whether every byte of s satisfies ok.
func only(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func (d *decoder) plugin(v any, p keyPath, defaults Limits, toolNames string) PluginConfig {
	var pc PluginConfig
	t, ok := d.table(v, p, pluginKeys)
	if !ok {
		return pc
	}
	if prefix, ok := d.str(t, p, "prefix"); ok {
		if !only(prefix, func(c byte) bool { return isBare(c) || c == '.' }) {
			d.errorf(p.add("prefix"), "%q may contain only letters, digits, '-', '_' and '.'", prefix)
		}
		pc.Prefix = prefix
	}
	if disabled, ok := d.boolean(t, p, "disabled"); ok {
		pc.Disabled = disabled
	}
	if isolation, ok := d.oneOf(t, p, "isolation", IsolationShared, IsolationUser, IsolationSession); ok {
		pc.Isolation = isolation
	}
	var over Limits
	over, pc.set = d.limits(t, p)
	pc.Limits = defaults.merge(over, pc.set)
	if pc.set&(setBreakerBackoff|setBreakerMaxBackoff) != 0 {
		d.checkBackoff(pc.Limits, p)
	}
	pc.HostFunctions = d.strs(t, p, "host_functions", checkHostFunction)
	pc.AllowedHosts = d.strs(t, p, "allowed_hosts", checkPluginHost)
	if allow, ok := d.boolean(t, p, "allow_private_network"); ok {
		pc.AllowPrivateNetwork = allow
	}
	pc.Config = d.pluginConfig(t, p)
	pc.Secrets = d.secrets(t, p, pc.Config)
	if sum, ok := d.checked(t, p, "sha256", checkSHA256); ok {
		pc.SHA256 = strings.ToLower(sum)
	}
	d.source(t, p, &pc)
	pc.Tools = d.strs(t, p, "tools", checkGlob)
	pc.Prompts = d.strs(t, p, "prompts", checkGlob)
	pc.Resources = d.strs(t, p, "resources", checkGlob)
	pc.SkipTools = d.strs(t, p, "skip_tools", checkGlob)
	pc.SkipPrompts = d.strs(t, p, "skip_prompts", checkGlob)
	pc.SkipResources = d.strs(t, p, "skip_resources", checkGlob)
	pc.Rename = d.rename(t, p, toolNames)
	pc.Mounts = d.mounts(t, p)
	pc.TaskSupport = d.taskSupport(t, p)
	pc.Keyring = d.keyring(t, p)
	pc.OAuth2 = d.oauth2(t, p)
	if b, ok := d.boolean(t, p, "audit_arguments"); ok {
		pc.AuditArguments = b
	}
	if _, ok := t["require_scopes"]; ok {
		pc.RequireScopes = d.strs(t, p, "require_scopes", checkScope)
		if len(pc.RequireScopes) == 0 {
			d.errorf(p.add("require_scopes"), "must not be empty: leave it out to serve the plugin to every client")
		}
	}
	if ttl, ok := d.duration(t, p, "cache_ttl", 24*time.Hour); ok {
		pc.CacheTTL = ttl
	}
	pc.CacheScope = CacheScopePrivate
	if scope, ok := d.str(t, p, "cache_scope"); ok {
		if scope != CacheScopePrivate && scope != CacheScopePublic {
			d.errorf(p.add("cache_scope"), "%q is not %q or %q", scope, CacheScopePrivate, CacheScopePublic)
		} else {
			pc.CacheScope = scope
		}
	}
	return pc
}

// secrets returns the secrets table: config keys mapped to "env:NAME" or
// "file:PATH" (relative paths resolved against the file's directory). A key
// may not also be in the config table.
func (d *decoder) secrets(t map[string]any, p keyPath, config map[string]string) map[string]Secret {
	v, ok := t["secrets"]
	if !ok {
		return nil
	}
	p = p.add("secrets")
	st, ok := v.(map[string]any)
	if !ok {
		d.typeError(p, "table", v)
		return nil
	}
	out := make(map[string]Secret, len(st))
	for _, k := range slices.Sorted(maps.Keys(st)) {
		kp := p.add(k)
		if _, dup := config[k]; dup {
			d.errorf(kp, "%q is also in config; a key is either a config value or a secret", k)
			continue
		}
		ref, ok := st[k].(string)
		if !ok {
			d.typeError(kp, `string "env:VARIABLE" or "file:PATH"`, st[k])
			continue
		}
		if s, ok := d.secretRef(kp, ref); ok {
			out[k] = s
		}
	}
	return out
}

// secretRef parses "env:VARIABLE" or "file:PATH" (relative paths resolved
// against the file's directory), the value at p.
func (d *decoder) secretRef(p keyPath, ref string) (Secret, bool) {
	kind, val, _ := strings.Cut(ref, ":")
	switch {
	case kind == "env" && checkEnvName(val) == nil:
		return Secret{Env: val}, true
	case kind == "env":
		d.errorf(p, "%v", checkEnvName(val))
	case kind == "file" && val != "":
		return Secret{File: d.abs(val)}, true
	default:
		// Never echo the value: it may be the secret itself, written
		// here by mistake.
		d.errorf(p, `must be "env:VARIABLE" or "file:PATH" (the secret itself never goes in this file)`)
	}
	return Secret{}, false
}

// checkSHA256 returns why s is not a hex SHA-256 digest.
func checkSHA256(s string) error {
	if len(s) != 64 || !only(s, func(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }) {
		return fmt.Errorf("%q is not a SHA-256 digest: 64 hex digits (sha256sum PLUGIN.wasm)", s)
	}
	return nil
}

// checkGlob returns why s is not an allow-list pattern.
func checkGlob(s string) error {
	if s == "" {
		return errors.New("empty pattern")
	}
	if _, err := glob.Compile(s); err != nil {
		return fmt.Errorf("%q is not a valid glob pattern: %v", s, err)
	}
	return nil
}

// checkPluginHost returns why pattern is not a valid plugin allowed_hosts
// entry: an optional "http://" or "https://", then a host pattern as
// checkHost accepts, whose port may also be "*".
func checkPluginHost(pattern string) error {
	rest := pattern
	if scheme, after, ok := strings.Cut(pattern, "://"); ok {
		if scheme != "http" && scheme != "https" {
			return fmt.Errorf("%q: the scheme may only be http or https", pattern)
		}
		rest = after
	}
	if host, ok := strings.CutSuffix(rest, ":*"); ok {
		rest = host
	}
	if err := checkHost(rest); err != nil {
		if rest != pattern {
			return fmt.Errorf("%q: %w", pattern, err)
		}
		return err
	}
	return nil
}

// toolNamePattern is the MCP tool name rule: 1 to 128 of letters, digits,
// '_', '-' and '.'.
var toolNamePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// taskSupport returns the task_support table: tool names (the plugin's
// own, without prefix) or "*" mapped to a TaskSupport value.
func (d *decoder) taskSupport(t map[string]any, p keyPath) map[string]string {
	v, ok := t["task_support"]
	if !ok {
		return nil
	}
	p = p.add("task_support")
	tt, ok := v.(map[string]any)
	if !ok {
		d.typeError(p, "table", v)
		return nil
	}
	out := make(map[string]string, len(tt))
	for _, tool := range slices.Sorted(maps.Keys(tt)) {
		kp := p.add(tool)
		if tool != "*" && !toolNamePattern.MatchString(tool) {
			d.errorf(kp, "%q is not a tool name (1 to 128 of letters, digits, '_', '-' and '.') or \"*\"", tool)
			continue
		}
		mode, ok := tt[tool].(string)
		if !ok {
			d.typeError(kp, "string", tt[tool])
			continue
		}
		switch mode {
		case abi.TaskForbidden, abi.TaskOptional, abi.TaskRequired:
			out[tool] = mode
		default:
			d.errorf(kp, "%q is not \"forbidden\", \"optional\" or \"required\"", mode)
		}
	}
	return out
}

// checkHostFunction returns why name is not a host function.
func checkHostFunction(name string) error {
	if _, ok := abi.HostSignatureOf(name); ok {
		return nil
	}
	return fmt.Errorf("unknown host function %q (valid: %s)", name, strings.Join(abi.HostFunctionNames(), ", "))
}

// checkHost returns why pattern is not a valid allowed_hosts entry: a host
// name, "*." and a host name, "*", an IPv4 address or a bracketed IPv6
// address, each optionally followed by ":port".
func checkHost(pattern string) error {
	switch {
	case pattern == "":
		return errors.New("empty host pattern")
	case strings.Contains(pattern, "://"):
		return fmt.Errorf("%q includes a scheme; write the host alone, e.g. \"api.example.com\"", pattern)
	case strings.ContainsAny(pattern, "/?#@"):
		return fmt.Errorf("%q is not a host pattern; write the host alone, e.g. \"api.example.com\"", pattern)
	}
	host, port, hasPort := pattern, "", false
	if strings.HasPrefix(pattern, "[") {
		end := strings.IndexByte(pattern, ']')
		if end < 0 || net.ParseIP(pattern[1:end]) == nil {
			return fmt.Errorf("%q has a bad IPv6 address", pattern)
		}
		host, port = "", pattern[end+1:]
		if port != "" {
			if port[0] != ':' {
				return fmt.Errorf("%q has text after the IPv6 address", pattern)
			}
			port, hasPort = port[1:], true
		}
	} else if strings.Count(pattern, ":") > 1 {
		return fmt.Errorf("%q: put IPv6 addresses in brackets, e.g. \"[::1]:8080\"", pattern)
	} else {
		host, port, hasPort = strings.Cut(pattern, ":")
	}
	if hasPort {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || port[0] == '+' {
			return fmt.Errorf("%q has a bad port %q (want 1..65535)", pattern, port)
		}
	}
	if host == "" || host == "*" {
		if host == "" && !strings.HasPrefix(pattern, "[") {
			return fmt.Errorf("%q has no host", pattern)
		}
		return nil
	}
	for _, label := range strings.Split(strings.TrimPrefix(host, "*."), ".") {
		if label == "" {
			return fmt.Errorf("%q has an empty label", pattern)
		}
		switch {
		case strings.Contains(label, "*"):
			return fmt.Errorf("%q: a wildcard may only be \"*\" or a leading \"*.\"", pattern)
		case !only(label, isBare):
			return fmt.Errorf("%q is not a valid host name", pattern)
		}
	}
	return nil
}

// pluginConfig returns the config table: scalar values, as strings.
// rename returns the rename table of t: exposed names, by the plugin's
// own tool or prompt name, that follow the toolNames rule.
func (d *decoder) rename(t map[string]any, p keyPath, toolNames string) map[string]string {
	v, ok := t["rename"]
	if !ok {
		return nil
	}
	p = p.add("rename")
	rt, ok := v.(map[string]any)
	if !ok {
		d.typeError(p, "table", v)
		return nil
	}
	valid, rule := portableName, "1-64 of A-Z a-z 0-9 _ - ([server] tool_names = \"portable\")"
	if toolNames == ToolNamesMCP {
		valid, rule = mcpName, "1-128 of A-Z a-z 0-9 _ - ."
	}
	out := make(map[string]string, len(rt))
	for _, k := range slices.Sorted(maps.Keys(rt)) {
		name, ok := rt[k].(string)
		switch {
		case !ok:
			d.typeError(p.add(k), "string", rt[k])
		case !valid.MatchString(name):
			d.errorf(p.add(k), "%q is not a name clients can use: write %s", name, rule)
		default:
			out[k] = name
		}
	}
	return out
}

// portableName and mcpName are the rules of config.ToolNames.
var (
	portableName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	mcpName      = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)
)

func (d *decoder) pluginConfig(t map[string]any, p keyPath) map[string]string {
	v, ok := t["config"]
	if !ok {
		return nil
	}
	ct, ok := v.(map[string]any)
	if !ok {
		d.typeError(p.add("config"), "table", v)
		return nil
	}
	out := make(map[string]string, len(ct))
	for k, v := range ct {
		switch v := v.(type) {
		case string:
			out[k] = v
		case int64:
			out[k] = strconv.FormatInt(v, 10)
		case float64:
			out[k] = strconv.FormatFloat(v, 'g', -1, 64)
		case bool:
			out[k] = strconv.FormatBool(v)
		default:
			d.typeError(p.add("config", k), "string, number or boolean", v)
		}
	}
	return out
}

// tableArray returns the items of the array of tables t[key]: written
// [[...key]] or key = [{...}, ...].
func (d *decoder) tableArray(t map[string]any, p keyPath, key string) []any {
	v, ok := t[key]
	if !ok {
		return nil
	}
	var items []any
	switch v := v.(type) {
	case []map[string]any: // [[...key]] tables
		for _, m := range v {
			items = append(items, m)
		}
	case []any: // key = [{...}, ...]
		items = v
	default:
		d.typeError(p.add(key), "array of tables", v)
	}
	return items
}

func (d *decoder) mounts(t map[string]any, p keyPath) []Mount {
	items := d.tableArray(t, p, "mounts")
	if items == nil {
		return nil
	}
	p = p.add("mounts")
	out := make([]Mount, 0, len(items))
	guests := map[string]bool{}
	for i, item := range items {
		ip := p.add(index(i))
		m := d.mount(item, ip)
		if m.Guest != "" && guests[m.Guest] {
			d.errorf(ip.add("guest"), "%q is mounted more than once", m.Guest)
		}
		guests[m.Guest] = true
		out = append(out, m)
	}
	return out
}

// mount returns the mount table v; its Guest is "" unless it is valid.
func (d *decoder) mount(v any, p keyPath) Mount {
	m := Mount{ReadOnly: true}
	t, ok := d.table(v, p, mountKeys)
	if !ok {
		return m
	}
	d.required(t, p, "host")
	if host, ok := d.str(t, p, "host"); ok {
		if host == "" {
			d.errorf(p.add("host"), "must not be empty")
		}
		m.Host = d.abs(host)
	}
	d.required(t, p, "guest")
	if guest, ok := d.str(t, p, "guest"); ok {
		if strings.HasPrefix(guest, "/") {
			m.Guest = path.Clean(guest)
		} else {
			d.errorf(p.add("guest"), "%q is not absolute; guest paths start with \"/\"", guest)
		}
	}
	if mode, ok := d.str(t, p, "mode"); ok {
		switch mode {
		case "ro":
		case "rw":
			m.ReadOnly = false
		default:
			d.errorf(p.add("mode"), "%q is not \"ro\" or \"rw\"", mode)
		}
	}
	return m
}

func (d *decoder) http(v any, p keyPath, c *Config) {
	t, ok := d.table(v, p, httpKeys)
	if !ok {
		return
	}
	h := &c.HTTP
	if listen, ok := d.checked(t, p, "listen", checkListen); ok {
		h.Listen = listen
	}
	h.AllowedHosts = d.strs(t, p, "allowed_hosts", checkExactHost)
	h.AllowedOrigins = d.strs(t, p, "allowed_origins", checkOrigin)
	if dur, ok := d.duration(t, p, "session_idle_timeout", maxIdleTimeout); ok {
		h.SessionIdleTimeout = dur
	}
	if dur, ok := d.duration(t, p, "init_timeout", maxIdleTimeout); ok {
		h.InitTimeout = dur
	}
	if dur, ok := d.duration(t, p, "drain_delay", maxDrainDelay); ok {
		h.DrainDelay = dur
	}
	if n, ok := d.integer(t, p, "max_sessions", 1, maxSessions); ok {
		h.MaxSessions = n
	}
	if n, ok := d.integer(t, p, "max_sessions_per_client", 1, maxSessions); ok {
		h.MaxSessionsPerClient = n
	}
	if n, ok := d.integer(t, p, "max_body_bytes", 1, maxBodyBytes); ok {
		h.MaxBodyBytes = n
	}
	for _, budget := range []struct {
		key string
		v   *int
	}{{"max_body_bytes_in_flight", &h.MaxBodyBytesInFlight}, {"max_body_bytes_in_flight_per_client", &h.MaxBodyBytesInFlightPerClient}} {
		if n, ok := d.integer(t, p, budget.key, 1, maxInFlight); ok {
			*budget.v = n
		}
		if *budget.v < h.MaxBodyBytes {
			d.errorf(p.add(budget.key), "%d is less than max_body_bytes (%d): a body of that size could never be received", *budget.v, h.MaxBodyBytes)
		}
	}
	if n, ok := d.integer(t, p, "max_connections", 1, maxConns); ok {
		h.MaxConnections = n
	}
	if n, ok := d.integer(t, p, "max_connections_per_client", 1, maxConns); ok {
		h.MaxConnectionsPerClient = n
	}
	if n, ok := d.integer(t, p, "max_batch_response_bytes", 1, maxBodyBytes); ok {
		h.MaxBatchResponseBytes = n
	}
	for _, s := range d.strs(t, p, "trusted_proxies", checkProxy) {
		if proxy, err := parseProxy(s); err == nil {
			h.TrustedProxies = append(h.TrustedProxies, proxy)
		}
	}
}

func (d *decoder) telemetry(v any, p keyPath, c *Config) {
	t, ok := d.table(v, p, telemetryKeys)
	if !ok {
		return
	}
	tc := &c.Telemetry
	if mode, ok := d.oneOf(t, p, "metrics", MetricsAuto, MetricsOn, MetricsOff); ok {
		tc.Metrics = mode
	}
	if listen, ok := d.checked(t, p, "metrics_listen", checkListen); ok {
		tc.MetricsListen = listen
	}
	if file, ok := d.checked(t, p, "metrics_token_file", notEmpty); ok {
		tc.MetricsTokenFile = d.abs(file)
	}
	if b, ok := d.boolean(t, p, "metrics_item_names"); ok {
		tc.MetricsItemNames = b
	}
	if mode, ok := d.oneOf(t, p, "traces", TracesOff, TracesOTLP); ok {
		tc.Traces = mode
	}
	if endpoint, ok := d.checked(t, p, "otlp_endpoint", checkHTTPURL); ok {
		tc.OTLPEndpoint = endpoint
	}
	if protocol, ok := d.oneOf(t, p, "otlp_protocol", OTLPHTTP, OTLPGRPC); ok {
		tc.OTLPProtocol = protocol
	}
	if ratio, ok := d.number(t, p, "trace_sample_ratio", 0, 1); ok {
		tc.TraceSampleRatio = ratio
	}
	if mode, ok := d.oneOf(t, p, "audit", AuditOff, AuditStderr, AuditFile); ok {
		tc.Audit = mode
	}
	if file, ok := d.checked(t, p, "audit_file", notEmpty); ok {
		tc.AuditFile = d.abs(file)
	}
	if n, ok := d.integer(t, p, "audit_max_mib", 1, 1<<20); ok {
		tc.AuditMaxMiB = n
	}
	if n, ok := d.integer(t, p, "audit_max_files", 1, 1000); ok {
		tc.AuditMaxFiles = n
	}
	if file, ok := d.checked(t, p, "status_token_file", notEmpty); ok {
		tc.StatusTokenFile = d.abs(file)
	}
	if scope, ok := d.checked(t, p, "status_scope", checkScope); ok {
		tc.StatusScope = scope
	}
	if tc.Audit == AuditFile && tc.AuditFile == "" {
		d.errorf(p.add("audit"), "%q needs audit_file: the file the audit trail goes to", AuditFile)
	}
	if tc.Metrics == MetricsOff && tc.MetricsListen != "" {
		d.errorf(p.add("metrics_listen"), "metrics = %q: there are no metrics to listen for", MetricsOff)
	}
}

func (d *decoder) state(v any, p keyPath, c *Config) {
	t, ok := d.table(v, p, stateKeys)
	if !ok {
		return
	}
	sc := &c.State
	if backend, ok := d.oneOf(t, p, "backend", StateMemory, StateRedis); ok {
		sc.Backend = backend
	}
	if u, ok := d.checked(t, p, "url", checkRedisURL); ok {
		sc.URL = u
	}
	if file, ok := d.checked(t, p, "password_file", notEmpty); ok {
		sc.Password.File = d.abs(file)
	}
	if env, ok := d.checked(t, p, "password_env", checkEnvName); ok {
		sc.Password.Env = env
	}
	if prefix, ok := d.checked(t, p, "prefix", notEmpty); ok {
		sc.Prefix = prefix
	}
	if file, ok := d.checked(t, p, "ca_file", notEmpty); ok {
		sc.CAFile = d.abs(file)
		if !strings.HasPrefix(sc.URL, "rediss://") {
			d.errorf(p.add("ca_file"), "ca_file is for a rediss:// url (TLS)")
		}
	}
	if lease, ok := d.duration(t, p, "task_lease", maxTaskLease); ok {
		if lease < minTaskLease {
			d.errorf(p.add("task_lease"), "%v is shorter than %v: a replica renews its lease a third of the way, and a busy one must manage that", lease, minTaskLease)
		} else {
			sc.TaskLease = lease
		}
	}
	if sc.Password.File != "" && sc.Password.Env != "" {
		d.errorf(p.add("password_env"), "set \"password_file\" or \"password_env\", not both")
	}
	switch {
	case sc.Backend != StateRedis:
		for _, key := range []string{"url", "password_file", "password_env", "ca_file", "task_lease"} {
			if _, set := t[key]; set {
				d.errorf(p.add(key), "backend = %q uses no %s: set backend = %q", sc.Backend, key, StateRedis)
			}
		}
	case t["url"] == nil:
		d.errorf(p.add("backend"), "backend = %q needs url: the Redis server, as redis://[user@]host:port", StateRedis)
	case c.Server.RequestStateKeyFile == "":
		d.errorf(p.add("backend"), "backend = %q needs [server] request_state_key_file: the key every replica shares, which binds the owners of what Redis holds", StateRedis)
	}
}

// checkRedisURL checks that s is a redis:// or rediss:// URL with a host
// and port and no password, which belongs in a file or the environment.
func checkRedisURL(s string) error {
	u, err := url.Parse(s)
	if err == nil {
		if _, has := u.User.Password(); has {
			return fmt.Errorf("the URL holds a password: put it in password_file or password_env, which keep it out of this file")
		}
	}
	switch {
	case err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "":
		return fmt.Errorf("%q is not a redis:// or rediss:// URL, e.g. \"redis://mcphost@127.0.0.1:6379\"", s)
	case u.Port() == "":
		return fmt.Errorf("%q names no port (Redis listens on 6379 by default)", s)
	}
	if db := strings.TrimPrefix(u.Path, "/"); db != "" {
		if n, err := strconv.Atoi(db); err != nil || n < 0 || n > 15 {
			return fmt.Errorf("%q names database %q: a database is a number from 0 to 15", s, db)
		}
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q has a query or fragment; mcphost sets the client's options itself", s)
	}
	return nil
}

// checkHTTPURL checks that s is an absolute http or https URL.
func checkHTTPURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http or https URL", s)
	}
	return nil
}

// parseProxy reads a trusted_proxies entry: an IP address or a CIDR prefix.
func parseProxy(s string) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(s); err == nil {
		if p.Addr().Is4In6() {
			return netip.Prefix{}, fmt.Errorf("%q: write an IPv4 prefix as IPv4, e.g. \"10.0.0.0/8\"", s)
		}
		return p.Masked(), nil
	}
	if ip, err := netip.ParseAddr(s); err == nil && ip.Zone() == "" {
		ip = ip.Unmap()
		return netip.PrefixFrom(ip, ip.BitLen()), nil
	}
	return netip.Prefix{}, fmt.Errorf("%q is not an IP address or a CIDR prefix, e.g. \"10.0.0.7\" or \"10.0.0.0/8\"", s)
}

func checkProxy(s string) error {
	_, err := parseProxy(s)
	return err
}

func (d *decoder) auth(v any, p keyPath, c *Config) {
	t, ok := d.table(v, p, authKeys)
	if !ok {
		return
	}
	a := &c.Auth
	_, modeWritten := t["mode"]
	modeOK := !modeWritten
	if mode, ok := d.str(t, p, "mode"); ok {
		switch m := AuthMode(mode); m {
		case AuthNone, AuthBearer, AuthJWT:
			a.Mode, modeOK = m, true
			c.set |= setAuthMode
		default:
			d.errorf(p.add("mode"), "%q is not \"none\", \"bearer\" or \"jwt\"", mode)
		}
	}
	if resource, ok := d.checked(t, p, "resource", checkURL(false)); ok {
		a.Resource = resource
		c.set |= setResource
	}
	if env, ok := d.checked(t, p, "token_env", checkEnvName); ok {
		a.TokenEnv = env
	}
	if file, ok := d.checked(t, p, "token_file", notEmpty); ok {
		a.TokenFile = d.abs(file)
	}
	if issuer, ok := d.checked(t, p, "issuer", checkURL(false)); ok {
		a.Issuer = issuer
	}
	if jwks, ok := d.checked(t, p, "jwks_url", checkURL(true)); ok {
		a.JWKSURL = jwks
	}
	if aud, ok := d.checked(t, p, "audience", notEmpty); ok {
		a.Audience = aud
		c.set |= setAudience
	}
	a.Scopes = d.strs(t, p, "scopes", checkScope)
	// An empty list keeps the default.
	if scopes := d.strs(t, p, "scopes_supported", checkScope); len(scopes) > 0 {
		a.ScopesSupported = scopes
		c.set |= setScopesSupported
	}
	// An explicit "none" ignores the keys of the other modes, so that
	// writing it is all it takes to turn authentication off.
	if !modeOK || modeWritten && a.Mode == AuthNone {
		return
	}
	d.authMode(t, p, a.Mode)
}

// authMode reports [auth] keys that do not apply to mode and the keys mode
// needs that t lacks.
func (d *decoder) authMode(t map[string]any, p keyPath, mode AuthMode) {
	for _, m := range []AuthMode{AuthBearer, AuthJWT} {
		if m == mode {
			continue
		}
		for _, k := range authModeKeys[m] {
			if _, ok := t[k]; ok {
				d.errorf(p.add(k), "only used with mode = %q", m)
			}
		}
	}
	switch mode {
	case AuthBearer:
		_, env := t["token_env"]
		_, file := t["token_file"]
		switch {
		case !env && !file:
			d.errorf(p, "mode = \"bearer\" needs \"token_env\" or \"token_file\"")
		case env && file:
			d.errorf(p.add("token_file"), "set \"token_env\" or \"token_file\", not both")
		}
	case AuthJWT:
		for _, k := range []string{"issuer", "jwks_url", "resource"} {
			if _, ok := t[k]; !ok {
				d.errorf(p, "mode = \"jwt\" needs %q", k)
			}
		}
	}
}

// checkExactHost returns why h is not a host or host:port without
// wildcards.
func checkExactHost(h string) error {
	if strings.Contains(h, "*") {
		return fmt.Errorf("%q: wildcards are not allowed here; list each host", h)
	}
	return checkHost(h)
}

// checkListen returns why addr is not a listen address: host:port with a
// numeric port (0 picks a free one) and a host that is empty (every
// interface), an IP address or a name.
func checkListen(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port, e.g. \"127.0.0.1:8080\"", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n > 65535 || !only(port, isDigit) {
		return fmt.Errorf("%q has a bad port %q (want 0..65535)", addr, port)
	}
	if host != "" && net.ParseIP(host) == nil && checkExactHost(host) != nil {
		return fmt.Errorf("%q has a bad host %q", addr, host)
	}
	return nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// checkOrigin returns why origin is not an origin: scheme://host with an
// optional port.
func checkOrigin(origin string) error {
	u, err := url.Parse(origin)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.User != nil ||
		u.Path != "" || strings.ContainsAny(origin, "?#") {
		return fmt.Errorf("%q is not an origin: write the scheme, host and optional port, e.g. \"https://app.example.com\"", origin)
	}
	return checkExactHost(u.Host)
}

// checkURL returns a check that a string is an absolute https URL, or an
// http URL of a loopback host, without user info or fragment, and without
// a query unless allowQuery.
func checkURL(allowQuery bool) func(string) error {
	return func(s string) error {
		u, err := url.Parse(s)
		switch {
		case err != nil || u.Host == "" || u.Scheme != "https" && u.Scheme != "http":
			return fmt.Errorf("%q is not an absolute URL such as \"https://auth.example.com\"", s)
		case u.Scheme == "http" && !isLoopback(u.Hostname()):
			return fmt.Errorf("%q: use https (http only for localhost and loopback addresses)", s)
		case u.User != nil:
			return fmt.Errorf("%q must not contain user info", s)
		case strings.Contains(s, "#"):
			return fmt.Errorf("%q must not contain a fragment", s)
		case !allowQuery && strings.Contains(s, "?"):
			return fmt.Errorf("%q must not contain a query", s)
		}
		return checkExactHost(u.Host)
	}
}

// checkEnvName returns why s is not an environment variable name.
func checkEnvName(s string) error {
	if s == "" || isDigit(s[0]) || !only(s, func(c byte) bool { return isBare(c) && c != '-' }) {
		return fmt.Errorf("%q is not an environment variable name: letters, digits and '_', not starting with a digit", s)
	}
	return nil
}

// checkScope returns why s is not an OAuth scope token (RFC 6749 section
// 3.3): printable ASCII but space, '"' and '\'.
func checkScope(s string) error {
	if s == "" || !only(s, func(c byte) bool { return c > ' ' && c < 0x7f && c != '"' && c != '\\' }) {
		return fmt.Errorf("%q is not a scope: printable ASCII without spaces, '\"' or '\\'", s)
	}
	return nil
}

func notEmpty(s string) error {
	if s == "" {
		return errors.New("must not be empty")
	}
	return nil
}

// typeName names the TOML type of a decoded value.
func typeName(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case int64:
		return "integer"
	case float64:
		return "float"
	case bool:
		return "boolean"
	case map[string]any:
		return "table"
	case []map[string]any:
		return "array of tables"
	case []any:
		return "array"
	}
	return "date-time"
}

// closest returns the name in known nearest to key, if it is close enough
// to be a likely typo.
func closest(key string, known []string) string {
	best, bestDist := "", 3
	for _, k := range known {
		if dist := editDistance(key, k); dist < bestDist {
			best, bestDist = k, dist
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
