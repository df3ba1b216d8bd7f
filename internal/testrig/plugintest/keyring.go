package plugintest

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/testenv"
)

// SecretService starts a Secret Service of the test's own: GNOME Keyring's
// daemon on a D-Bus session bus of its own (dbus-run-session), with a
// throwaway home and an unlocked login keyring holding entries (service,
// user and value each, stored with secret-tool as an operator would), and
// points this process's D-Bus session at it until the test ends. Without
// the tools it skips, except under CI, where it fails
// (scripts/setup-keyring.sh installs them).
func SecretService(t *testing.T, entries ...[3]string) {
	t.Helper()
	for _, tool := range []string{"dbus-run-session", "gnome-keyring-daemon", "secret-tool"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Missing(t, "%s is missing (scripts/setup-keyring.sh installs it)", tool)
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
