package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/internal/testrig/plugintest"
)

// checkFixture returns a plugins folder holding the files and tools
// examples, and a config file with body.
func checkFixture(t *testing.T, body string) (plugins, cfg string) {
	t.Helper()
	plugins = t.TempDir()
	for _, p := range []string{"plugins/examples/files", "plugins/examples/tools"} {
		wasm, err := os.ReadFile(plugintest.Build(t, p))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(plugins, filepath.Base(p)+".wasm"), wasm, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg = filepath.Join(t.TempDir(), "mcphost.toml")
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return plugins, cfg
}

func runCheck(t *testing.T, plugins, cfg string) (string, error) {
	t.Helper()
	var out strings.Builder
	err := check(context.Background(), checkFlags{plugins: plugins, config: cfg}, &out)
	return out.String(), err
}

func sha(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func TestCheckReportsEveryProblemWithTheLinesToAdd(t *testing.T) {
	plugins, cfg := checkFixture(t, `
[plugins.files]
sha256 = "0000000000000000000000000000000000000000000000000000000000000000"
secrets = { token = "env:MCPHOST_CHECK_UNSET_VARIABLE" }

[plugins.gone]
timeout = "1s"
`)
	out, err := runCheck(t, plugins, cfg)
	if !errors.Is(err, errCheckFailed) {
		t.Fatalf("check: %v\n%s", err, out)
	}
	files, tools := filepath.Join(plugins, "files.wasm"), filepath.Join(plugins, "tools.wasm")
	for _, want := range []string{
		files + ": plugin file does not match its sha256 pin: expected 0000000000000000000000000000000000000000000000000000000000000000, actual " + sha(t, files),
		files + ": plugins.files.secrets.token (env:MCPHOST_CHECK_UNSET_VARIABLE): environment variable MCPHOST_CHECK_UNSET_VARIABLE is not set",
		files + ": plugin needs grants it does not have",
		tools + ": plugin needs grants it does not have",
		cfg + ": [plugins.gone] names no plugin file in " + plugins,
		"\nAdd to " + cfg + ":\n",
		"  [plugins.files]\n  host_functions = [\"notify_logging_message\"]\n  config = { max_file_bytes = \"...\" }\n  [[plugins.files.mounts]]\n",
		"  guest = \"/data\"\n",
		"  [plugins.tools]\n  host_functions = [\"notify_progress\"]\n",
		"5 problems in 2 plugins\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestCheckPassesAGoodSetup(t *testing.T) {
	plugins, _ := checkFixture(t, "")
	data := t.TempDir()
	t.Setenv("MCPHOST_CHECK_TOKEN", "a-token-value")
	cfg := filepath.Join(t.TempDir(), "mcphost.toml")
	body := `
[plugins.files]
sha256 = "` + sha(t, filepath.Join(plugins, "files.wasm")) + `"
host_functions = ["notify_logging_message"]
config = { max_file_bytes = "1024" }
secrets = { token = "env:MCPHOST_CHECK_TOKEN" }
[[plugins.files.mounts]]
host = "` + data + `"
guest = "/data"

[plugins.tools]
host_functions = ["notify_progress"]
`
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runCheck(t, plugins, cfg)
	if err != nil || out != "ok: 2 plugins checked\n" {
		t.Fatalf("check: %v\n%s", err, out)
	}
	if strings.Contains(out, "a-token-value") {
		t.Error("check printed a secret")
	}
}

func TestCheckReportsConfigErrorsAndFails(t *testing.T) {
	plugins, cfg := checkFixture(t, "[plugins.files]\ncalls_per_second = -2\nsha256 = \"nope\"\n")
	out, err := runCheck(t, plugins, cfg)
	if !errors.Is(err, errCheckFailed) {
		t.Fatalf("check: %v\n%s", err, out)
	}
	want := cfg + ":2: plugins.files.calls_per_second: -2 is out of range (0..100000)\n" +
		cfg + ":3: plugins.files.sha256: \"nope\" is not a SHA-256 digest: 64 hex digits (sha256sum PLUGIN.wasm)\n" +
		"2 problems in the config\n"
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
}

// TestCheckRejectsLimitsTheSandboxRefuses checks that check fails on a
// limit that loading the plugin would fail on, naming its line and bounds.
func TestCheckRejectsLimitsTheSandboxRefuses(t *testing.T) {
	plugins, cfg := checkFixture(t, "[defaults]\nmemory_mib = 2\n")
	out, err := runCheck(t, plugins, cfg)
	if !errors.Is(err, errCheckFailed) {
		t.Fatalf("check: %v\n%s", err, out)
	}
	want := cfg + ":2: defaults.memory_mib: memory limit 2 MiB is not between 4 and 4096 MiB\n" +
		"1 problem in the config\n"
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
}

// TestCheckReadsOAuth2ClientSecrets checks that check reads the secret of
// every OAuth2 client as it reads secrets: one that cannot be read is a
// problem naming the client and the source; one that can is not shown.
func TestCheckReadsOAuth2ClientSecrets(t *testing.T) {
	secretFile := filepath.Join(t.TempDir(), "client.secret")
	if err := os.WriteFile(secretFile, []byte("file-held-client-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCPHOST_CHECK_CLIENT_SECRET", "env-held-client-secret")
	toml := "[plugins.tools]\nhost_functions = [\"notify_progress\"]\n"
	for _, c := range [][2]string{
		{"held-in-env", "env:MCPHOST_CHECK_CLIENT_SECRET"},
		{"held-in-file", "file:" + secretFile},
		{"unset", "env:MCPHOST_CHECK_UNSET_CLIENT_SECRET"},
		{"missing-file", "file:" + secretFile + ".gone"},
		{"public", ""},
	} {
		toml += fmt.Sprintf("\n[[plugins.tools.oauth2]]\ntoken_url = \"https://auth.example.com/token\"\nclient_id = %q\n", c[0])
		if c[1] != "" {
			toml += fmt.Sprintf("client_secret = %q\n", c[1])
		}
	}
	plugins, cfg := checkFixture(t, toml)
	out, err := runCheck(t, plugins, cfg)
	if !errors.Is(err, errCheckFailed) {
		t.Fatalf("check: %v\n%s", err, out)
	}
	tools := filepath.Join(plugins, "tools.wasm")
	for _, want := range []string{
		tools + `: plugins.tools.oauth2[2].client_secret of client "unset" (env:MCPHOST_CHECK_UNSET_CLIENT_SECRET): environment variable MCPHOST_CHECK_UNSET_CLIENT_SECRET is not set`,
		tools + `: plugins.tools.oauth2[3].client_secret of client "missing-file" (file:` + secretFile + `.gone): reading secret file:`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "client_secret"); n != 2 {
		t.Errorf("%d client_secret problems, want 2:\n%s", n, out)
	}
	if strings.Contains(out, "held-client-secret") {
		t.Errorf("check printed a secret:\n%s", out)
	}
}
