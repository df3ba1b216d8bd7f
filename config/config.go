package config

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcphost/mcphost/sandbox"
)

// Config is a loaded mcphost configuration.
type Config struct {
	// Server holds the [server] table.
	Server ServerConfig
	// Defaults holds the [defaults] table: the limits of every plugin that
	// does not override them.
	Defaults Limits
	// Plugins holds the [plugins.<name>] tables by plugin name, with their
	// limits merged with Defaults as loaded. Use Plugin for the effective
	// settings of any plugin, with or without a table.
	Plugins map[string]PluginConfig
	// HTTP holds the [http] table: the HTTP transport.
	HTTP HTTPConfig
	// Auth holds the [auth] table: authorization on the HTTP transport.
	Auth AuthConfig
	// Endpoints are the [[endpoints]] tables: further Streamable HTTP
	// endpoints, each serving only its plugins, in the order of the file.
	Endpoints []Endpoint
	// Telemetry holds the [telemetry] table: metrics.
	Telemetry TelemetryConfig
	// State holds the [state] table: where the state that replicas share
	// lives.
	State StateConfig
	// Path is the absolute path of the loaded file; "" for Default.
	Path string

	// set records which of the settings fileKeys lists the file sets.
	set fileKeys
}

// ServerConfig holds the [server] table.
type ServerConfig struct {
	// Name is sent to clients as serverInfo.name.
	Name string
	// Title is sent to clients as serverInfo.title.
	Title string
	// CacheDir is the wasm compilation cache directory as configured: ""
	// for the default location, "off" for no persistent cache, otherwise an
	// absolute path. Use Config.CacheDir to resolve it.
	CacheDir string
	// PageSize is the number of items per page in list results.
	PageSize int
	// StartupWait is how long a client's initialize may wait, after the
	// server starts, for the plugins still loading; it is answered at once
	// when every plugin has loaded or failed.
	StartupWait time.Duration
	// MemoryBudgetMiB is the memory, in MiB, that the instances of all
	// plugins may hold together (sandbox.EngineOptions.MemoryBudgetMiB).
	MemoryBudgetMiB int
	// UnloadIdleAfter is how long a plugin may go without calls before
	// its compiled code and instances are given back
	// (sandbox.EngineOptions.UnloadIdleAfter); 0 (the file's "never")
	// keeps them.
	UnloadIdleAfter time.Duration
	// TLS is the [server.tls] table: the HTTP transport's certificate.
	TLS TLSConfig
	// EgressCAFile is a PEM file of certificate authorities that plugins'
	// HTTPS requests trust besides the system's; "" for none.
	EgressCAFile string
	// ToolNames is the rule exposed tool names follow: ToolNamesPortable
	// or ToolNamesMCP.
	ToolNames string
	// CacheMaxMiB caps the compilation cache's size on disk: serve prunes
	// the least recently used entries beyond it once plugins are loaded.
	CacheMaxMiB int
	// OnLoadError says what serve does when a plugin the config names
	// does not load at start-up: OnLoadErrorFail or OnLoadErrorSkip.
	OnLoadError string
	// PluginCacheDir is the plugin cache directory as configured: "" for
	// the default location, otherwise an absolute path. Use
	// Config.PluginCacheDir to resolve it.
	PluginCacheDir string
	// PullTimeout bounds the fetch of one plugin from its source (resolving,
	// downloading, checking its signature).
	PullTimeout time.Duration
	// Instructions tell clients (their models) how to use the server:
	// sent with initialize and server/discover; "" for none.
	Instructions string
	// RequestStateKeyFile is the absolute path of the file of keys that
	// sign the requestState of 2026-07-28 input_required results, one a
	// line, the signing key first; "" for a random key per process. Read
	// it with Config.RequestStateKeys.
	RequestStateKeyFile string
	// RequestStateTTL is how long a requestState is accepted after it was
	// issued; 0 for the server's default.
	RequestStateTTL time.Duration
	// TaskAfter is how long a 2026-07-28 call of a task-supporting tool
	// runs before it becomes a task; 0 for the server's default.
	TaskAfter time.Duration
	// MaxTasks bounds the tasks the server holds at once; 0 for the
	// server's default.
	MaxTasks int
	// MaxTasksPerUser bounds the tasks one user holds at once; 0 for the
	// server's default.
	MaxTasksPerUser int
}

// TLSConfig is the [server.tls] table: the files of the certificate the
// HTTP transport serves over TLS (https), read again when they change.
// Both are empty for plain HTTP.
type TLSConfig struct {
	// Cert is the PEM file of the certificate chain, leaf first.
	Cert string
	// Key is the PEM file of its private key.
	Key string
}

// Scheme is the URL scheme of the HTTP transport: "https" with TLS,
// "http" without.
func (c *Config) Scheme() string {
	if c.Server.TLS.Cert != "" {
		return "https"
	}
	return "http"
}

// DefaultUnloadIdleAfter is [server] unload_idle_after when the file does
// not set it: an idle plugin's compiled code and instances (tens of MiB
// for a standard Go plugin) are given back after ten minutes, and
// compiling it again from the cache costs its next call tens of
// milliseconds.
const DefaultUnloadIdleAfter = 10 * time.Minute

// maxUnloadIdleAfter bounds [server] unload_idle_after: 30 days.
const maxUnloadIdleAfter = 720 * time.Hour

// DefaultCacheMaxMiB is [server] cache_max_mib when the file does not set
// it: a compiled standard Go plugin takes about 12 MiB.
const DefaultCacheMaxMiB = 2048

// The values of ServerConfig.ToolNames.
const (
	ToolNamesPortable = "portable" // 1-64 of A-Z a-z 0-9 _ -, as LLM APIs take them
	ToolNamesMCP      = "mcp"      // MCP's rule: 1-128 of A-Z a-z 0-9 _ - .
)

// TelemetryConfig holds the [telemetry] table.
type TelemetryConfig struct {
	// Metrics says whether /metrics is served: MetricsAuto (the default)
	// serves it on a loopback HTTP listener or on MetricsListen, MetricsOn
	// on any listener, MetricsOff nowhere.
	Metrics string
	// MetricsListen is a host:port of its own for /metrics: the only way to
	// scrape a stdio server. Empty: the HTTP transport's listener. serve
	// refuses one open to the network without MetricsTokenFile, unless
	// Metrics is MetricsOn.
	MetricsListen string
	// MetricsTokenFile is the absolute path of a file holding the bearer
	// token /metrics requires; empty: none.
	MetricsTokenFile string
	// MetricsItemNames puts the tool, prompt and resource a request named
	// on the operation metric; off, as a plugin can invent names without
	// end.
	MetricsItemNames bool
	// Traces says where spans go: TracesOff (the default) nowhere,
	// TracesOTLP to an OpenTelemetry collector over OTLP. The standard
	// OTEL_* environment variables win over the settings here.
	Traces string
	// OTLPEndpoint is the collector's URL; empty for the exporter's
	// default (http://localhost:4318, or localhost:4317 over gRPC).
	OTLPEndpoint string
	// OTLPProtocol is OTLPHTTP (the default) or OTLPGRPC.
	OTLPProtocol string
	// TraceSampleRatio is the share of traces sampled, from 0 to 1
	// (default 1), of requests without a sampled parent.
	TraceSampleRatio float64
	// Audit says where the audit trail goes: AuditOff (the default)
	// nowhere, AuditStderr to stderr, AuditFile to AuditFile.
	Audit string
	// AuditFile is the absolute path of the audit trail's file, which
	// turns over at AuditMaxMiB (default 100), keeping AuditMaxFiles
	// (default 5) older files.
	AuditFile     string
	AuditMaxMiB   int
	AuditMaxFiles int
	// StatusTokenFile is the absolute path of a file holding the bearer
	// token /status requires; StatusScope the scope of a JWT ([auth] mode
	// "jwt") that opens it (default "mcphost:operator"). Without either,
	// /status is open only on a loopback listener without auth.
	StatusTokenFile string
	StatusScope     string
}

// StateConfig holds the [state] table: the backend of the state several
// replicas of one service share (2025-era sessions, tasks, limits).
type StateConfig struct {
	// Backend is StateMemory (the default: this process's memory, nothing
	// shared) or StateRedis.
	Backend string
	// URL is the Redis server's redis:// or rediss:// URL, with its ACL
	// user if any and without a password.
	URL string
	// Password is where the password is, from password_file or
	// password_env; the zero Secret for none.
	Password Secret
	// Prefix starts every key mcphost writes (default "mcphost:"), so
	// that services sharing a Redis keep apart.
	Prefix string
	// CAFile is the absolute path of the PEM certificates that a
	// rediss:// server's certificate must chain to; "": the system's.
	CAFile string
	// TaskLease is how long a replica vouches for the tasks it runs,
	// renewing it a third of the way: a task whose replica stopped
	// renewing for this long has failed (the replica is lost).
	TaskLease time.Duration
}

// DefaultTaskLease is StateConfig.TaskLease unless task_lease says.
const DefaultTaskLease = 15 * time.Second

// The values of StateConfig.Backend.
const (
	StateMemory = "memory"
	StateRedis  = "redis"
)

// DefaultStatusScope is the scope of a JWT that opens /status.
const DefaultStatusScope = "mcphost:operator"

// The values of TelemetryConfig.Audit.
const (
	AuditOff    = "off"
	AuditStderr = "stderr"
	AuditFile   = "file"
)

// The values of TelemetryConfig.Traces.
const (
	TracesOff  = "off"
	TracesOTLP = "otlp"
)

// The values of TelemetryConfig.OTLPProtocol.
const (
	OTLPHTTP = "http/protobuf"
	OTLPGRPC = "grpc"
)

// The values of TelemetryConfig.Metrics.
const (
	MetricsAuto = "auto"
	MetricsOn   = "on"
	MetricsOff  = "off"
)

// The values of ServerConfig.OnLoadError.
const (
	OnLoadErrorFail = "fail" // serve exits, naming each plugin and why
	OnLoadErrorSkip = "skip" // serve the rest, with a warning for each
)

// Named reports whether the config names the plugin name in a
// [plugins.NAME] table that does not disable it: a plugin the operator
// expects to be served.
func (c *Config) Named(name string) bool {
	pc, ok := c.Plugins[name]
	return ok && !pc.Disabled
}

// minRequestStateKey is the least length of a requestState key, in bytes.
const minRequestStateKey = 32

// RequestStateKeys reads the keys of [server] request_state_key_file: one
// a line, blank lines and lines starting with # left out, each at least 32
// bytes. Nil, with no error, when no file is set.
func (c *Config) RequestStateKeys() ([][]byte, error) {
	path := c.Server.RequestStateKeyFile
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("server.request_state_key_file: %w", err)
	}
	var keys [][]byte
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if len(line) < minRequestStateKey {
			return nil, fmt.Errorf("server.request_state_key_file: %s line %d: a key must have at least 32 bytes, this one has %d", path, i+1, len(line))
		}
		keys = append(keys, []byte(line))
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("server.request_state_key_file: %s has no key", path)
	}
	return keys, nil
}

// HTTPConfig holds the [http] table.
type HTTPConfig struct {
	// Listen is the host:port to listen on. Change it with
	// Config.SetListen, which also updates the defaults derived from it.
	Listen string
	// AllowedHosts are the accepted Host header values: "host" (any port)
	// or "host:port", IPv6 addresses in brackets. Empty: the transport's
	// default, the loopback names with the listen port.
	AllowedHosts []string
	// AllowedOrigins are the accepted Origin header values,
	// "scheme://host[:port]". Empty: the transport's default, http and
	// https origins of the allowed hosts.
	AllowedOrigins []string
	// SessionIdleTimeout ends a session after this long without requests.
	SessionIdleTimeout time.Duration
	// DrainDelay is how long serve, told to stop (SIGTERM, SIGINT), fails
	// /readyz while it still serves, before it stops taking requests: long
	// enough for a load balancer's health checks to take it out. 0: none.
	DrainDelay time.Duration
	// InitTimeout ends a session whose client has not finished
	// initializing this long after its last request.
	InitTimeout time.Duration
	// MaxSessions caps the number of open sessions.
	MaxSessions int
	// MaxSessionsPerClient caps the open sessions of one client: a user
	// with [auth] mode = "jwt", else an address.
	MaxSessionsPerClient int
	// MaxBodyBytes caps the size of one request body.
	MaxBodyBytes int
	// MaxBodyBytesInFlight caps the request body bytes being received at
	// once, server-wide; at least MaxBodyBytes.
	MaxBodyBytesInFlight int
	// MaxBodyBytesInFlightPerClient caps the request body bytes being
	// received at once from one client, as MaxSessionsPerClient counts it;
	// at least MaxBodyBytes.
	MaxBodyBytesInFlightPerClient int
	// MaxConnections caps the connections open at once.
	MaxConnections int
	// MaxConnectionsPerClient caps the connections open at once from one
	// client address.
	MaxConnectionsPerClient int
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client address of the per-client limits. Empty: none.
	TrustedProxies []netip.Prefix
	// MaxBatchResponseBytes caps the reply to a JSON-RPC batch.
	MaxBatchResponseBytes int
}

// Endpoint is one [[endpoints]] table: an MCP endpoint of the HTTP
// transport that serves only some plugins.
type Endpoint struct {
	// Path is where it serves Streamable HTTP; it serves HTTP+SSE at
	// Path+"/sse" (messages at Path+"/messages"). "/mcp" changes what the
	// default endpoint, with its /sse, serves.
	Path string
	// Plugins are the names of the plugins it serves, each with a
	// [plugins.NAME] table.
	Plugins []string
}

// AuthMode is how HTTP requests are authenticated.
type AuthMode string

// The authentication modes.
const (
	// AuthNone accepts every request.
	AuthNone AuthMode = "none"
	// AuthBearer accepts one static bearer token.
	AuthBearer AuthMode = "bearer"
	// AuthJWT accepts JWT access tokens from an OAuth authorization server.
	AuthJWT AuthMode = "jwt"
)

// AuthConfig holds the [auth] table. Fields that do not apply to Mode are
// ignored.
type AuthConfig struct {
	// Mode is the authentication mode; AuthNone unless the file sets one.
	Mode AuthMode
	// Resource is the canonical URI of the MCP endpoint (RFC 8707); by
	// default http://<listen>/mcp.
	Resource string
	// TokenEnv names the environment variable holding the bearer token.
	TokenEnv string
	// TokenFile is the absolute path of the file holding the bearer token.
	TokenFile string
	// Issuer is the expected iss claim and the authorization server
	// advertised in the protected resource metadata.
	Issuer string
	// JWKSURL is where the issuer's signing keys are published.
	JWKSURL string
	// Audience must be one of a token's aud values; by default Resource.
	Audience string
	// Scopes are the scopes every request's token must carry.
	Scopes []string
	// ScopesSupported are the scopes advertised in the protected resource
	// metadata; by default Scopes.
	ScopesSupported []string
}

// fileKeys is a set of the settings whose defaults derive from other
// settings (derive computes those the file does not set), and [auth] mode,
// whose absence CheckExposure tells from an explicit "none".
type fileKeys uint8

const (
	setResource fileKeys = 1 << iota
	setAudience
	setScopesSupported
	setAuthMode
)

// Limits are the resource limits of a plugin.
type Limits struct {
	// MemoryMiB caps the plugin's linear memory, in MiB.
	MemoryMiB int
	// Timeout bounds each call into the plugin.
	Timeout time.Duration
	// MaxOutputBytes caps the size of one call's output.
	MaxOutputBytes int
	// MaxInstances is the number of plugin instances that may run at once.
	MaxInstances int
	// MaxQueue is the number of calls that may wait for a free instance;
	// a call that finds the queue full fails at once.
	MaxQueue int
	// CallsPerSecond caps the calls clients make into the plugin (tool
	// calls, prompt gets, resource reads, completions): a token bucket
	// refilled at this rate, holding up to max(1, CallsPerSecond) calls. A
	// call beyond it fails at once. 0 means no limit.
	CallsPerSecond float64
	// HostCallsPerSecond bounds the host function calls one call into
	// the plugin makes: a token bucket of this many, refilled at this
	// rate; a call that goes beyond it is stopped with an error.
	HostCallsPerSecond int
	// MaxModuleMiB caps the size of the plugin's file, a wasm module or a
	// JavaScript source, which bounds the time and memory of reading and
	// compiling it; a larger file is refused at load, unread.
	MaxModuleMiB int
	// MaxListItems caps how many tools, prompts, resources or resource
	// templates one plugin may list (each kind separately); the rest are
	// left out with a warning.
	MaxListItems int
	// LoadBudget bounds the time of loading one plugin, once its code is
	// compiled: making its first instance (its start function) and listing
	// everything it offers (its initialisation, then all its list exports
	// and their pages). A plugin still loading then has failed to load.
	// It bounds every later listing of the plugin too.
	LoadBudget time.Duration
	// BreakerFailures is how many failures (traps, timeouts, oversized or
	// malformed output) within BreakerWindow open the plugin's circuit
	// breaker; 0 turns the breaker off.
	BreakerFailures int
	// BreakerWindow is the window in which BreakerFailures are counted.
	BreakerWindow time.Duration
	// BreakerBackoff is how long the breaker first stays open; it doubles
	// each time the probe after it fails, up to BreakerMaxBackoff.
	BreakerBackoff time.Duration
	// BreakerMaxBackoff caps how long the breaker stays open.
	BreakerMaxBackoff time.Duration
	// WazeroChecks compiles wazero's own look at the call's context into
	// the plugin's code too, at every loop head, besides the sandbox's
	// countdown: a second line, at some 30 ns an iteration.
	WazeroChecks bool
}

// PluginConfig holds the settings of one plugin.
type PluginConfig struct {
	// Name is the plugin name: its file name without extension.
	Name string
	// Prefix is prepended to the plugin's tool, prompt and resource
	// template names.
	Prefix string
	// Disabled keeps the plugin from being loaded.
	Disabled bool
	// Isolation says whose calls may share an instance of the plugin (its
	// memory and vars): IsolationShared, IsolationUser or
	// IsolationSession. Plugin gives the default when it is unset:
	// IsolationUser with an [auth] mode that authenticates, else
	// IsolationShared.
	Isolation string
	// Limits are the plugin's resource limits.
	Limits Limits
	// HostFunctions are the granted host functions (names from
	// abi.HostFunctionNames). A plugin may import no others.
	HostFunctions []string
	// AllowedHosts are what the plugin may send HTTP requests to, each
	// "[scheme://]host[:port]": "api.example.com" (http or https on the
	// default port), "https://*.example.org", "example.net:8443",
	// "10.0.0.5:*", "*".
	AllowedHosts []string
	// AllowPrivateNetwork lets the plugin's requests connect to loopback,
	// private, link-local, CGNAT and other non-public addresses. Without
	// it, such an address is refused when connecting, whatever name led
	// to it, unless AllowedHosts names the address itself.
	AllowPrivateNetwork bool
	// Secrets are configuration values the plugin reads with config_get
	// like Config, taken from the environment or a file when the plugin
	// loads; their values never appear in logs or errors.
	Secrets map[string]Secret
	// SHA256 pins the plugin file: the lower-case hex SHA-256 the file
	// must have, or "" for no pin.
	SHA256 string
	// Tools, Prompts and Resources are allow-lists of glob patterns
	// ("search_*") of the items the plugin exposes: tool and prompt names
	// (the plugin's own, without prefix), resource URIs and resource
	// template URI templates. Nil exposes everything; empty, nothing.
	Tools, Prompts, Resources []string
	// SkipTools, SkipPrompts and SkipResources are deny-lists of the same
	// form, applied after the allow-lists: what matches is not exposed.
	SkipTools, SkipPrompts, SkipResources []string
	// Rename maps tool and prompt names, the plugin's own, to the names
	// they are exposed under, instead of prefix plus name.
	Rename map[string]string
	// Rank is the line of the plugin's table in the file: a plugin named
	// earlier keeps a tool or prompt name that a later one also exposes.
	Rank int
	// Config holds the values the plugin may read with config_get.
	Config map[string]string
	// Mounts are the host directories visible to the plugin.
	Mounts []Mount
	// TaskSupport sets whether clients may run the plugin's tools as MCP
	// tasks (execution.taskSupport): abi.TaskForbidden, abi.TaskOptional or
	// abi.TaskRequired by tool name (the plugin's own, without prefix), "*"
	// for the tools not named. It overrides what the plugin declares.
	TaskSupport map[string]string
	// Source is where the plugin comes from instead of the plugins folder:
	// "oci://REGISTRY/REPOSITORY:TAG", "oci://REGISTRY/REPOSITORY@sha256:…",
	// or an https URL (SHA256 required). "" for the folder.
	Source string
	// Verify is how an OCI source must be signed.
	Verify Verify
	// AllowUnsigned lets an OCI source run without a verified signature.
	AllowUnsigned bool
	// Keyring are the keyring entries the plugin may read with
	// get_keyring_secret (hyper-mcp's allowed_secrets).
	Keyring []KeyringEntry
	// OAuth2 are the OAuth2 clients the plugin may get access tokens of
	// with get_access_token.
	OAuth2 []OAuth2Client
	// AuditArguments puts the arguments of the plugin's tool calls in the
	// audit trail, its secret values redacted; off by default.
	AuditArguments bool
	// RequireScopes are the OAuth scopes a client's token must all hold
	// for the client to see the plugin at all (its tools, prompts,
	// resources, templates and completions); nil for every client. Only
	// [auth] mode "jwt" gives clients scopes.
	RequireScopes []string
	// CacheTTL and CacheScope are the caching hints (2026-07-28 ttlMs and
	// cacheScope) of what the plugin lists and reads: how long a client
	// may reuse it, and whether it may share it between users ("public")
	// or not ("private", the default).
	CacheTTL   time.Duration
	CacheScope string

	// set records which Limits fields the plugin's table sets; Plugin
	// takes the others from Config.Defaults.
	set limitKeys
}

// Mount makes a host directory visible to a plugin.
type Mount struct {
	// Host is the absolute, cleaned host directory.
	Host string
	// Guest is the absolute, cleaned path the plugin sees it at.
	Guest string
	// ReadOnly forbids the plugin to modify anything under Guest.
	ReadOnly bool
}

// Secret is where a secret configuration value comes from: exactly one of
// Env and File is set.
type Secret struct {
	// Env names the environment variable holding the value.
	Env string
	// File is the absolute path of the file holding the value.
	File string
}

// String describes where the secret comes from, never its value.
func (s Secret) String() string {
	if s.File != "" {
		return "file:" + s.File
	}
	return "env:" + s.Env
}

// Value reads the secret: the environment variable, which must be set and
// not empty, or the file, without trailing newlines, which must not be
// empty. Errors name the variable or file, never the value.
func (s Secret) Value() (string, error) {
	if s.File != "" {
		b, err := os.ReadFile(s.File)
		if err != nil {
			return "", fmt.Errorf("reading secret file: %w", err)
		}
		v := strings.TrimRight(string(b), "\r\n")
		if v == "" {
			return "", fmt.Errorf("secret file %s is empty", s.File)
		}
		return v, nil
	}
	v, ok := os.LookupEnv(s.Env)
	switch {
	case !ok:
		return "", fmt.Errorf("environment variable %s is not set", s.Env)
	case v == "":
		return "", fmt.Errorf("environment variable %s is empty", s.Env)
	}
	return v, nil
}

// OAuth2Secret reads the secret of the plugin's i-th OAuth2 client, "" for
// a public client. The error names the client and the secret's source,
// never its value.
func (p PluginConfig) OAuth2Secret(i int) (string, error) {
	c := p.OAuth2[i]
	if c.ClientSecret == nil {
		return "", nil
	}
	v, err := c.ClientSecret.Value()
	if err != nil {
		return "", fmt.Errorf("plugins.%s.oauth2[%d].client_secret of client %q (%s): %w", p.Name, i, c.ClientID, c.ClientSecret, err)
	}
	return v, nil
}

// SecretValues reads the plugin's secrets, by config key. The error names
// the key and the source of the first secret that cannot be read.
func (p PluginConfig) SecretValues() (map[string]string, error) {
	if len(p.Secrets) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(p.Secrets))
	for _, k := range slices.Sorted(maps.Keys(p.Secrets)) {
		v, err := p.Secrets[k].Value()
		if err != nil {
			return nil, fmt.Errorf("plugins.%s.secrets.%s (%s): %w", p.Name, k, p.Secrets[k], err)
		}
		out[k] = v
	}
	return out, nil
}

// limitKeys is a set of Limits fields, one bit per [defaults] key.
type limitKeys uint16

const (
	setMemoryMiB limitKeys = 1 << iota
	setTimeout
	setMaxOutputBytes
	setMaxInstances
	setMaxQueue
	setCallsPerSecond
	setMaxListItems
	setBreakerFailures
	setBreakerWindow
	setBreakerBackoff
	setBreakerMaxBackoff
	setHostCallsPerSecond
	setLoadBudget
	setMaxModuleMiB
	setWazeroChecks
)

// merge returns l with the fields in set taken from over.
func (l Limits) merge(over Limits, set limitKeys) Limits {
	if set&setMemoryMiB != 0 {
		l.MemoryMiB = over.MemoryMiB
	}
	if set&setTimeout != 0 {
		l.Timeout = over.Timeout
	}
	if set&setMaxOutputBytes != 0 {
		l.MaxOutputBytes = over.MaxOutputBytes
	}
	if set&setMaxInstances != 0 {
		l.MaxInstances = over.MaxInstances
	}
	if set&setMaxQueue != 0 {
		l.MaxQueue = over.MaxQueue
	}
	if set&setCallsPerSecond != 0 {
		l.CallsPerSecond = over.CallsPerSecond
	}
	if set&setHostCallsPerSecond != 0 {
		l.HostCallsPerSecond = over.HostCallsPerSecond
	}
	if set&setMaxModuleMiB != 0 {
		l.MaxModuleMiB = over.MaxModuleMiB
	}
	if set&setMaxListItems != 0 {
		l.MaxListItems = over.MaxListItems
	}
	if set&setLoadBudget != 0 {
		l.LoadBudget = over.LoadBudget
	}
	if set&setBreakerFailures != 0 {
		l.BreakerFailures = over.BreakerFailures
	}
	if set&setBreakerWindow != 0 {
		l.BreakerWindow = over.BreakerWindow
	}
	if set&setBreakerBackoff != 0 {
		l.BreakerBackoff = over.BreakerBackoff
	}
	if set&setBreakerMaxBackoff != 0 {
		l.BreakerMaxBackoff = over.BreakerMaxBackoff
	}
	if set&setWazeroChecks != 0 {
		l.WazeroChecks = over.WazeroChecks
	}
	return l
}

// Sandbox returns the sandbox limits of l, as the plugin loader hands them
// over: max_queue 0, no queue, is sandbox.NoQueue. A
// memory limit beyond what MemoryMiB holds becomes the largest it holds,
// as far out of bounds.
func (l Limits) Sandbox() sandbox.Limits {
	queue := l.MaxQueue
	if queue == 0 {
		queue = sandbox.NoQueue
	}
	return sandbox.Limits{
		MemoryMiB:          uint32(min(l.MemoryMiB, math.MaxUint32)),
		Timeout:            l.Timeout,
		MaxOutputBytes:     l.MaxOutputBytes,
		MaxInstances:       l.MaxInstances,
		MaxQueue:           queue,
		HostCallsPerSecond: l.HostCallsPerSecond,
		MaxModuleMiB:       l.MaxModuleMiB,
		WazeroChecks:       l.WazeroChecks,
	}
}

// Default returns the configuration used when there is no file.
func Default() *Config {
	c := &Config{
		Server: ServerConfig{
			Name:            "mcphost",
			Title:           "mcphost",
			PageSize:        100,
			StartupWait:     500 * time.Millisecond,
			MemoryBudgetMiB: sandbox.DefaultMemoryBudgetMiB,
			UnloadIdleAfter: DefaultUnloadIdleAfter,
			OnLoadError:     OnLoadErrorFail,
			CacheMaxMiB:     DefaultCacheMaxMiB,
			ToolNames:       ToolNamesPortable,
			PullTimeout:     2 * time.Minute,
		},
		Defaults: Limits{
			MemoryMiB:      128,
			Timeout:        30 * time.Second,
			MaxOutputBytes: 4 << 20,
			MaxInstances:   4,
			MaxQueue:       64,
			// CallsPerSecond 0: no limit.
			HostCallsPerSecond: 1000,
			MaxModuleMiB:       sandbox.DefaultMaxModuleMiB,
			MaxListItems:       1000,
			BreakerFailures:    5,
			BreakerWindow:      30 * time.Second,
			LoadBudget:         5 * time.Second,
			BreakerBackoff:     10 * time.Second,
			BreakerMaxBackoff:  5 * time.Minute,
		},
		Plugins:   map[string]PluginConfig{},
		Telemetry: TelemetryConfig{Metrics: MetricsAuto, Traces: TracesOff, OTLPProtocol: OTLPHTTP, TraceSampleRatio: 1, Audit: AuditOff, AuditMaxMiB: 100, AuditMaxFiles: 5, StatusScope: DefaultStatusScope},
		State:     StateConfig{Backend: StateMemory, Prefix: "mcphost:", TaskLease: DefaultTaskLease},
		HTTP: HTTPConfig{
			Listen:               "127.0.0.1:8080",
			SessionIdleTimeout:   5 * time.Minute,
			MaxSessions:          1000,
			InitTimeout:          10 * time.Second,
			MaxSessionsPerClient: 256,
			MaxBodyBytes:         4 << 20,

			MaxBodyBytesInFlight:          256 << 20,
			MaxBodyBytesInFlightPerClient: 64 << 20,
			MaxConnections:                4096,
			MaxConnectionsPerClient:       512,
			MaxBatchResponseBytes:         8 << 20,
		},
		Auth: AuthConfig{Mode: AuthNone},
	}
	c.derive()
	return c
}

// derive sets the settings the file does not set to their defaults, which
// derive from other settings.
func (c *Config) derive() {
	for name, p := range c.Plugins {
		if p.Isolation == "" {
			p.Isolation = c.defaultIsolation()
			c.Plugins[name] = p
		}
	}
	if c.set&setResource == 0 {
		c.Auth.Resource = c.Scheme() + "://" + reachableAddr(c.HTTP.Listen) + "/mcp"
	}
	if c.set&setAudience == 0 {
		c.Auth.Audience = c.Auth.Resource
	}
	if c.set&setScopesSupported == 0 {
		c.Auth.ScopesSupported = slices.Clone(c.Auth.Scopes)
	}
}

// reachableAddr returns the listen address as clients on this machine
// reach it: with "localhost" for a host that means every interface.
func reachableAddr(listen string) string {
	host, port, _ := net.SplitHostPort(listen)
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}

// isLoopback reports whether host, a name or an IP address without
// brackets, is the loopback interface.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// SetListen sets the HTTP listen address, as --listen does, and updates the
// defaults derived from it (resource, and audience from it) that the file
// does not set.
func (c *Config) SetListen(addr string) error {
	if err := checkListen(addr); err != nil {
		return fmt.Errorf("listen address: %w", err)
	}
	c.HTTP.Listen = addr
	c.derive()
	return nil
}

// CheckExposure returns an error when serving HTTP on the listen address
// would be unauthenticated by default: the address is not loopback and the
// file does not set [auth] mode. Writing mode = "none" serves without
// authentication on purpose.
func (c *Config) CheckExposure() error {
	host, _, _ := net.SplitHostPort(c.HTTP.Listen)
	if c.Auth.Mode != AuthNone || c.set&setAuthMode != 0 || isLoopback(host) {
		return nil
	}
	file := c.Path
	if file == "" {
		file = "mcphost.toml"
	}
	return fmt.Errorf("refusing to serve HTTP on %s without authentication: it is not a loopback address; "+
		"set mode = \"bearer\" or \"jwt\" in the [auth] table of %s, "+
		"or write mode = \"none\" there to serve without authentication on purpose", c.HTTP.Listen, file)
}

// Load reads and validates the configuration file at path. Keys the file
// does not set keep their Default values. When the file cannot be read the
// error wraps the cause (errors.Is(err, fs.ErrNotExist) when it is missing);
// when its content is invalid the error is an Errors listing every problem.
func Load(path string) (*Config, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	cfg, errs := parse(path, filepath.Dir(abs), string(src))
	if len(errs) > 0 {
		return nil, errs
	}
	cfg.Path = abs
	return cfg, nil
}

// Plugin returns the effective settings of the named plugin: Defaults
// merged with its table. A plugin without a table gets Defaults and no
// grants.
func (c *Config) Plugin(name string) PluginConfig {
	p, ok := c.Plugins[name]
	if !ok {
		return PluginConfig{Name: name, Limits: c.Defaults, Isolation: c.defaultIsolation(), CacheScope: CacheScopePrivate}
	}
	p.Name = name
	p.Isolation = cmp.Or(p.Isolation, c.defaultIsolation())
	p.Limits = c.Defaults.merge(p.Limits, p.set)
	p.HostFunctions = slices.Clone(p.HostFunctions)
	p.AllowedHosts = slices.Clone(p.AllowedHosts)
	p.Config = maps.Clone(p.Config)
	p.Mounts = slices.Clone(p.Mounts)
	p.TaskSupport = maps.Clone(p.TaskSupport)
	p.Secrets = maps.Clone(p.Secrets)
	p.Tools = slices.Clone(p.Tools)
	p.SkipTools = slices.Clone(p.SkipTools)
	p.SkipPrompts = slices.Clone(p.SkipPrompts)
	p.SkipResources = slices.Clone(p.SkipResources)
	p.Rename = maps.Clone(p.Rename)
	p.Prompts = slices.Clone(p.Prompts)
	p.Resources = slices.Clone(p.Resources)
	return p
}

// The values of PluginConfig.CacheScope.
const (
	CacheScopePrivate = "private" // for the user who asked only
	CacheScopePublic  = "public"  // for any user
)

// The values of PluginConfig.Isolation.
const (
	IsolationShared  = "shared"  // any call may use any instance
	IsolationUser    = "user"    // an instance serves one authenticated subject
	IsolationSession = "session" // an instance serves one client session
)

// defaultIsolation is the isolation of plugins that do not set one: per
// user when clients authenticate, since then they may be different people.
func (c *Config) defaultIsolation() string {
	if c.Auth.Mode == AuthBearer || c.Auth.Mode == AuthJWT {
		return IsolationUser
	}
	return IsolationShared
}

// CacheDir returns the wasm compilation cache directory: "" when caching
// is off, <user cache dir>/mcphost/wazero when none is configured,
// otherwise the configured directory.
func (c *Config) CacheDir() (string, error) {
	switch c.Server.CacheDir {
	case "off":
		return "", nil
	case "":
		base, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("cache directory: %w", err)
		}
		return filepath.Join(base, "mcphost", "wazero"), nil
	}
	return c.Server.CacheDir, nil
}
