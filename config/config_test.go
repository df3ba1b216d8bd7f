package config

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// write writes src to mcphost.toml in a new directory and returns its path.
func write(t *testing.T, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "mcphost.toml")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func load(t *testing.T, src string) *Config {
	t.Helper()
	cfg, err := Load(write(t, src))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return cfg
}

// loadErrors loads src and returns the problems it has.
func loadErrors(t *testing.T, src string) (string, Errors) {
	t.Helper()
	p := write(t, src)
	cfg, err := Load(p)
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Load: got %v, %v; want Errors", cfg, err)
	}
	if cfg != nil {
		t.Errorf("Load returned a config along with errors")
	}
	return p, errs
}

func TestDefault(t *testing.T) {
	want := &Config{
		Server: ServerConfig{Name: "mcphost", Title: "mcphost", PageSize: 100, StartupWait: 500 * time.Millisecond, MemoryBudgetMiB: 16384, UnloadIdleAfter: DefaultUnloadIdleAfter, OnLoadError: OnLoadErrorFail, CacheMaxMiB: DefaultCacheMaxMiB, ToolNames: ToolNamesPortable, PullTimeout: 2 * time.Minute},
		Defaults: Limits{
			MemoryMiB:      128,
			Timeout:        30 * time.Second,
			MaxOutputBytes: 4194304,
			MaxInstances:   4,
			MaxQueue:       64,

			HostCallsPerSecond: 1000,
			MaxModuleMiB:       20,
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
			InitTimeout:          10 * time.Second,
			MaxSessions:          1000,
			MaxSessionsPerClient: 256,
			MaxBodyBytes:         4194304,

			MaxBodyBytesInFlight:          256 << 20,
			MaxBodyBytesInFlightPerClient: 64 << 20,
			MaxConnections:                4096,
			MaxConnectionsPerClient:       512,
			MaxBatchResponseBytes:         8 << 20,
		},
		Auth: AuthConfig{
			Mode:     AuthNone,
			Resource: "http://127.0.0.1:8080/mcp",
			Audience: "http://127.0.0.1:8080/mcp",
		},
	}
	if got := Default(); !reflect.DeepEqual(got, want) {
		t.Errorf("Default() = %+v, want %+v", got, want)
	}
}

func TestLoadEmptyIsDefault(t *testing.T) {
	p := write(t, "# nothing\n")
	cfg, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Path != p {
		t.Errorf("Path = %q, want %q", cfg.Path, p)
	}
	cfg.Path = ""
	if !reflect.DeepEqual(cfg, Default()) {
		t.Errorf("empty file: got %+v, want Default()", cfg)
	}
}

func TestLoadMissing(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "none.toml"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load of a missing file: %v, want fs.ErrNotExist", err)
	}
}

func TestLoadAll(t *testing.T) {
	cfg := load(t, `
[server]
name = "srv"
title = "My Server"
cache_dir = "off"
page_size = 20
memory_budget_mib = 2048

[defaults]
memory_mib = 256
timeout = "1m"
max_output_bytes = 1024
max_instances = 2
max_queue = 0

[plugins.files]
prefix = "fs_"
disabled = true
memory_mib = 64
timeout = "5s"
host_functions = ["notify_logging_message", "list_roots"]
allowed_hosts = ["api.example.com", "*.example.org", "example.net:8443", "*", "10.0.0.1:80", "[::1]:8080"]
config = { root = "/data", depth = 3, ratio = 0.5, verbose = true }
`)
	if want := (ServerConfig{Name: "srv", Title: "My Server", CacheDir: "off", PageSize: 20, StartupWait: 500 * time.Millisecond, MemoryBudgetMiB: 2048, UnloadIdleAfter: DefaultUnloadIdleAfter, OnLoadError: OnLoadErrorFail, CacheMaxMiB: DefaultCacheMaxMiB, ToolNames: ToolNamesPortable, PullTimeout: 2 * time.Minute}); cfg.Server != want {
		t.Errorf("Server = %+v, want %+v", cfg.Server, want)
	}
	defaults := Default().Defaults
	defaults.MemoryMiB, defaults.Timeout, defaults.MaxOutputBytes, defaults.MaxInstances, defaults.MaxQueue = 256, time.Minute, 1024, 2, 0
	if cfg.Defaults != defaults {
		t.Errorf("Defaults = %+v, want %+v", cfg.Defaults, defaults)
	}
	got := cfg.Plugin("files")
	want := PluginConfig{
		Name:          "files",
		Prefix:        "fs_",
		Isolation:     IsolationShared,
		Disabled:      true,
		Limits:        withLimits(defaults, func(l *Limits) { l.MemoryMiB, l.Timeout = 64, 5*time.Second }),
		HostFunctions: []string{"notify_logging_message", "list_roots"},
		AllowedHosts:  []string{"api.example.com", "*.example.org", "example.net:8443", "*", "10.0.0.1:80", "[::1]:8080"},
		Config:        map[string]string{"root": "/data", "depth": "3", "ratio": "0.5", "verbose": "true"},
		CacheScope:    CacheScopePrivate,
		set:           setMemoryMiB | setTimeout,
		Rank:          16, // the line of [plugins.files]
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Plugin(files) =\n%+v\nwant\n%+v", got, want)
	}
	if !reflect.DeepEqual(cfg.Plugins["files"], want) {
		t.Errorf("Plugins[files] = %+v, want the merged settings", cfg.Plugins["files"])
	}
}

func TestPluginMerging(t *testing.T) {
	cfg := load(t, `
[defaults]
timeout = "20s"
max_queue = 8

[plugins.a]
max_queue = 0
max_instances = 1
`)
	a := cfg.Plugin("a")
	if want := withLimits(Default().Defaults, func(l *Limits) { l.Timeout, l.MaxInstances, l.MaxQueue = 20*time.Second, 1, 0 }); a.Limits != want {
		t.Errorf("Plugin(a).Limits = %+v, want %+v", a.Limits, want)
	}

	// A plugin without a table gets the defaults and no grants.
	b := cfg.Plugin("b")
	if want := (PluginConfig{Name: "b", Limits: cfg.Defaults, Isolation: IsolationShared, CacheScope: CacheScopePrivate}); !reflect.DeepEqual(b, want) {
		t.Errorf("Plugin(b) = %+v, want %+v", b, want)
	}

	// Later changes to Defaults reach the keys a plugin does not set.
	cfg.Defaults.Timeout = time.Second
	cfg.Defaults.MaxQueue = 99
	a = cfg.Plugin("a")
	if a.Limits.Timeout != time.Second || a.Limits.MaxQueue != 0 || a.Limits.MaxInstances != 1 {
		t.Errorf("after changing Defaults: Plugin(a).Limits = %+v", a.Limits)
	}
}

func TestPluginReturnsCopies(t *testing.T) {
	cfg := load(t, `
[plugins.a]
host_functions = ["list_roots"]
config = { k = "v" }
`)
	a := cfg.Plugin("a")
	a.HostFunctions[0] = "x"
	a.Config["k"] = "x"
	if again := cfg.Plugin("a"); again.HostFunctions[0] != "list_roots" || again.Config["k"] != "v" {
		t.Errorf("changing a returned PluginConfig changed the Config: %+v", again)
	}
}

func TestMounts(t *testing.T) {
	p := write(t, `
[[plugins.files.mounts]]
host = "./docs"
guest = "/data/"

[[plugins.files.mounts]]
host = "/srv/out"
guest = "/out"
mode = "rw"

[plugins.inline]
mounts = [{ host = "../up", guest = "/up", mode = "ro" }]
`)
	cfg, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(p)
	want := []Mount{
		{Host: filepath.Join(dir, "docs"), Guest: "/data", ReadOnly: true},
		{Host: "/srv/out", Guest: "/out", ReadOnly: false},
	}
	if got := cfg.Plugin("files").Mounts; !reflect.DeepEqual(got, want) {
		t.Errorf("files mounts = %+v, want %+v", got, want)
	}
	wantInline := []Mount{{Host: filepath.Join(filepath.Dir(dir), "up"), Guest: "/up", ReadOnly: true}}
	if got := cfg.Plugin("inline").Mounts; !reflect.DeepEqual(got, wantInline) {
		t.Errorf("inline mounts = %+v, want %+v", got, wantInline)
	}
}

func TestMountPathsRelativeToConfigFile(t *testing.T) {
	// Loading through a relative path still resolves against the file's
	// directory, not the working directory.
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := "[[plugins.p.mounts]]\nhost = \"data\"\nguest = \"/d\"\n"
	if err := os.WriteFile(filepath.Join(dir, "conf", "mcphost.toml"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	cfg, err := Load(filepath.Join("conf", "mcphost.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cfg.Plugin("p").Mounts[0].Host, filepath.Join(dir, "conf", "data"); got != want {
		t.Errorf("mount host = %q, want %q", got, want)
	}
	if got, want := cfg.Path, filepath.Join(dir, "conf", "mcphost.toml"); got != want {
		t.Errorf("Path = %q, want %q", got, want)
	}
}

func TestCacheDir(t *testing.T) {
	userCache, err := os.UserCacheDir()
	if err != nil {
		t.Skip("no user cache dir:", err)
	}
	p := write(t, "[server]\ncache_dir = \"cache\"\n")
	for _, tc := range []struct{ setting, want string }{
		{"", filepath.Join(userCache, "mcphost", "wazero")},
		{"off", ""},
		{"/var/cache/x", "/var/cache/x"},
	} {
		cfg := Default()
		cfg.Server.CacheDir = tc.setting
		if got, err := cfg.CacheDir(); err != nil || got != tc.want {
			t.Errorf("cache_dir %q: CacheDir() = %q, %v; want %q", tc.setting, got, err, tc.want)
		}
	}
	cfg, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := cfg.CacheDir(); got != filepath.Join(filepath.Dir(p), "cache") {
		t.Errorf("relative cache_dir: CacheDir() = %q, want it next to the file", got)
	}
}

func TestRepoConfig(t *testing.T) {
	cfg, err := Load("../mcphost.toml")
	if err != nil {
		t.Fatalf("../mcphost.toml: %v", err)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	files := cfg.Plugin("files")
	wantMounts := []Mount{{Host: filepath.Join(root, "plugins", "examples"), Guest: "/data", ReadOnly: true}}
	if !reflect.DeepEqual(files.Mounts, wantMounts) {
		t.Errorf("files mounts = %+v, want %+v", files.Mounts, wantMounts)
	}
	if want := []string{"notify_logging_message"}; !reflect.DeepEqual(files.HostFunctions, want) {
		t.Errorf("files host_functions = %q, want %q", files.HostFunctions, want)
	}
	if want := []string{"notify_progress"}; !reflect.DeepEqual(cfg.Plugin("tools").HostFunctions, want) {
		t.Errorf("tools host_functions = %q, want %q", cfg.Plugin("tools").HostFunctions, want)
	}
	if p := cfg.Plugin("prompts"); p.Disabled || len(p.HostFunctions) > 0 || len(p.Mounts) > 0 || len(p.AllowedHosts) > 0 {
		t.Errorf("prompts = %+v, want enabled with no grants", p)
	}
	// The file spells out the [http] defaults and leaves authorization off
	// without writing mode, so that exposing the server is still refused.
	http := cfg.HTTP
	if len(http.AllowedHosts) > 0 || len(http.AllowedOrigins) > 0 {
		t.Errorf("allowed_hosts, allowed_origins = %q, %q; want empty", http.AllowedHosts, http.AllowedOrigins)
	}
	http.AllowedHosts, http.AllowedOrigins = nil, nil
	if def := Default(); !reflect.DeepEqual(http, def.HTTP) || !reflect.DeepEqual(cfg.Auth, def.Auth) {
		t.Errorf("[http], [auth] = %+v, %+v; want the defaults", cfg.HTTP, cfg.Auth)
	}
	if err := cfg.SetListen("0.0.0.0:8080"); err != nil {
		t.Fatal(err)
	}
	if cfg.CheckExposure() == nil {
		t.Error("../mcphost.toml: CheckExposure on 0.0.0.0 = nil, want a refusal")
	}
}

// TestErrors checks each kind of problem, its message and its line.
func TestErrors(t *testing.T) {
	testErrorCases(t, []errorCase{
		{"syntax", "[server]\nname = \n", 2, "expected value"},
		{"duplicate key", "[server]\nname = \"a\"\nname = \"b\"\n", 3, "already been defined"},
		{"unknown root key", "\n\nserverr = 1\n", 3, `unknown key "serverr"`},
		{"unknown root table", "\n[serverr]\nname = \"x\"\n", 2, `unknown key "serverr" (did you mean "server"?)`},
		{"unknown server key", "[server]\nname = \"x\"\npagesize = 3\n", 3, `unknown key "server.pagesize" (did you mean "page_size"?)`},
		{"key case matters", "[server]\nName = \"x\"\n", 2, `unknown key "server.Name"`},
		{"unknown plugin key", "[plugins.files]\ntimeout = \"5s\"\nmemroy_mib = 64\n", 3,
			`unknown key "plugins.files.memroy_mib" (did you mean "memory_mib"?)`},
		{"unknown plugin key dotted", "[plugins]\nfiles.timeout = \"5s\"\nfiles.memroy_mib = 64\n", 3,
			`unknown key "plugins.files.memroy_mib"`},
		{"unknown plugin key top-level dotted", "plugins.files.memroy_mib = 64\n", 1,
			`unknown key "plugins.files.memroy_mib"`},
		{"unknown plugin subtable", "[plugins.files]\nprefix = \"a\"\n\n[plugins.files.env]\nA = \"b\"\n", 4,
			`unknown key "plugins.files.env"`},
		{"unknown key in second mount", `[plugins.files]
[[plugins.files.mounts]]
host = "a"
guest = "/a"
[[plugins.files.mounts]]
host = "b"
gust = "/b"
guest = "/b"
`, 7, `unknown key "plugins.files.mounts[1].gust" (did you mean "guest"?)`},
		{"unknown key in inline mount", "[plugins.p]\nmounts = [\n  { host = \"a\", guest = \"/a\", size = 1 },\n]\n", 2,
			`unknown key "plugins.p.mounts[0].size"`},
		{"wrong type string", "[server]\n\nname = 3\n", 3, "server.name: expected string, got integer"},
		{"wrong type integer", "[defaults]\nmemory_mib = \"64\"\n", 2, "defaults.memory_mib: expected integer, got string"},
		{"wrong type float", "[defaults]\nmax_queue = 1.5\n", 2, "defaults.max_queue: expected integer, got float"},
		{"wrong type boolean", "[plugins.p]\ndisabled = \"yes\"\n", 2, "plugins.p.disabled: expected boolean, got string"},
		{"wrong type table", "server = \"x\"\n", 1, "server: expected table, got string"},
		{"wrong type plugins", "\nplugins = [1]\n", 2, "plugins: expected table, got array"},
		{"wrong type boolean value", "[server]\ncache_dir = true\n", 2, "server.cache_dir: expected string, got boolean"},
		{"wrong type array of tables", "[[server]]\nname = \"x\"\n", 1, "server: expected table, got array of tables"},
		{"wrong type config", "[plugins.p]\nconfig = \"root=/data\"\n", 2, "plugins.p.config: expected table, got string"},
		{"wrong type mount", "[plugins.p]\nmounts = [\"/data\"]\n", 2, "plugins.p.mounts[0]: expected table, got string"},
		{"wrong type plugin", "[plugins]\np = 1\n", 2, "plugins.p: expected table, got integer"},
		{"wrong type array", "[plugins.p]\nhost_functions = \"list_roots\"\n", 2,
			"plugins.p.host_functions: expected array of strings, got string"},
		{"wrong type element", "[plugins.p]\nallowed_hosts = [\n  \"a.com\",\n  7,\n]\n", 2,
			"plugins.p.allowed_hosts[1]: expected string, got integer"},
		{"wrong type mounts", "[plugins.p]\nmounts = \"/data\"\n", 2, "plugins.p.mounts: expected array of tables, got string"},
		{"wrong type mounts table", "[plugins.p.mounts]\nhost = \"a\"\n", 1, "plugins.p.mounts: expected array of tables, got table"},
		{"wrong type config value", "[plugins.p]\nconfig = { a = [1] }\n", 2,
			"plugins.p.config.a: expected string, number or boolean, got array"},
		{"wrong type date", "[server]\ntitle = 2024-01-01\n", 2, "server.title: expected string, got date-time"},
		{"empty name", "[server]\nname = \"\"\n", 2, "server.name: must not be empty"},
		{"page size low", "[server]\npage_size = 0\n", 2, "server.page_size: 0 is out of range (1..1000)"},
		{"page size high", "[server]\npage_size = 1001\n", 2, "server.page_size: 1001 is out of range (1..1000)"},
		{"memory budget low", "[server]\nname = \"x\"\nmemory_budget_mib = 63\n", 3, "server.memory_budget_mib: 63 is out of range (64..1048576)"},
		{"memory budget high", "[server]\nmemory_budget_mib = 1048577\n", 2, "server.memory_budget_mib: 1048577 is out of range (64..1048576)"},
		{"memory zero", "[defaults]\nmemory_mib = 0\n", 2, "defaults.memory_mib: 0 is less than 1"},
		{"instances low", "[plugins.p]\nmax_instances = 0\n", 2, "plugins.p.max_instances: 0 is less than 1"},
		{"queue negative", "[defaults]\nmax_queue = -1\n", 2, "defaults.max_queue: -1 is less than 0"},
		{"output zero", "[defaults]\nmax_output_bytes = 0\n", 2, "defaults.max_output_bytes: 0 is less than 1"},
		{"bad duration", "[plugins.p]\ntimeout = \"5 s\"\n", 2, `plugins.p.timeout: bad duration "5 s"`},
		{"duration integer", "[defaults]\ntimeout = 30\n", 2, `defaults.timeout: expected duration string such as "30s", got integer`},
		{"duration zero", "[defaults]\ntimeout = \"0s\"\n", 2, `defaults.timeout: "0s" is not positive`},
		{"duration long", "[defaults]\nbreaker_window = \"61m\"\n", 2, `defaults.breaker_window: "61m" is longer than 1h0m0s`},
		{"unknown host function", "[plugins.p]\nhost_functions = [\"notify_progress\", \"notify_log\"]\n", 2,
			`plugins.p.host_functions[1]: unknown host function "notify_log" (valid: create_message, create_elicitation, list_roots, request_input, notify_logging_message,`},
		{"empty host", "[plugins.p]\nallowed_hosts = [\"\"]\n", 2, "plugins.p.allowed_hosts[0]: empty host pattern"},
		{"host with other scheme", "[plugins.p]\nallowed_hosts = [\"ftp://api.example.com\"]\n", 2,
			`plugins.p.allowed_hosts[0]: "ftp://api.example.com": the scheme may only be http or https`},
		{"host with scheme and path", "[plugins.p]\nallowed_hosts = [\"https://api.example.com/v1\"]\n", 2,
			`plugins.p.allowed_hosts[0]: "https://api.example.com/v1": "api.example.com/v1" is not a host pattern`},
		{"host with bad port", "[plugins.p]\nallowed_hosts = [\"example.net:99999\"]\n", 2,
			`plugins.p.allowed_hosts[0]: "example.net:99999" has a bad port "99999"`},
		{"invalid plugin name", "[plugins.\"my plugin\"]\ndisabled = true\n", 1,
			`plugins."my plugin": invalid plugin name "my plugin"`},
		{"invalid plugin name dot", "\n[plugins.\"a.b\"]\n", 2, `invalid plugin name "a.b"`},
		{"invalid prefix", "[plugins.p]\nprefix = \"fs/\"\n", 2, `plugins.p.prefix: "fs/" may contain only`},
		{"relative guest", "[[plugins.p.mounts]]\nhost = \"a\"\nguest = \"data\"\n", 3,
			`plugins.p.mounts[0].guest: "data" is not absolute`},
		{"bad mode", "[[plugins.p.mounts]]\nhost = \"a\"\nguest = \"/a\"\nmode = \"readonly\"\n", 4,
			`plugins.p.mounts[0].mode: "readonly" is not "ro" or "rw"`},
		{"missing guest", "[plugins.p]\n[[plugins.p.mounts]]\nhost = \"a\"\n", 2, `plugins.p.mounts[0]: missing "guest"`},
		{"empty mount host", "[[plugins.p.mounts]]\nhost = \"\"\nguest = \"/a\"\n", 2, "plugins.p.mounts[0].host: must not be empty"},
		{"duplicate guest", "[[plugins.p.mounts]]\nhost = \"a\"\nguest = \"/a\"\n[[plugins.p.mounts]]\nhost = \"b\"\nguest = \"/a/\"\n", 6,
			`plugins.p.mounts[1].guest: "/a" is mounted more than once`},

		// [http]
		{"unknown http key", "[http]\nlisten = \"127.0.0.1:1\"\nmax_session = 3\n", 3,
			`unknown key "http.max_session" (did you mean "max_sessions"?)`},
		{"wrong type http", "\nhttp = \"127.0.0.1:8080\"\n", 2, "http: expected table, got string"},
		{"listen without port", "[http]\nlisten = \"8080\"\n", 2, `http.listen: "8080" is not host:port`},
		{"listen named port", "[http]\nlisten = \"localhost:http\"\n", 2, `http.listen: "localhost:http" has a bad port "http" (want 0..65535)`},
		{"listen port high", "[http]\nlisten = \":65536\"\n", 2, `http.listen: ":65536" has a bad port "65536"`},
		{"listen bad host", "[http]\nlisten = \"a..b:80\"\n", 2, `http.listen: "a..b:80" has a bad host "a..b"`},
		{"allowed host wildcard", "[http]\nallowed_hosts = [\"*.example.com\"]\n", 2,
			`http.allowed_hosts[0]: "*.example.com": wildcards are not allowed here`},
		{"allowed host with scheme", "[http]\n\nallowed_hosts = [\"localhost\", \"https://mcp.example.com\"]\n", 3,
			`http.allowed_hosts[1]: "https://mcp.example.com" includes a scheme`},
		{"origin with path", "[http]\nallowed_origins = [\"https://app.example.com/\"]\n", 2,
			`http.allowed_origins[0]: "https://app.example.com/" is not an origin`},
		{"origin scheme", "[http]\nallowed_origins = [\"ftp://app.example.com\"]\n", 2,
			`http.allowed_origins[0]: "ftp://app.example.com" is not an origin`},
		{"origin without scheme", "[http]\nallowed_origins = [\"app.example.com\"]\n", 2,
			`http.allowed_origins[0]: "app.example.com" is not an origin`},
		{"origin wildcard", "[http]\nallowed_origins = [\"https://*\"]\n", 2,
			`http.allowed_origins[0]: "*": wildcards are not allowed here`},
		{"idle timeout long", "[http]\nsession_idle_timeout = \"25h\"\n", 2,
			`http.session_idle_timeout: "25h" is longer than 24h0m0s`},
		{"idle timeout bad", "[http]\nsession_idle_timeout = \"30\"\n", 2, `http.session_idle_timeout: bad duration "30"`},
		{"drain delay long", "[http]\ndrain_delay = \"11m\"\n", 2, `http.drain_delay: "11m" is longer than 10m0s`},
		{"max sessions low", "[http]\nmax_sessions = 0\n", 2, "http.max_sessions: 0 is out of range (1..100000)"},
		{"max body high", "[http]\nmax_body_bytes = 1073741825\n", 2, "http.max_body_bytes: 1073741825 is out of range (1..1073741824)"},

		// [auth]
		{"unknown auth key", "[auth]\nmdoe = \"jwt\"\n", 2, `unknown key "auth.mdoe" (did you mean "mode"?)`},
		{"bad mode", "[auth]\nmode = \"oauth\"\n", 2, `auth.mode: "oauth" is not "none", "bearer" or "jwt"`},
		{"mode case matters", "[auth]\nmode = \"JWT\"\n", 2, `auth.mode: "JWT" is not`},
		{"wrong type mode", "[auth]\nmode = false\n", 2, "auth.mode: expected string, got boolean"},
		{"jwt without issuer", "[auth]\nmode = \"jwt\"\nresource = \"https://mcp.example.com/mcp\"\njwks_url = \"https://auth.example.com/jwks\"\n", 1,
			`auth: mode = "jwt" needs "issuer"`},
		{"jwt without jwks_url", "\n[auth]\nmode = \"jwt\"\nresource = \"https://mcp.example.com/mcp\"\nissuer = \"https://auth.example.com\"\n", 2,
			`auth: mode = "jwt" needs "jwks_url"`},
		{"jwt without resource", "[auth]\nmode = \"jwt\"\nissuer = \"https://auth.example.com\"\njwks_url = \"https://auth.example.com/jwks\"\n", 1,
			`auth: mode = "jwt" needs "resource"`},
		{"jwt dotted keys", "auth.mode = \"jwt\"\nauth.issuer = \"https://auth.example.com\"\nauth.jwks_url = \"https://auth.example.com/jwks\"\n", 1,
			`auth: mode = "jwt" needs "resource"`},
		{"resource http", "[auth]\nresource = \"http://mcp.example.com/mcp\"\n", 2,
			`auth.resource: "http://mcp.example.com/mcp": use https (http only for localhost and loopback addresses)`},
		{"resource relative", "[auth]\nresource = \"mcp.example.com/mcp\"\n", 2,
			`auth.resource: "mcp.example.com/mcp" is not an absolute URL`},
		{"resource fragment", "[auth]\nresource = \"https://mcp.example.com/mcp#x\"\n", 2,
			`auth.resource: "https://mcp.example.com/mcp#x" must not contain a fragment`},
		{"resource query", "[auth]\nresource = \"https://mcp.example.com/mcp?a=1\"\n", 2,
			`auth.resource: "https://mcp.example.com/mcp?a=1" must not contain a query`},
		{"resource user", "[auth]\nresource = \"https://u:p@mcp.example.com/mcp\"\n", 2,
			`auth.resource: "https://u:p@mcp.example.com/mcp" must not contain user info`},
		{"issuer query", "[auth]\nmode = \"jwt\"\nresource = \"https://mcp.example.com\"\nissuer = \"https://auth.example.com?x\"\njwks_url = \"https://auth.example.com/jwks\"\n", 4,
			`auth.issuer: "https://auth.example.com?x" must not contain a query`},
		{"jwks http", "[auth]\nmode = \"jwt\"\nresource = \"https://mcp.example.com\"\nissuer = \"https://auth.example.com\"\njwks_url = \"http://auth.example.com/jwks\"\n", 5,
			`auth.jwks_url: "http://auth.example.com/jwks": use https`},
		{"jwks bad port", "[auth]\nmode = \"jwt\"\nresource = \"https://mcp.example.com\"\nissuer = \"https://auth.example.com\"\njwks_url = \"https://auth.example.com:0/jwks\"\n", 5,
			`auth.jwks_url: "auth.example.com:0" has a bad port "0"`},
		{"audience empty", "[auth]\nmode = \"jwt\"\nresource = \"https://mcp.example.com\"\nissuer = \"https://auth.example.com\"\njwks_url = \"https://auth.example.com/jwks\"\naudience = \"\"\n", 6,
			"auth.audience: must not be empty"},
		{"scope with space", "[auth]\nmode = \"jwt\"\nresource = \"https://mcp.example.com\"\nissuer = \"https://auth.example.com\"\njwks_url = \"https://auth.example.com/jwks\"\nscopes = [\"mcp\", \"files read\"]\n", 6,
			`auth.scopes[1]: "files read" is not a scope`},
		{"scope with quote", "[auth]\nmode = \"jwt\"\nresource = \"https://mcp.example.com\"\nissuer = \"https://auth.example.com\"\njwks_url = \"https://auth.example.com/jwks\"\nscopes_supported = ['a\"b']\n", 6,
			`auth.scopes_supported[0]: "a\"b" is not a scope`},
		{"bearer without token", "[auth]\nmode = \"bearer\"\n", 1, `auth: mode = "bearer" needs "token_env" or "token_file"`},
		{"bearer with both", "[auth]\nmode = \"bearer\"\ntoken_env = \"T\"\ntoken_file = \"t.txt\"\n", 4,
			`auth.token_file: set "token_env" or "token_file", not both`},
		{"bad env name", "[auth]\nmode = \"bearer\"\ntoken_env = \"1TOKEN\"\n", 3, `auth.token_env: "1TOKEN" is not an environment variable name`},
		{"env name with dash", "[auth]\nmode = \"bearer\"\ntoken_env = \"MY-TOKEN\"\n", 3, `auth.token_env: "MY-TOKEN" is not an environment variable name`},
		{"empty token file", "[auth]\nmode = \"bearer\"\ntoken_file = \"\"\n", 3, "auth.token_file: must not be empty"},
		{"jwt key under bearer", "[auth]\nmode = \"bearer\"\ntoken_env = \"T\"\nissuer = \"https://auth.example.com\"\n", 4,
			`auth.issuer: only used with mode = "jwt"`},
		{"bearer key under jwt", "[auth]\nmode = \"jwt\"\nresource = \"https://mcp.example.com\"\nissuer = \"https://auth.example.com\"\njwks_url = \"https://auth.example.com/jwks\"\ntoken_file = \"t\"\n", 6,
			`auth.token_file: only used with mode = "bearer"`},
		{"mode key without mode", "[auth]\nscopes = [\"mcp\"]\n", 2, `auth.scopes: only used with mode = "jwt"`},
		{"token without mode", "[auth]\ntoken_env = \"MCPHOST_TOKEN\"\n", 2, `auth.token_env: only used with mode = "bearer"`},
	})
}

// TestSandboxLimitBounds checks that the limits the sandbox would refuse
// are reported with their line and the sandbox's bounds, in [defaults] and
// in plugin tables alike.
func TestSandboxLimitBounds(t *testing.T) {
	testErrorCases(t, []errorCase{
		{"defaults memory low", "[defaults]\nmemory_mib = 2\n", 2,
			"defaults.memory_mib: memory limit 2 MiB is not between 4 and 4096 MiB"},
		{"plugin memory low", "[plugins.p]\nprefix = \"p_\"\nmemory_mib = 2\n", 3,
			"plugins.p.memory_mib: memory limit 2 MiB is not between 4 and 4096 MiB"},
		{"memory high", "[defaults]\nmemory_mib = 4097\n", 2, "defaults.memory_mib: memory limit 4097 MiB is not between 4 and 4096 MiB"},
		{"memory beyond uint32", "[defaults]\nmemory_mib = 4294967300\n", 2, "defaults.memory_mib: memory limit 4294967295 MiB is not between 4 and 4096 MiB"},
		{"timeout", "[plugins.p]\ntimeout = \"61m\"\n", 2, "plugins.p.timeout: timeout 1h1m0s is longer than 1h0m0s"},
		{"output", "[defaults]\nmax_output_bytes = 1073741825\n", 2, "defaults.max_output_bytes: output limit 1073741825 bytes is more than 1073741824"},
		{"instances", "[plugins.p]\nmax_instances = 65\n", 2, "plugins.p.max_instances: instance limit 65 is more than 64"},
		{"queue", "[defaults]\nmax_queue = 10001\n", 2, "defaults.max_queue: queue limit 10001 is more than 10000"},
		{"host call rate", "[plugins.p]\nhost_calls_per_second = 100001\n", 2,
			"plugins.p.host_calls_per_second: host call rate 100001 per second is more than 100000"},
	})
	cfg := load(t, "[defaults]\nmemory_mib = 4\n\n[plugins.p]\nmemory_mib = 4096\nmax_queue = 0\n")
	if got := cfg.Plugin("p").Limits; got.MemoryMiB != 4096 || got.MaxQueue != 0 || cfg.Defaults.MemoryMiB != 4 {
		t.Errorf("bounds not accepted: defaults %+v, plugin %+v", cfg.Defaults, got)
	}
}

func TestErrorKey(t *testing.T) {
	_, errs := loadErrors(t, "[[plugins.p.mounts]]\nhost = \"a\"\nguest = \"a\"\n")
	if got, want := errs[0].Key, "plugins.p.mounts[0].guest"; got != want {
		t.Errorf("Key = %q, want %q", got, want)
	}
}

func TestMultipleErrors(t *testing.T) {
	src := `# line 1
[server]
page_size = 0           # 3

[defaults]
timeout = "forever"     # 6
memory_mib = 64

[plugins.files]
memroy_mib = 64         # 10
host_functions = ["notify_logging_message", "sampling"]  # 11
allowed_hosts = ["ftp://x.com"]                          # 12

[[plugins.files.mounts]]
host = "./docs"
guest = "docs"          # 16
mode = "rx"             # 17

[plugins."a b"]         # 19
`
	p, errs := loadErrors(t, src)
	want := []struct {
		line int
		msg  string
	}{
		{3, "server.page_size: 0 is out of range"},
		{6, `defaults.timeout: bad duration "forever"`},
		{10, `unknown key "plugins.files.memroy_mib"`},
		{11, `plugins.files.host_functions[1]: unknown host function "sampling"`},
		{12, `plugins.files.allowed_hosts[0]: "ftp://x.com": the scheme may only be http or https`},
		{16, `plugins.files.mounts[0].guest: "docs" is not absolute`},
		{17, `plugins.files.mounts[0].mode: "rx" is not "ro" or "rw"`},
		{19, `invalid plugin name "a b"`},
	}
	if len(errs) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%v", len(errs), len(want), errs)
	}
	for i, w := range want {
		if errs[i].Line != w.line || !strings.Contains(errs[i].Msg, w.msg) {
			t.Errorf("error %d: got line %d %q, want line %d %q", i, errs[i].Line, errs[i].Msg, w.line, w.msg)
		}
	}
	lines := strings.Split(errs.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("Error() has %d lines, want %d:\n%s", len(lines), len(want), errs.Error())
	}
	for i, w := range want {
		if prefix := fmt.Sprintf("%s:%d: ", p, w.line); !strings.HasPrefix(lines[i], prefix) {
			t.Errorf("Error() line %d = %q, want prefix %q", i, lines[i], prefix)
		}
	}
}

func TestErrorWithoutLine(t *testing.T) {
	if got, want := (Error{File: "f.toml", Msg: "m"}).Error(), "f.toml: m"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestCacheDirWithoutUserCacheDir(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("user cache dir does not come from HOME here")
	}
	t.Setenv("HOME", "")
	t.Setenv("XDG_CACHE_HOME", "")
	if dir, err := Default().CacheDir(); err == nil {
		t.Errorf("CacheDir() = %q, nil; want an error without a user cache dir", dir)
	}
}

func TestCheckHost(t *testing.T) {
	for _, ok := range []string{
		"api.example.com", "*.example.org", "example.net:8443", "*", "*:443",
		"localhost", "127.0.0.1", "10.0.0.1:80", "[::1]", "[::1]:8080", "my_host-1.example",
	} {
		if err := checkHost(ok); err != nil {
			t.Errorf("checkHost(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{
		"", "http://example.com", "https://example.com:443", "example.com/path", "user@example.com",
		"example.com:", "example.com:0", "example.com:65536", "example.com:http", "example.com:+80",
		":80", "a..b", ".example.com", "example.com.", "a*.example.com", "*example.com", "example.*",
		"::1", "[::1", "[nope]", "[::1]x", "exa mple.com",
	} {
		if err := checkHost(bad); err == nil {
			t.Errorf("checkHost(%q) = nil, want an error", bad)
		}
	}
}

func TestLoadHTTPAuth(t *testing.T) {
	cfg := load(t, `
[http]
listen = "0.0.0.0:9000"
allowed_hosts = ["mcp.example.com", "10.0.0.5:9000", "[::1]"]
allowed_origins = ["https://app.example.com", "http://localhost:3000"]
session_idle_timeout = "2h"
init_timeout = "3s"
drain_delay = "4s"
max_sessions = 10
max_sessions_per_client = 4
max_body_bytes = 1024
max_body_bytes_in_flight = 65536
max_body_bytes_in_flight_per_client = 4096
max_connections = 100
max_connections_per_client = 10
trusted_proxies = ["10.0.0.7", "10.1.2.3/16", "::ffff:192.0.2.1", "2001:db8::/32"]
max_batch_response_bytes = 65536

[auth]
mode = "jwt"
resource = "https://mcp.example.com/mcp"
issuer = "https://auth.example.com"
jwks_url = "https://auth.example.com/jwks?tenant=1"
scopes = ["mcp", "files:read"]
`)
	wantHTTP := HTTPConfig{
		Listen:               "0.0.0.0:9000",
		AllowedHosts:         []string{"mcp.example.com", "10.0.0.5:9000", "[::1]"},
		AllowedOrigins:       []string{"https://app.example.com", "http://localhost:3000"},
		SessionIdleTimeout:   2 * time.Hour,
		InitTimeout:          3 * time.Second,
		DrainDelay:           4 * time.Second,
		MaxSessions:          10,
		MaxSessionsPerClient: 4,
		MaxBodyBytes:         1024,

		MaxBodyBytesInFlight:          65536,
		MaxBodyBytesInFlightPerClient: 4096,
		MaxConnections:                100,
		MaxConnectionsPerClient:       10,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.7/32"), netip.MustParsePrefix("10.1.0.0/16"),
			netip.MustParsePrefix("192.0.2.1/32"), netip.MustParsePrefix("2001:db8::/32")},
		MaxBatchResponseBytes: 65536,
	}
	if !reflect.DeepEqual(cfg.HTTP, wantHTTP) {
		t.Errorf("HTTP =\n%+v\nwant\n%+v", cfg.HTTP, wantHTTP)
	}
	wantAuth := AuthConfig{
		Mode:            AuthJWT,
		Resource:        "https://mcp.example.com/mcp",
		Issuer:          "https://auth.example.com",
		JWKSURL:         "https://auth.example.com/jwks?tenant=1",
		Audience:        "https://mcp.example.com/mcp",
		Scopes:          []string{"mcp", "files:read"},
		ScopesSupported: []string{"mcp", "files:read"},
	}
	if !reflect.DeepEqual(cfg.Auth, wantAuth) {
		t.Errorf("Auth =\n%+v\nwant\n%+v", cfg.Auth, wantAuth)
	}
}

func TestLoadAuthExplicitValues(t *testing.T) {
	p := write(t, `
[auth]
mode = "jwt"
resource = "http://localhost:8080/mcp"
issuer = "http://127.0.0.1:9000"
jwks_url = "http://[::1]:9000/jwks"
audience = "mcp-api"
scopes = []
scopes_supported = ["mcp", "admin"]
`)
	cfg, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.Auth
	if a.Audience != "mcp-api" || len(a.Scopes) != 0 || !reflect.DeepEqual(a.ScopesSupported, []string{"mcp", "admin"}) {
		t.Errorf("Auth = %+v, want audience mcp-api, no scopes, scopes_supported [mcp admin]", a)
	}

	// The bearer token file is resolved against the file's directory.
	cfg = load(t, "[auth]\nmode = \"bearer\"\ntoken_file = \"secrets/token\"\n")
	if !filepath.IsAbs(cfg.Auth.TokenFile) || filepath.Base(filepath.Dir(cfg.Auth.TokenFile)) != "secrets" {
		t.Errorf("TokenFile = %q, want an absolute path next to the file", cfg.Auth.TokenFile)
	}
	cfg = load(t, "[auth]\nmode = \"bearer\"\ntoken_env = \"MCPHOST_TOKEN\"\n")
	if cfg.Auth.Mode != AuthBearer || cfg.Auth.TokenEnv != "MCPHOST_TOKEN" || cfg.Auth.Resource != "http://127.0.0.1:8080/mcp" {
		t.Errorf("bearer Auth = %+v", cfg.Auth)
	}
}

// TestExplicitNoneIgnoresModeKeys checks that mode = "none" turns
// authentication off without removing the other keys.
func TestExplicitNoneIgnoresModeKeys(t *testing.T) {
	cfg := load(t, `
[auth]
mode = "none"
token_env = "MCPHOST_TOKEN"
issuer = "https://auth.example.com"
scopes = ["mcp"]
`)
	if cfg.Auth.Mode != AuthNone {
		t.Errorf("Mode = %q, want none", cfg.Auth.Mode)
	}
}

func TestSetListen(t *testing.T) {
	cfg := Default()
	if err := cfg.SetListen("10.0.0.5:9090"); err != nil {
		t.Fatal(err)
	}
	if want := "http://10.0.0.5:9090/mcp"; cfg.Auth.Resource != want || cfg.Auth.Audience != want {
		t.Errorf("Resource, Audience = %q, %q; want %q", cfg.Auth.Resource, cfg.Auth.Audience, want)
	}
	if err := cfg.SetListen("8080"); err == nil || !strings.Contains(err.Error(), `listen address: "8080" is not host:port`) {
		t.Errorf("SetListen(8080) = %v, want a host:port error", err)
	}
	if cfg.HTTP.Listen != "10.0.0.5:9090" {
		t.Errorf("a rejected SetListen changed Listen to %q", cfg.HTTP.Listen)
	}

	// Settings the file writes do not follow the listen address.
	cfg = load(t, `
[auth]
mode = "jwt"
resource = "https://mcp.example.com/mcp"
issuer = "https://auth.example.com"
jwks_url = "https://auth.example.com/jwks"
`)
	if err := cfg.SetListen("0.0.0.0:443"); err != nil {
		t.Fatal(err)
	}
	if cfg.Auth.Resource != "https://mcp.example.com/mcp" || cfg.Auth.Audience != "https://mcp.example.com/mcp" {
		t.Errorf("after SetListen: Auth %+v", cfg.Auth)
	}
}

func TestDefaultResource(t *testing.T) {
	for _, tc := range []struct{ listen, resource string }{
		{"127.0.0.1:8080", "http://127.0.0.1:8080/mcp"},
		{"LOCALHOST:1", "http://LOCALHOST:1/mcp"},
		{"[::1]:0", "http://[::1]:0/mcp"},
		{"0.0.0.0:8080", "http://localhost:8080/mcp"},
		{"[::]:8080", "http://localhost:8080/mcp"},
		{":8080", "http://localhost:8080/mcp"},
		{"[fe80::1]:8080", "http://[fe80::1]:8080/mcp"},
		{"mcp.internal:8080", "http://mcp.internal:8080/mcp"},
	} {
		cfg := Default()
		if err := cfg.SetListen(tc.listen); err != nil {
			t.Errorf("SetListen(%q): %v", tc.listen, err)
			continue
		}
		if cfg.Auth.Resource != tc.resource {
			t.Errorf("listen %q: Resource = %q, want %q", tc.listen, cfg.Auth.Resource, tc.resource)
		}
	}
}

func TestCheckExposure(t *testing.T) {
	for _, tc := range []struct {
		name, src, listen string
		refused           bool
	}{
		{"no file loopback", "", "127.0.0.1:8080", false},
		{"no file localhost", "", "localhost:0", false},
		{"no file ipv6 loopback", "", "[::1]:8080", false},
		{"unset mode all interfaces", "# empty\n", "0.0.0.0:8080", true},
		{"unset mode empty host", "# empty\n", ":8080", true},
		{"unset mode ipv6 any", "# empty\n", "[::]:8080", true},
		{"unset mode lan address", "# empty\n", "192.168.1.5:8080", true},
		{"unset mode host name", "# empty\n", "mcp.internal:8080", true},
		{"auth table without mode", "[auth]\nresource = \"https://mcp.example.com/mcp\"\n", "0.0.0.0:8080", true},
		{"explicit none", "[auth]\nmode = \"none\"\n", "0.0.0.0:8080", false},
		{"bearer", "[auth]\nmode = \"bearer\"\ntoken_env = \"T\"\n", "0.0.0.0:8080", false},
		{"listen from file", "[http]\nlisten = \"0.0.0.0:8080\"\n", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Default()
			if tc.src != "" {
				cfg = load(t, tc.src)
			}
			if tc.listen != "" {
				if err := cfg.SetListen(tc.listen); err != nil {
					t.Fatal(err)
				}
			}
			err := cfg.CheckExposure()
			if !tc.refused {
				if err != nil {
					t.Errorf("CheckExposure() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatal("CheckExposure() = nil, want a refusal")
			}
			file := cfg.Path
			if file == "" {
				file = "mcphost.toml"
			}
			for _, want := range []string{"refusing to serve HTTP on " + cfg.HTTP.Listen, file, `mode = "none"`, `mode = "bearer" or "jwt"`} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("CheckExposure() = %q, want it to mention %q", err, want)
				}
			}
		})
	}
}

func TestCheckURL(t *testing.T) {
	for _, ok := range []string{
		"https://mcp.example.com", "https://mcp.example.com/mcp", "https://MCP.example.com:8443/a/b",
		"http://localhost:8080/mcp", "http://127.0.0.1/mcp", "http://[::1]:9000", "http://LocalHost",
	} {
		if err := checkURL(false)(ok); err != nil {
			t.Errorf("checkURL(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{
		"", "mcp.example.com", "/mcp", "https://", "https:///mcp", "ftp://mcp.example.com", "http://mcp.example.com",
		"http://192.168.0.1/mcp", "http://localhost.example.com", "https://mcp.example.com/#", "https://mcp.example.com/?",
		"https://u@mcp.example.com", "https://*.example.com", "https://exa mple.com",
	} {
		if err := checkURL(false)(bad); err == nil {
			t.Errorf("checkURL(%q) = nil, want an error", bad)
		}
	}
	if err := checkURL(true)("https://auth.example.com/jwks?tenant=a"); err != nil {
		t.Errorf("checkURL with query allowed: %v", err)
	}
}

func TestTaskSupport(t *testing.T) {
	cfg := load(t, `
[plugins.a]
task_support = { "report" = "optional", "build.all" = "required", "*" = "forbidden" }

[plugins.b.task_support]
"*" = "optional"
`)
	if got, want := cfg.Plugin("a").TaskSupport, map[string]string{"report": "optional", "build.all": "required", "*": "forbidden"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Plugin(a).TaskSupport = %v, want %v", got, want)
	}
	if got, want := cfg.Plugin("b").TaskSupport, map[string]string{"*": "optional"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Plugin(b).TaskSupport = %v, want %v", got, want)
	}
	if got := cfg.Plugin("c").TaskSupport; got != nil {
		t.Errorf("Plugin(c).TaskSupport = %v, want nil", got)
	}
	a := cfg.Plugin("a")
	a.TaskSupport["report"] = "required"
	if cfg.Plugin("a").TaskSupport["report"] != "optional" {
		t.Error("changing a returned TaskSupport changed the Config")
	}
}

func TestTaskSupportErrors(t *testing.T) {
	testErrorCases(t, []errorCase{
		{"bad mode", "[plugins.p]\n\ntask_support = { \"x\" = \"sometimes\" }\n", 3,
			`plugins.p.task_support.x: "sometimes" is not "forbidden", "optional" or "required"`},
		{"mode case matters", "[plugins.p.task_support]\nx = \"Optional\"\n", 2, `plugins.p.task_support.x: "Optional" is not`},
		{"bad tool name", "[plugins.p]\ntask_support = { \"a b\" = \"optional\" }\n", 2,
			`plugins.p.task_support."a b": "a b" is not a tool name`},
		{"wrong type value", "[plugins.p.task_support]\n\"*\" = true\n", 2, `plugins.p.task_support."*": expected string, got boolean`},
		{"wrong type table", "[plugins.p]\ntask_support = \"optional\"\n", 2, "plugins.p.task_support: expected table, got string"},
		{"misspelled key", "[plugins.p]\ntask_suport = { x = \"optional\" }\n", 2, `unknown key "plugins.p.task_suport" (did you mean "task_support"?)`},
	})
}

// errorCase is a config source that has one problem: msg (a part of the
// message) on line.
type errorCase struct {
	name string
	src  string
	line int
	msg  string
}

// testErrorCases loads each case's source and checks it yields exactly its
// one error, at its line, with its message.
func testErrorCases(t *testing.T, cases []errorCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, errs := loadErrors(t, tc.src)
			if len(errs) != 1 {
				t.Fatalf("got %d errors, want 1:\n%v", len(errs), errs)
			}
			e := errs[0]
			if e.Line != tc.line || !strings.Contains(e.Msg, tc.msg) {
				t.Errorf("got line %d %q\nwant line %d %q", e.Line, e.Msg, tc.line, tc.msg)
			}
			if prefix := fmt.Sprintf("%s:%d: ", p, tc.line); !strings.HasPrefix(e.Error(), prefix) {
				t.Errorf("Error() = %q, want prefix %q", e.Error(), prefix)
			}
		})
	}
}

// withLimits returns l changed by f.
func withLimits(l Limits, f func(*Limits)) Limits {
	f(&l)
	return l
}

func TestLoadBudget(t *testing.T) {
	cfg := load(t, "[defaults]\nload_budget = \"3s\"\n[plugins.p]\nload_budget = \"2s\"\n")
	if got := cfg.Plugin("p").Limits.LoadBudget; got != 2*time.Second {
		t.Errorf("plugins.p load_budget: %v", got)
	}
	if got := cfg.Plugin("other").Limits.LoadBudget; got != 3*time.Second {
		t.Errorf("defaults load_budget: %v", got)
	}
}

func TestStartupWait(t *testing.T) {
	if got := load(t, "[server]\nstartup_wait = \"2s\"\n").Server.StartupWait; got != 2*time.Second {
		t.Errorf("server.startup_wait: %v", got)
	}
	_, errs := loadErrors(t, "[server]\nstartup_wait = \"0s\"\n")
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `server.startup_wait: "0s" is not positive`) {
		t.Errorf("startup_wait 0s: %v", errs)
	}
}

func TestIsolationDefaultsToPerUserWhenClientsAuthenticate(t *testing.T) {
	open := load(t, "[plugins.p]\n")
	if got := open.Plugin("p").Isolation; got != IsolationShared {
		t.Errorf("without auth: %q", got)
	}
	authed := load(t, "[auth]\nmode = \"bearer\"\ntoken_env = \"X\"\n[plugins.p]\n[plugins.s]\nisolation = \"session\"\n")
	for name, want := range map[string]string{"p": IsolationUser, "s": IsolationSession, "absent": IsolationUser} {
		if got := authed.Plugin(name).Isolation; got != want {
			t.Errorf("with auth, %s: %q, want %q", name, got, want)
		}
	}
	if _, err := Load(write(t, "[plugins.p]\nisolation = \"none\"\n")); err == nil || !strings.Contains(err.Error(), `plugins.p.isolation: "none" is not one of "shared", "user" and "session"`) {
		t.Errorf("bad isolation: %v", err)
	}
}

func TestOnLoadError(t *testing.T) {
	if got := load(t, "[server]\non_load_error = \"skip\"\n").Server.OnLoadError; got != OnLoadErrorSkip {
		t.Errorf("server.on_load_error: %q, want skip", got)
	}
	if got := load(t, "").Server.OnLoadError; got != OnLoadErrorFail {
		t.Errorf("server.on_load_error by default: %q, want fail", got)
	}
	_, errs := loadErrors(t, "[server]\non_load_error = \"ignore\"\n")
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `:2: server.on_load_error: "ignore" is not one of "fail" and "skip"`) {
		t.Errorf("on_load_error ignore: %v", errs)
	}
}

func TestNamedIsAPluginTableThatDoesNotDisable(t *testing.T) {
	cfg := load(t, "[plugins.a]\n[plugins.b]\ndisabled = true\n")
	for name, want := range map[string]bool{"a": true, "b": false, "c": false} {
		if got := cfg.Named(name); got != want {
			t.Errorf("Named(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestCacheMaxMiB(t *testing.T) {
	if got := load(t, "[server]\ncache_max_mib = 64\n").Server.CacheMaxMiB; got != 64 {
		t.Errorf("server.cache_max_mib: %d, want 64", got)
	}
	if _, errs := loadErrors(t, "[server]\ncache_max_mib = 0\n"); len(errs) != 1 || !strings.Contains(errs[0].Error(), "server.cache_max_mib") {
		t.Errorf("cache_max_mib 0: %v", errs)
	}
}

func TestNamingKeys(t *testing.T) {
	cfg := load(t, `[plugins.b]
rename = { "fs.read" = "read_file" }
skip_tools = ["debug_*"]
skip_prompts = ["draft*"]
skip_resources = ["file:///secret/*"]

[plugins.a]
prefix = "a_"
`)
	b, a := cfg.Plugin("b"), cfg.Plugin("a")
	if b.Rename["fs.read"] != "read_file" || !slices.Equal(b.SkipTools, []string{"debug_*"}) ||
		!slices.Equal(b.SkipPrompts, []string{"draft*"}) || !slices.Equal(b.SkipResources, []string{"file:///secret/*"}) {
		t.Errorf("plugins.b = %+v", b)
	}
	if !(b.Rank < a.Rank) || a.Rank == 0 {
		t.Errorf("ranks b %d, a %d: want the order of their tables", b.Rank, a.Rank)
	}
	if cfg.Server.ToolNames != ToolNamesPortable {
		t.Errorf("tool_names by default: %q", cfg.Server.ToolNames)
	}
	_, errs := loadErrors(t, "[plugins.b]\nrename = { x = \"x.y\" }\n")
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `:2: plugins.b.rename.x: "x.y" is not a name clients can use`) {
		t.Errorf("a rename to a name that is not portable: %v", errs)
	}
	if got := load(t, "[server]\ntool_names = \"mcp\"\n[plugins.b]\nrename = { x = \"x.y\" }\n").Plugin("b").Rename["x"]; got != "x.y" {
		t.Errorf("with tool_names = mcp, rename x = %q", got)
	}
}

func TestServerTLS(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"cert.pem", "key.pem"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "mcphost.toml")
	if err := os.WriteFile(path, []byte("[server.tls]\ncert = \"cert.pem\"\nkey = \"key.pem\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.TLS.Cert != filepath.Join(dir, "cert.pem") || cfg.Server.TLS.Key != filepath.Join(dir, "key.pem") {
		t.Errorf("server.tls = %+v, want both files resolved against the config's folder", cfg.Server.TLS)
	}
	if cfg.Auth.Resource != "https://127.0.0.1:8080/mcp" {
		t.Errorf("the resource of a TLS server: %q, want https", cfg.Auth.Resource)
	}
	for src, want := range map[string]string{
		fmt.Sprintf("[server.tls]\ncert = %q\n", filepath.Join(dir, "cert.pem")):                                          `:1: server.tls: cert and key go together: key is missing`,
		fmt.Sprintf("[server.tls]\ncert = %q\nkey = %q\n", filepath.Join(dir, "nope.pem"), filepath.Join(dir, "key.pem")): `:2: server.tls.cert: open `,
	} {
		_, errs := loadErrors(t, src)
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), want) {
			t.Errorf("%q: %v, want %q", src, errs, want)
		}
	}
}

// [server] request_state_key_file names a file of requestState keys, one
// a line, the first signing; request_state_ttl bounds a state's life.
func TestRequestStateKeys(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	if err := os.WriteFile(keys, []byte("# newest first\nnew-key-new-key-new-key-new-key!\n\n  old-key-old-key-old-key-old-key!  \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := load(t, "[server]\nrequest_state_key_file = \""+keys+"\"\nrequest_state_ttl = \"5m\"\n")
	if cfg.Server.RequestStateTTL != 5*time.Minute {
		t.Errorf("request_state_ttl: %v", cfg.Server.RequestStateTTL)
	}
	got, err := cfg.RequestStateKeys()
	if err != nil || len(got) != 2 || string(got[0]) != "new-key-new-key-new-key-new-key!" || string(got[1]) != "old-key-old-key-old-key-old-key!" {
		t.Errorf("RequestStateKeys() = %q, %v; want the two keys, newest first", got, err)
	}
	if got, err := load(t, "").RequestStateKeys(); got != nil || err != nil {
		t.Errorf("without a key file: %q, %v; want none", got, err)
	}
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, []byte("too-short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := load(t, "[server]\nrequest_state_key_file = \""+short+"\"\n").RequestStateKeys(); err == nil || !strings.Contains(err.Error(), "at least 32 bytes") {
		t.Errorf("a short key: %v, want an error asking for at least 32 bytes", err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("# nothing\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := load(t, "[server]\nrequest_state_key_file = \""+empty+"\"\n").RequestStateKeys(); err == nil || !strings.Contains(err.Error(), "no key") {
		t.Errorf("a file without keys: %v, want an error", err)
	}
	_, errs := loadErrors(t, "[server]\nrequest_state_ttl = \"0s\"\n")
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `server.request_state_ttl: "0s" is not positive`) {
		t.Errorf("request_state_ttl 0s: %v", errs)
	}
}

// [server] instructions is sent to clients; a plugin's cache_ttl and
// cache_scope are the caching hints of what it lists and reads.
func TestInstructionsAndCacheHints(t *testing.T) {
	cfg := load(t, "[server]\ninstructions = \"Use the notes tools.\"\n[plugins.p]\ncache_ttl = \"90s\"\ncache_scope = \"public\"\n")
	if cfg.Server.Instructions != "Use the notes tools." {
		t.Errorf("instructions %q", cfg.Server.Instructions)
	}
	if p := cfg.Plugin("p"); p.CacheTTL != 90*time.Second || p.CacheScope != "public" {
		t.Errorf("plugins.p: cache_ttl %v, cache_scope %q", p.CacheTTL, p.CacheScope)
	}
	if p := cfg.Plugin("other"); p.CacheTTL != 0 || p.CacheScope != "private" {
		t.Errorf("a plugin without a table: cache_ttl %v, cache_scope %q; want 0 and private", p.CacheTTL, p.CacheScope)
	}
	_, errs := loadErrors(t, "[plugins.p]\ncache_scope = \"shared\"\n")
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `plugins.p.cache_scope: "shared" is not "private" or "public"`) {
		t.Errorf("cache_scope shared: %v", errs)
	}
}

// [server] task_after, max_tasks and max_tasks_per_user set when a
// 2026-07-28 call becomes a task and how many tasks the server and each
// user hold at once; unset, they are 0: the server's defaults.
func TestTaskSettings(t *testing.T) {
	cfg := load(t, "[server]\ntask_after = \"2s\"\nmax_tasks = 500\nmax_tasks_per_user = 20\n")
	if s := cfg.Server; s.TaskAfter != 2*time.Second || s.MaxTasks != 500 || s.MaxTasksPerUser != 20 {
		t.Errorf("task settings: %v %d %d", s.TaskAfter, s.MaxTasks, s.MaxTasksPerUser)
	}
	if s := load(t, "").Server; s.TaskAfter != 0 || s.MaxTasks != 0 || s.MaxTasksPerUser != 0 {
		t.Errorf("defaults: %v %d %d, want 0s", s.TaskAfter, s.MaxTasks, s.MaxTasksPerUser)
	}
	for text, want := range map[string]string{
		"task_after = \"0s\"":                     `server.task_after: "0s" is not positive`,
		"task_after = \"2h\"":                     `server.task_after: "2h" is longer than 1h0m0s`,
		"max_tasks = 0":                           `server.max_tasks: 0 is out of range (1..1000000)`,
		"max_tasks_per_user = -1":                 `server.max_tasks_per_user: -1 is out of range (1..1000000)`,
		"max_tasks = 10\nmax_tasks_per_user = 11": `server.max_tasks_per_user: 11 is more than max_tasks (10)`,
	} {
		_, errs := loadErrors(t, "[server]\n"+text+"\n")
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), want) {
			t.Errorf("%s: %v, want %q", text, errs, want)
		}
	}
}

// TestWazeroChecks: wazero_checks is off by default, set in [defaults] or
// per plugin, and reaches the sandbox's limits; anything but a boolean is
// refused with its line.
func TestWazeroChecks(t *testing.T) {
	cfg := load(t, "[defaults]\nwazero_checks = true\n[plugins.p]\nwazero_checks = false\n[plugins.q]\n")
	if cfg.Plugin("p").Limits.Sandbox().WazeroChecks || !cfg.Plugin("q").Limits.Sandbox().WazeroChecks {
		t.Errorf("wazero_checks: p %v (set false), q %v (the default, true)", cfg.Plugin("p").Limits.WazeroChecks, cfg.Plugin("q").Limits.WazeroChecks)
	}
	if Default().Defaults.WazeroChecks {
		t.Error("wazero_checks is on by default")
	}
	path, errs := loadErrors(t, "[defaults]\nwazero_checks = \"yes\"\n")
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), path+":2") || !strings.Contains(errs[0].Error(), "defaults.wazero_checks") {
		t.Errorf("wazero_checks = \"yes\": %v, want one error naming line 2 of %s and the key", errs, path)
	}
}

// [server] unload_idle_after sets how long a plugin may go without calls
// before its compiled code is given back: 10m unset, 0 for "never", and
// a duration that is not positive, too long or not a string is refused
// with its key.
func TestUnloadIdleAfter(t *testing.T) {
	for text, want := range map[string]time.Duration{
		"":                              DefaultUnloadIdleAfter,
		"unload_idle_after = \"90s\"":   90 * time.Second,
		"unload_idle_after = \"never\"": 0,
		"unload_idle_after = \"720h\"":  720 * time.Hour,
	} {
		if got := load(t, "[server]\n"+text+"\n").Server.UnloadIdleAfter; got != want {
			t.Errorf("%q: %v, want %v", text, got, want)
		}
	}
	for text, want := range map[string]string{
		"unload_idle_after = \"0s\"":   `server.unload_idle_after: "0s" is not positive`,
		"unload_idle_after = \"721h\"": `server.unload_idle_after: "721h" is longer than 720h0m0s`,
		"unload_idle_after = \"soon\"": `server.unload_idle_after: bad duration "soon"`,
		"unload_idle_after = 600":      `server.unload_idle_after`,
	} {
		_, errs := loadErrors(t, "[server]\n"+text+"\n")
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), want) {
			t.Errorf("%s: %v, want %q", text, errs, want)
		}
	}
}

// [telemetry] configures /metrics: where it is served, its token file
// (relative to the config file) and item names; a bad value or metrics
// off with a listener of their own is an error with its line.
func TestTelemetry(t *testing.T) {
	if got := load(t, "").Telemetry; got != (TelemetryConfig{Metrics: MetricsAuto, Traces: TracesOff, OTLPProtocol: OTLPHTTP, TraceSampleRatio: 1,
		Audit: AuditOff, AuditMaxMiB: 100, AuditMaxFiles: 5, StatusScope: DefaultStatusScope}) {
		t.Errorf("[telemetry] by default: %+v, want metrics auto, traces off (over OTLP/HTTP, every one sampled), no audit trail (100 MiB files, 5 kept) and nothing else", got)
	}
	audit := load(t, "[telemetry]\naudit = \"file\"\naudit_file = \"audit.jsonl\"\naudit_max_mib = 10\naudit_max_files = 3\n")
	if at := audit.Telemetry; at.Audit != AuditFile || at.AuditFile != filepath.Join(filepath.Dir(audit.Path), "audit.jsonl") || at.AuditMaxMiB != 10 || at.AuditMaxFiles != 3 {
		t.Errorf("[telemetry] with an audit file: %+v", at)
	}
	status := load(t, "[telemetry]\nstatus_token_file = \"status-token\"\nstatus_scope = \"ops\"\n")
	if st := status.Telemetry; st.StatusTokenFile != filepath.Join(filepath.Dir(status.Path), "status-token") || st.StatusScope != "ops" {
		t.Errorf("[telemetry] status settings: %+v", st)
	}
	if pc := load(t, "[plugins.notes]\naudit_arguments = true\n").Plugins["notes"]; !pc.AuditArguments {
		t.Error("[plugins.notes] audit_arguments = true is not read")
	}
	traces := load(t, "[telemetry]\ntraces = \"otlp\"\notlp_endpoint = \"http://collector:4318\"\notlp_protocol = \"grpc\"\ntrace_sample_ratio = 0.25\n").Telemetry
	if traces.Traces != TracesOTLP || traces.OTLPEndpoint != "http://collector:4318" || traces.OTLPProtocol != OTLPGRPC || traces.TraceSampleRatio != 0.25 {
		t.Errorf("[telemetry] with traces: %+v", traces)
	}
	cfg := load(t, "[telemetry]\nmetrics = \"on\"\nmetrics_listen = \"127.0.0.1:9464\"\nmetrics_token_file = \"token\"\nmetrics_item_names = true\n")
	tc := cfg.Telemetry
	if tc.Metrics != MetricsOn || tc.MetricsListen != "127.0.0.1:9464" || !tc.MetricsItemNames ||
		tc.MetricsTokenFile != filepath.Join(filepath.Dir(cfg.Path), "token") {
		t.Errorf("[telemetry]: %+v", tc)
	}
	for src, want := range map[string]string{
		"[telemetry]\nmetrics = \"yes\"\n":                                      `:2: telemetry.metrics: "yes" is not one of "auto", "on" and "off"`,
		"[telemetry]\nmetrics = \"off\"\nmetrics_listen = \"127.0.0.1:9464\"\n": `:3: telemetry.metrics_listen: metrics = "off": there are no metrics to listen for`,
		"[telemetry]\nmetrics_listen = \"nowhere\"\n":                           `:2: telemetry.metrics_listen:`,
		"[telemetry]\nmetrics_item_names = \"yes\"\n":                           `:2: telemetry.metrics_item_names:`,
		"[telemetry]\nmetric = \"on\"\n":                                        `:2: unknown key "telemetry.metric" (did you mean "metrics"?)`,
		"[telemetry]\ntraces = \"jaeger\"\n":                                    `:2: telemetry.traces: "jaeger" is not one of "off" and "otlp"`,
		"[telemetry]\notlp_protocol = \"http/json\"\n":                          `:2: telemetry.otlp_protocol: "http/json" is not one of "http/protobuf" and "grpc"`,
		"[telemetry]\notlp_endpoint = \"collector:4318\"\n":                     `:2: telemetry.otlp_endpoint: "collector:4318" is not an http or https URL`,
		"[telemetry]\ntrace_sample_ratio = 1.5\n":                               `:2: telemetry.trace_sample_ratio:`,
		"[telemetry]\naudit = \"file\"\n":                                       `:2: telemetry.audit: "file" needs audit_file`,
		"[telemetry]\naudit = \"syslog\"\n":                                     `:2: telemetry.audit: "syslog" is not one of "off", "stderr" and "file"`,
		"[telemetry]\naudit_max_files = 0\n":                                    `:2: telemetry.audit_max_files:`,
	} {
		_, errs := loadErrors(t, src)
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), want) {
			t.Errorf("%q: %v, want one error with %q", src, errs, want)
		}
	}
}

// TestState reads the [state] table: the memory backend by default, the
// Redis one with its URL, password source and prefix, and an error naming
// the line for each setting that cannot work, a password in the URL among
// them (without echoing it).
func TestState(t *testing.T) {
	if got := load(t, "").State; got != (StateConfig{Backend: StateMemory, Prefix: "mcphost:", TaskLease: 15 * time.Second}) {
		t.Errorf("[state] by default: %+v, want the memory backend, the prefix mcphost: and a task lease of 15s", got)
	}
	cfg := load(t, "[server]\nrequest_state_key_file = \"keys\"\n[state]\nbackend = \"redis\"\nurl = \"rediss://mcphost@redis.internal:6380/2\"\npassword_file = \"redis-password\"\nprefix = \"team-a:\"\nca_file = \"redis-ca.pem\"\ntask_lease = \"5s\"\n")
	if sc := cfg.State; sc.Backend != StateRedis || sc.URL != "rediss://mcphost@redis.internal:6380/2" || sc.Prefix != "team-a:" || sc.TaskLease != 5*time.Second ||
		sc.CAFile != filepath.Join(filepath.Dir(cfg.Path), "redis-ca.pem") ||
		sc.Password != (Secret{File: filepath.Join(filepath.Dir(cfg.Path), "redis-password")}) {
		t.Errorf("[state] with Redis: %+v", sc)
	}
	const keys = "[server]\nrequest_state_key_file = \"keys\"\n"
	for src, want := range map[string]string{
		"[state]\nbackend = \"etcd\"\n":                                                                                        `:2: state.backend: "etcd" is not one of "memory" and "redis"`,
		"[state]\nurl = \"redis://127.0.0.1:6379\"\n":                                                                          `:2: state.url: backend = "memory" uses no url: set backend = "redis"`,
		keys + "[state]\nbackend = \"redis\"\n":                                                                                `:4: state.backend: backend = "redis" needs url`,
		"[state]\nbackend = \"redis\"\nurl = \"redis://127.0.0.1:6379\"\n":                                                     `:2: state.backend: backend = "redis" needs [server] request_state_key_file`,
		keys + "[state]\nbackend = \"redis\"\nurl = \"http://127.0.0.1:6379\"\n":                                               `:5: state.url: "http://127.0.0.1:6379" is not a redis:// or rediss:// URL`,
		keys + "[state]\nbackend = \"redis\"\nurl = \"redis://127.0.0.1\"\n":                                                   `:5: state.url: "redis://127.0.0.1" names no port`,
		keys + "[state]\nbackend = \"redis\"\nurl = \"redis://127.0.0.1:6379/db\"\n":                                           `:5: state.url: "redis://127.0.0.1:6379/db" names database "db"`,
		keys + "[state]\nbackend = \"redis\"\nurl = \"redis://u:hunter2@127.0.0.1:6379\"\n":                                    `:5: state.url: the URL holds a password: put it in password_file or password_env`,
		keys + "[state]\nbackend = \"redis\"\nurl = \"redis://127.0.0.1:6379\"\npassword_file = \"p\"\npassword_env = \"P\"\n": `:7: state.password_env: set "password_file" or "password_env", not both`,
		"[state]\nprefix = \"\"\n":                                                                                             `:2: state.prefix:`,
		keys + "[state]\nbackend = \"redis\"\nurl = \"redis://127.0.0.1:6379\"\nca_file = \"ca.pem\"\n":                        `:6: state.ca_file: ca_file is for a rediss:// url (TLS)`,
		keys + "[state]\nbackend = \"redis\"\nurl = \"redis://127.0.0.1:6379\"\ntask_lease = \"1s\"\n":                         `:6: state.task_lease: 1s is shorter than 3s`,
		"[state]\ntask_lease = \"30s\"\n":                                                                                      `:2: state.task_lease: backend = "memory" uses no task_lease`,
	} {
		_, errs := loadErrors(t, src)
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), want) {
			t.Errorf("%q: %v, want one error with %q", src, errs, want)
		} else if strings.Contains(errs[0].Error(), "hunter2") {
			t.Errorf("%q: the error shows the password: %v", src, errs[0])
		}
	}
}
