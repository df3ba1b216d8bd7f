package pluginhost

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/config"
)

// secretService starts a Secret Service of the test's own: GNOME Keyring's
// daemon on a D-Bus session bus of its own (dbus-run-session), with a
// throwaway home and an unlocked login keyring holding entries (service,
// user and value each, stored with secret-tool as an operator would), and
// points this process's D-Bus session at it until the test ends. Without
// the tools it skips, except under CI, where it fails
// (scripts/setup-keyring.sh installs them).
func secretService(t *testing.T, entries ...[3]string) {
	t.Helper()
	for _, tool := range []string{"dbus-run-session", "gnome-keyring-daemon", "secret-tool"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("CI is set but %s is missing: run scripts/setup-keyring.sh", tool)
			}
			t.Skipf("SKIPPED: %s is missing (scripts/setup-keyring.sh installs it)", tool)
		}
	}
	home := t.TempDir()
	env := []string{"HOME=" + home}
	for _, v := range []string{"XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR"} {
		dir := filepath.Join(home, v)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		env = append(env, v+"="+dir)
	}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "XDG_") && k != "HOME" && k != "DBUS_SESSION_BUS_ADDRESS" && k != "DISPLAY" {
			env = append(env, kv)
		}
	}
	// The daemon, started before any client asks for the Secret Service,
	// creates and unlocks the login keyring with the password on its
	// input; secret-tool stores each entry's value from its input, never
	// from its arguments.
	const script = `set -e
printf '%s\n' "$DBUS_SESSION_BUS_ADDRESS"
printf 'test' | gnome-keyring-daemon --unlock --components=secrets --daemonize >/dev/null
while [ $# -ge 3 ]; do
	printf '%s' "$3" | secret-tool store --label="$1 $2" service "$1" username "$2"
	shift 3
done
echo ready
read -r _ || true`
	args := []string{"--", "sh", "-c", script, "sh"}
	for _, e := range entries {
		args = append(args, e[:]...)
	}
	cmd := exec.Command("dbus-run-session", args...)
	cmd.Env = env
	stderr, err := os.Create(filepath.Join(home, "stderr")) // a file: the daemon outlives the script
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // the bus ends with the script, and the daemon with the bus
		_ = stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var got []string
	for len(got) < 2 {
		select {
		case l, ok := <-lines:
			if !ok {
				out, _ := os.ReadFile(stderr.Name())
				t.Fatalf("the Secret Service did not start: %q\n%s", got, out)
			}
			got = append(got, l)
		case <-time.After(30 * time.Second):
			t.Fatalf("the Secret Service did not start within 30s: %q", got)
		}
	}
	if got[1] != "ready" {
		t.Fatalf("the Secret Service did not start: %q", got)
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", got[0])
}

// TestGetKeyringSecretFromTheOSKeyring reads get_keyring_secret's entries
// from a real Secret Service (GNOME Keyring under dbus-run-session): a
// granted entry without secret answers the OS keyring's value, one with
// secret the plugin's secret; an entry the OS keyring holds but the
// operator did not grant is refused; a granted entry missing from the OS
// keyring fails the load, naming the entry and how to store it. No error
// and no log line holds a value.
func TestGetKeyringSecretFromTheOSKeyring(t *testing.T) {
	const opsValue, rootValue, ghValue = "os-keyring-value-1", "root-value-never-granted", "gh-secret-value"
	secretService(t, [3]string{"vault", "ops", opsValue}, [3]string{"vault", "root", rootValue})
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
