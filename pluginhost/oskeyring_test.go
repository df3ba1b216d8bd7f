package pluginhost

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/config"
	"github.com/mcphost/mcphost/internal/testrig/plugintest"
)

// TestGetKeyringSecretFromTheOSKeyring reads get_keyring_secret's entries
// from a real Secret Service (GNOME Keyring under dbus-run-session): a
// granted entry without secret answers the OS keyring's value, one with
// secret the plugin's secret; an entry the OS keyring holds but the
// operator did not grant is refused; a granted entry missing from the OS
// keyring fails the load, naming the entry and how to store it. No error
// and no log line holds a value.
func TestGetKeyringSecretFromTheOSKeyring(t *testing.T) {
	const opsValue, rootValue, ghValue = "os-keyring-value-1", "root-value-never-granted", "gh-secret-value"
	plugintest.SecretService(t, [3]string{"vault", "ops", opsValue}, [3]string{"vault", "root", rootValue})
	pc := config.PluginConfig{Name: "p", Keyring: []config.KeyringEntry{{Service: "vault", User: "ops"}, {Service: "github", User: "me", Secret: "gh"}}}

	values, err := keyringValues(t.Context(), pc, map[string]string{"gh": ghValue})
	if err != nil {
		t.Fatal(err)
	}
	get := keyringSecret("p", values)
	for _, c := range []struct{ in, want string }{
		{`{"service":"vault","user":"ops"}`, opsValue},
		{`{"service":"github","user":"me"}`, ghValue},
	} {
		if out, err := get(t.Context(), []byte(c.in)); err != nil || string(out) != c.want {
			t.Errorf("get_keyring_secret(%s) = %q, %v; want %q", c.in, out, err, c.want)
		}
	}
	_, err = get(t.Context(), []byte(`{"service":"vault","user":"root"}`))
	if err == nil || !strings.Contains(err.Error(), `the entry service "vault", user "root" is not granted to plugin p`) || strings.Contains(err.Error(), rootValue) {
		t.Errorf("an entry in the OS keyring but not granted: %v", err)
	}

	missing := pc
	missing.Keyring = append(missing.Keyring, config.KeyringEntry{Service: "vault", User: "nobody"})
	_, err = keyringValues(t.Context(), missing, map[string]string{"gh": ghValue})
	for _, want := range []string{`plugins.p.keyring: the entry service "vault", user "nobody"`, "not in the OS keyring", "secret-tool store"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a granted entry missing from the OS keyring: %v, want %q", err, want)
		}
	}
	for _, v := range []string{opsValue, ghValue, rootValue} {
		if err != nil && strings.Contains(err.Error(), v) {
			t.Errorf("the error holds a value: %v", err)
		}
	}

	t.Run("through the loader", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "p.wasm")
		if err := os.WriteFile(path, module(t, "p"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Setenv("MCPHOST_TEST_GH", ghValue)
		load := func(keyring string) error {
			toml := filepath.Join(dir, "mcphost.toml")
			if err := os.WriteFile(toml, []byte("[plugins.p]\nsecrets = { gh = \"env:MCPHOST_TEST_GH\" }\nkeyring = "+keyring+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Load(toml)
			if err != nil {
				t.Fatal(err)
			}
			r, _, logs := newTestReloader(t, dir)
			_, err = r.loader.LoadFile(t.Context(), path, cfg)
			if logged := logs.dump(); strings.Contains(logged, opsValue) || strings.Contains(logged, ghValue) {
				t.Errorf("a value was logged:\n%s", logged)
			}
			return err
		}
		if err := load(`[{ service = "vault", user = "ops" }, { service = "github", user = "me", secret = "gh" }]`); err != nil {
			t.Errorf("granted entries the OS keyring and the secrets hold: %v", err)
		}
		err := load(`[{ service = "vault", user = "nobody" }]`)
		if err == nil || !strings.Contains(err.Error(), "not in the OS keyring") {
			t.Errorf("a granted entry missing from the OS keyring: %v", err)
		}
	})
}
