package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestHardeningKeys(t *testing.T) {
	cfg := load(t, `
[defaults]
calls_per_second = 20
max_list_items = 50
breaker_failures = 3
breaker_window = "10s"
breaker_backoff = "1s"
breaker_max_backoff = "1m"

[plugins.web]
calls_per_second = 2.5
max_list_items = 10
host_calls_per_second = 200
breaker_failures = 0
allowed_hosts = ["api.example.com", "https://*.example.org", "http://example.net:8080", "10.0.0.5:*", "[fd00::1]:443"]
allow_private_network = true
config = { region = "eu" }
secrets = { api_key = "env:WEB_API_KEY", cert = "file:certs/web.pem" }
sha256 = "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"
tools = ["search", "fetch_*"]
prompts = []
resources = ["docs://*"]
`)
	d := cfg.Defaults
	if d.CallsPerSecond != 20 || d.MaxListItems != 50 || d.BreakerFailures != 3 || d.BreakerWindow != 10*time.Second ||
		d.BreakerBackoff != time.Second || d.BreakerMaxBackoff != time.Minute {
		t.Errorf("Defaults = %+v", d)
	}
	p := cfg.Plugin("web")
	if p.Limits.CallsPerSecond != 2.5 || p.Limits.MaxListItems != 10 || p.Limits.BreakerFailures != 0 || p.Limits.BreakerWindow != 10*time.Second || p.Limits.HostCallsPerSecond != 200 {
		t.Errorf("Limits = %+v", p.Limits)
	}
	dir := filepath.Dir(cfg.Path)
	want := PluginConfig{
		AllowedHosts:        []string{"api.example.com", "https://*.example.org", "http://example.net:8080", "10.0.0.5:*", "[fd00::1]:443"},
		AllowPrivateNetwork: true,
		Config:              map[string]string{"region": "eu"},
		Secrets:             map[string]Secret{"api_key": {Env: "WEB_API_KEY"}, "cert": {File: filepath.Join(dir, "certs", "web.pem")}},
		SHA256:              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
		Tools:               []string{"search", "fetch_*"},
		Prompts:             []string{},
		Resources:           []string{"docs://*"},
	}
	got := PluginConfig{AllowedHosts: p.AllowedHosts, AllowPrivateNetwork: p.AllowPrivateNetwork, Config: p.Config,
		Secrets: p.Secrets, SHA256: p.SHA256, Tools: p.Tools, Prompts: p.Prompts, Resources: p.Resources}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("web =\n%+v\nwant\n%+v", got, want)
	}
	if none := cfg.Plugin("other"); none.Tools != nil || none.Secrets != nil || none.AllowPrivateNetwork || none.SHA256 != "" {
		t.Errorf("a plugin without a table got grants: %+v", none)
	}
}

func TestHardeningErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		line int
		msg  string
	}{
		{"rate negative", "[plugins.p]\ncalls_per_second = -1\n", 2, "plugins.p.calls_per_second: -1 is out of range (0..100000)"},
		{"rate string", "[defaults]\ncalls_per_second = \"5/s\"\n", 2, "defaults.calls_per_second: expected number, got string"},
		{"rate typo", "[plugins.p]\ncalls_per_secnd = 5\n", 2, `unknown key "plugins.p.calls_per_secnd" (did you mean "calls_per_second"?)`},
		{"host call rate zero", "[defaults]\nhost_calls_per_second = 0\n", 2, "defaults.host_calls_per_second: 0 is less than 1"},
		{"list items zero", "[plugins.p]\nmax_list_items = 0\n", 2, "plugins.p.max_list_items: 0 is out of range (1..100000)"},
		{"breaker window", "[plugins.p]\nbreaker_window = \"0s\"\n", 2, `plugins.p.breaker_window: "0s" is not positive`},
		{"backoff over cap", "[plugins.p]\nbreaker_backoff = \"10m\"\n", 2, "plugins.p.breaker_backoff: 10m0s is longer than breaker_max_backoff (5m0s)"},
		{"private not bool", "[plugins.p]\nallow_private_network = \"yes\"\n", 2, "plugins.p.allow_private_network: expected boolean, got string"},
		{"secret literal", "[plugins.p]\n\nsecrets = { key = \"hunter2hunter2\" }\n", 3,
			`plugins.p.secrets.key: must be "env:VARIABLE" or "file:PATH" (the secret itself never goes in this file)`},
		{"secret bad env", "[plugins.p]\nsecrets = { key = \"env:1X\" }\n", 2, `plugins.p.secrets.key: "1X" is not an environment variable name`},
		{"secret empty file", "[plugins.p]\nsecrets = { key = \"file:\" }\n", 2, `plugins.p.secrets.key: must be "env:VARIABLE" or "file:PATH"`},
		{"secret not a table", "[plugins.p]\nsecrets = [\"env:X\"]\n", 2, "plugins.p.secrets: expected table, got array"},
		{"secret and config", "[plugins.p]\nconfig = { key = \"a\" }\nsecrets = { key = \"env:K\" }\n", 3,
			`plugins.p.secrets.key: "key" is also in config; a key is either a config value or a secret`},
		{"sha256 short", "[plugins.p]\nsha256 = \"abc\"\n", 2, `plugins.p.sha256: "abc" is not a SHA-256 digest: 64 hex digits`},
		{"tools not array", "[plugins.p]\ntools = \"a*\"\n", 2, "plugins.p.tools: expected array of strings, got string"},
		{"bad glob", "[plugins.p]\nprompts = [\"ok\", \"[a-\"]\n", 2, `plugins.p.prompts[1]: "[a-" is not a valid glob pattern`},
		{"empty glob", "[plugins.p]\nresources = [\"\"]\n", 2, "plugins.p.resources[0]: empty pattern"},
		{"host port star with path", "[plugins.p]\nallowed_hosts = [\"x.com:*/a\"]\n", 2, `plugins.p.allowed_hosts[0]: "x.com:*/a" is not a host pattern`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := loadErrors(t, tc.src)
			if len(errs) != 1 {
				t.Fatalf("got %d errors, want 1:\n%v", len(errs), errs)
			}
			if e := errs[0]; e.Line != tc.line || !strings.Contains(e.Msg, tc.msg) {
				t.Errorf("got line %d %q\nwant line %d %q", e.Line, e.Msg, tc.line, tc.msg)
			}
			if strings.Contains(errs.Error(), "hunter2") {
				t.Errorf("an error repeats the secret: %v", errs)
			}
		})
	}
}

func TestSecretValues(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCPHOST_TEST_SECRET", "from-env")
	p := PluginConfig{Name: "p", Secrets: map[string]Secret{"a": {Env: "MCPHOST_TEST_SECRET"}, "b": {File: file}}}
	got, err := p.SecretValues()
	if err != nil || got["a"] != "from-env" || got["b"] != "from-file" || len(got) != 2 {
		t.Fatalf("SecretValues() = %v, %v", got, err)
	}
	for _, tc := range []struct {
		secret Secret
		msg    string
	}{
		{Secret{Env: "MCPHOST_TEST_UNSET"}, "plugins.p.secrets.k (env:MCPHOST_TEST_UNSET): environment variable MCPHOST_TEST_UNSET is not set"},
		{Secret{File: filepath.Join(dir, "missing")}, "plugins.p.secrets.k (file:" + filepath.Join(dir, "missing") + "): reading secret file:"},
	} {
		_, err := PluginConfig{Name: "p", Secrets: map[string]Secret{"k": tc.secret}}.SecretValues()
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%v: got %v, want %q", tc.secret, err, tc.msg)
		}
	}
	t.Setenv("MCPHOST_TEST_EMPTY", "")
	if _, err := (PluginConfig{Name: "p", Secrets: map[string]Secret{"k": {Env: "MCPHOST_TEST_EMPTY"}}}).SecretValues(); err == nil {
		t.Error("an empty secret was accepted")
	}
}
