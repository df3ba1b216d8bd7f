package config

import (
	"path/filepath"
	"testing"
	"time"
)

func TestPluginSources(t *testing.T) {
	p := write(t, `[server]
plugin_cache_dir = "cache"
pull_timeout = "45s"

[plugins.tagged]
source = "oci://ghcr.io/owner/weather-plugin:1.2"
verify = { key = "keys/cosign.pub" }

[plugins.keyless]
source = "oci://127.0.0.1:5000/x@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
verify = { trusted_root = "trusted_root.json", identity_regexp = "^https://github.com/owner/", issuer = "https://token.actions.githubusercontent.com" }

[plugins.open]
source = "oci://registry.example.com/open:latest"
allow_unsigned = true

[plugins.web]
source = "https://example.com/x.wasm"
sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
`)
	cfg, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(p)
	if got := cfg.Server.PluginCacheDir; got != filepath.Join(dir, "cache") {
		t.Errorf("plugin_cache_dir: %q", got)
	}
	if got, _ := cfg.PluginCacheDir(); got != filepath.Join(dir, "cache") {
		t.Errorf("PluginCacheDir: %q", got)
	}
	if cfg.Server.PullTimeout != 45*time.Second {
		t.Errorf("pull_timeout: %v", cfg.Server.PullTimeout)
	}
	if got := cfg.LockPath(); got != filepath.Join(dir, "mcphost.lock") {
		t.Errorf("LockPath: %q", got)
	}
	tagged := cfg.Plugin("tagged")
	if tagged.Source != "oci://ghcr.io/owner/weather-plugin:1.2" || tagged.Verify != (Verify{Key: filepath.Join(dir, "keys/cosign.pub")}) {
		t.Errorf("tagged: %q %+v", tagged.Source, tagged.Verify)
	}
	keyless := cfg.Plugin("keyless").Verify
	if want := (Verify{TrustedRoot: filepath.Join(dir, "trusted_root.json"), IdentityRegexp: "^https://github.com/owner/",
		Issuer: "https://token.actions.githubusercontent.com"}); keyless != want {
		t.Errorf("keyless: %+v, want %+v", keyless, want)
	}
	if !cfg.Plugin("open").AllowUnsigned {
		t.Error("open: allow_unsigned not set")
	}
	if got := cfg.Plugin("web").Source; got != "https://example.com/x.wasm" {
		t.Errorf("web: %q", got)
	}
	if d := Default(); d.Server.PullTimeout != 2*time.Minute {
		t.Errorf("default pull_timeout: %v", d.Server.PullTimeout)
	}
}

func TestPluginSourceErrors(t *testing.T) {
	const key = "verify = { key = \"k.pub\" }\n"
	testErrorCases(t, []errorCase{
		{"not a source", "[plugins.p]\nsource = \"ftp://x/y\"\n" + key, 2,
			`plugins.p.source: "ftp://x/y" is not "oci://REGISTRY/REPOSITORY:TAG", "oci://REGISTRY/REPOSITORY@sha256:DIGEST" or "https://HOST/PATH"`},
		{"oci without tag", "[plugins.p]\nsource = \"oci://ghcr.io/owner/x\"\n" + key, 2,
			`plugins.p.source: "oci://ghcr.io/owner/x" names no tag or digest`},
		{"oci bad reference", "[plugins.p]\nsource = \"oci://ghcr.io/Owner/x:1\"\n" + key, 2, `plugins.p.source: "oci://ghcr.io/Owner/x:1" is not a valid reference`},
		{"https without sha256", "[plugins.p]\nsource = \"https://example.com/x.wasm\"\n", 2,
			`plugins.p.source: an https source needs sha256 = "..." in [plugins.p]`},
		{"http off loopback", "[plugins.p]\nsource = \"http://example.com/x.wasm\"\nsha256 = \"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\"\n", 2,
			`plugins.p.source: "http://example.com/x.wasm" is not "oci://`},
		{"oci neither verify nor allow_unsigned", "[plugins.p]\nsource = \"oci://ghcr.io/o/x:1\"\n", 2,
			`plugins.p.source: an oci source needs verify = { key = "..." } or verify = { trusted_root = "...", ... }, or allow_unsigned = true`},
		{"verify and allow_unsigned", "[plugins.p]\nsource = \"oci://ghcr.io/o/x:1\"\nallow_unsigned = true\n" + key, 3,
			`plugins.p.allow_unsigned: verify and allow_unsigned = true exclude each other`},
		{"verify without source", "[plugins.p]\n" + key, 2, `plugins.p.verify: only an oci source is verified; add source = "oci://..."`},
		{"allow_unsigned without oci source", "[plugins.p]\nallow_unsigned = true\n", 2, `plugins.p.allow_unsigned: only an oci source is verified`},
		{"key and trusted_root", "[plugins.p]\nsource = \"oci://ghcr.io/o/x:1\"\nverify = { key = \"k\", trusted_root = \"r\", identity = \"a\", issuer = \"b\" }\n", 3,
			`plugins.p.verify: give either key or trusted_root, not both`},
		{"verify empty", "[plugins.p]\nsource = \"oci://ghcr.io/o/x:1\"\nverify = {}\n", 3, `plugins.p.verify: give key (a cosign public key) or trusted_root`},
		{"keyless without identity", "[plugins.p]\nsource = \"oci://ghcr.io/o/x:1\"\nverify = { trusted_root = \"r\", issuer = \"b\" }\n", 3,
			`plugins.p.verify: trusted_root needs identity or identity_regexp`},
		{"keyless without issuer", "[plugins.p]\nsource = \"oci://ghcr.io/o/x:1\"\nverify = { trusted_root = \"r\", identity = \"a\" }\n", 3,
			`plugins.p.verify: trusted_root needs issuer or issuer_regexp`},
		{"identity with key", "[plugins.p]\nsource = \"oci://ghcr.io/o/x:1\"\nverify = { key = \"k\", identity = \"a\" }\n", 3,
			`plugins.p.verify: identity, identity_regexp, issuer and issuer_regexp apply to keyless verification (trusted_root) only`},
		{"bad regexp", "[plugins.p]\nsource = \"oci://ghcr.io/o/x:1\"\nverify = { trusted_root = \"r\", identity_regexp = \"(\", issuer = \"b\" }\n", 3,
			`plugins.p.verify.identity_regexp: "(" is not a regular expression`},
		{"unknown verify key", "[plugins.p]\nsource = \"oci://ghcr.io/o/x:1\"\nverify = { kee = \"k\" }\n", 3, `unknown key "plugins.p.verify.kee" (did you mean "key"?)`},
		{"pull_timeout zero", "[server]\npull_timeout = \"0s\"\n", 2, `server.pull_timeout: "0s" is not positive`},
	})
}
