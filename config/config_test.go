package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
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
		Server: ServerConfig{Name: "mcphost", Title: "mcphost", PageSize: 100},
		Defaults: Limits{
			MemoryMiB:      128,
			Timeout:        30 * time.Second,
			MaxOutputBytes: 4194304,
			MaxInstances:   4,
			MaxQueue:       64,
		},
		Plugins: map[string]PluginConfig{},
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
	if want := (ServerConfig{Name: "srv", Title: "My Server", CacheDir: "off", PageSize: 20}); cfg.Server != want {
		t.Errorf("Server = %+v, want %+v", cfg.Server, want)
	}
	defaults := Limits{MemoryMiB: 256, Timeout: time.Minute, MaxOutputBytes: 1024, MaxInstances: 2, MaxQueue: 0}
	if cfg.Defaults != defaults {
		t.Errorf("Defaults = %+v, want %+v", cfg.Defaults, defaults)
	}
	got := cfg.Plugin("files")
	want := PluginConfig{
		Name:          "files",
		Prefix:        "fs_",
		Disabled:      true,
		Limits:        Limits{MemoryMiB: 64, Timeout: 5 * time.Second, MaxOutputBytes: 1024, MaxInstances: 2, MaxQueue: 0},
		HostFunctions: []string{"notify_logging_message", "list_roots"},
		AllowedHosts:  []string{"api.example.com", "*.example.org", "example.net:8443", "*", "10.0.0.1:80", "[::1]:8080"},
		Config:        map[string]string{"root": "/data", "depth": "3", "ratio": "0.5", "verbose": "true"},
		set:           setMemoryMiB | setTimeout,
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
	if want := (Limits{MemoryMiB: 128, Timeout: 20 * time.Second, MaxOutputBytes: 4194304, MaxInstances: 1, MaxQueue: 0}); a.Limits != want {
		t.Errorf("Plugin(a).Limits = %+v, want %+v", a.Limits, want)
	}

	// A plugin without a table gets the defaults and no grants.
	b := cfg.Plugin("b")
	if want := (PluginConfig{Name: "b", Limits: cfg.Defaults}); !reflect.DeepEqual(b, want) {
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
}

// TestErrors checks each kind of problem, its message and its line.
func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		line int
		msg  string
	}{
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
		{"memory high", "[defaults]\nmemory_mib = 4097\n", 2, "defaults.memory_mib: 4097 is out of range (1..4096)"},
		{"instances low", "[plugins.p]\nmax_instances = 0\n", 2, "plugins.p.max_instances: 0 is out of range (1..64)"},
		{"queue negative", "[defaults]\nmax_queue = -1\n", 2, "defaults.max_queue: -1 is out of range (0..10000)"},
		{"output zero", "[defaults]\nmax_output_bytes = 0\n", 2, "defaults.max_output_bytes: 0 is out of range (1..1073741824)"},
		{"bad duration", "[plugins.p]\ntimeout = \"5 s\"\n", 2, `plugins.p.timeout: bad duration "5 s"`},
		{"duration integer", "[defaults]\ntimeout = 30\n", 2, `defaults.timeout: expected duration string such as "30s", got integer`},
		{"duration zero", "[defaults]\ntimeout = \"0s\"\n", 2, `defaults.timeout: "0s" is not positive`},
		{"duration long", "[defaults]\ntimeout = \"61m\"\n", 2, `defaults.timeout: "61m" is longer than 1h0m0s`},
		{"unknown host function", "[plugins.p]\nhost_functions = [\"notify_progress\", \"notify_log\"]\n", 2,
			`plugins.p.host_functions[1]: unknown host function "notify_log" (valid: create_message, create_elicitation, list_roots, notify_logging_message, notify_progress,`},
		{"empty host", "[plugins.p]\nallowed_hosts = [\"\"]\n", 2, "plugins.p.allowed_hosts[0]: empty host pattern"},
		{"host with scheme", "[plugins.p]\nallowed_hosts = [\"https://api.example.com\"]\n", 2,
			`plugins.p.allowed_hosts[0]: "https://api.example.com" includes a scheme`},
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
	} {
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
allowed_hosts = ["http://x.com"]                         # 12

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
		{12, `plugins.files.allowed_hosts[0]: "http://x.com" includes a scheme`},
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
