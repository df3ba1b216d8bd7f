package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testrig/plugintest"
	"github.com/mcphost/mcphost/internal/testrig/poll"
)

// Plugins from OCI registries, end to end: `mcphost plugin push` publishes
// an example to a real registry, serve pulls it from its [plugins.NAME]
// source, and an unreachable registry stops serve (on_load_error = "fail")
// or is a warning naming the plugin while the rest serve ("skip").

// ociFixture is a fixture serving the tools example from the folder and
// another copy of it, "remote", from source, with cache and lock in the
// fixture's folder.
func ociFixture(t *testing.T, source string) fixture {
	t.Helper()
	dir := t.TempDir()
	f := newFixture(t, `
[plugins.remote]
source = "`+source+`"
allow_unsigned = true
prefix = "remote_"
host_functions = ["notify_progress", "notify_logging_message"]
`, "plugins/examples/tools")
	addServerKey(t, f, `plugin_cache_dir = "`+filepath.Join(dir, "cache")+`"`+"\npull_timeout = \"20s\"")
	return f
}

func TestServePullsAPluginPushedByPluginPush(t *testing.T) {
	reg := plugintest.StartRegistry(t)
	ref := "oci://" + reg.Addr + "/examples/tools:1"
	out, err := exec.Command(mcphostBin, "plugin", "push", plugintest.Build(t, "plugins/examples/tools"), ref).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "digest: sha256:") {
		t.Fatalf("plugin push: %v\n%s", err, out)
	}
	f := ociFixture(t, ref)
	srv := f.start(t)
	cs := srv.session(t, nil)
	poll.Until(t, 30*time.Second, "the load to end", func() bool { return readyz(t, srv).code == 200 })
	if got, isErr, err := hostileCall(ctxT(t), cs, "remote_hash", map[string]any{"text": "abc"}); err != nil || isErr || !strings.Contains(got, sha256abc) {
		t.Fatalf("the pulled plugin: %v %v %q\n%s", err, isErr, got, srv.log.String())
	}
	log := srv.log.String()
	if !logHas(log, "level=WARN", "plugin=remote", "allow_unsigned") || !logHas(log, "plugin fetched", "plugin=remote", "digest=sha256:") {
		t.Errorf("want the fetch and the unsigned warning logged:\n%s", log)
	}
	lock, err := os.ReadFile(filepath.Join(filepath.Dir(f.config), "mcphost.lock"))
	if err != nil || !strings.Contains(string(lock), ref+" sha256:") {
		t.Errorf("mcphost.lock: %v\n%s", err, lock)
	}
	ls, err := exec.Command(mcphostBin, "plugin", "ls", "--config", f.config, "--plugins", f.plugins).CombinedOutput()
	if err != nil || !strings.Contains(string(ls), "remote") || !strings.Contains(string(ls), "UNSIGNED allowed") {
		t.Errorf("plugin ls: %v\n%s", err, ls)
	}
}

func TestUnreachableRegistryAtStart(t *testing.T) {
	const source = "oci://127.0.0.1:1/examples/tools:1"
	t.Run("fail", func(t *testing.T) {
		err, stderr := serveUntilExit(t, ociFixture(t, source), 60*time.Second)
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() == 0 {
			t.Fatalf("serve ended with %v, want a non-zero exit:\n%s", err, stderr)
		}
		if !logHas(stderr, "level=ERROR", "plugin=remote", source, "connection refused") {
			t.Errorf("no error naming the plugin, its source and why:\n%s", stderr)
		}
	})
	t.Run("skip", func(t *testing.T) {
		f := ociFixture(t, source)
		addServerKey(t, f, `on_load_error = "skip"`)
		srv := f.start(t)
		cs := srv.session(t, nil)
		if got, isErr, err := hostileCall(ctxT(t), cs, "hash", map[string]any{"text": "abc"}); err != nil || isErr || !strings.Contains(got, sha256abc) {
			t.Fatalf("the plugin from the folder: %v %v %q", err, isErr, got)
		}
		poll.Until(t, 30*time.Second, "the load to end", func() bool { return readyz(t, srv).code == 200 })
		if !logHas(srv.log.String(), "level=WARN", "plugin=remote", source, "connection refused") {
			t.Errorf("no warning naming the plugin, its source and why:\n%s", srv.log.String())
		}
	})
}

// pushSigned publishes the tools example at ref with mcphost plugin push,
// signs it with key, and returns its digest.
func pushSigned(t *testing.T, ref string, key *plugintest.KeySigner) string {
	t.Helper()
	out, err := exec.Command(mcphostBin, "plugin", "push", plugintest.Build(t, "plugins/examples/tools"), ref).CombinedOutput()
	_, dgst, ok := strings.Cut(string(out), "digest: ")
	if err != nil || !ok {
		t.Fatalf("plugin push: %v\n%s", err, out)
	}
	dgst, _, _ = strings.Cut(dgst, "\n")
	if key != nil {
		key.Sign(t, ref, dgst)
	}
	return dgst
}

// TestInspectCheckAndDevCommandsFetchSources: inspect oci://REF pulls and
// verifies as plugin pull does (--key, keyless flags or --allow-unsigned),
// then inspects; check and the developer commands fetch a [plugins.NAME]
// source as serve does, verified as its table says.
func TestInspectCheckAndDevCommandsFetchSources(t *testing.T) {
	reg := plugintest.StartRegistry(t)
	key, other := plugintest.NewKeySigner(t), plugintest.NewKeySigner(t)
	ref := "oci://" + reg.Addr + "/examples/tools:signed"
	dgst := pushSigned(t, ref, key)
	run := func(args ...string) (string, error) {
		out, err := exec.Command(mcphostBin, args...).CombinedOutput()
		return string(out), err
	}

	out, err := run("inspect", "--key", key.Pub, ref)
	if err != nil || !strings.Contains(out, "hash") || !strings.Contains(out, dgst) || !strings.Contains(out, "signer:    key "+key.Pub) {
		t.Errorf("inspect --key: %v\n%s", err, out)
	}
	if out, err := run("inspect", ref); err == nil || !strings.Contains(out, "--key") || !strings.Contains(out, "--allow-unsigned") {
		t.Errorf("inspect with no verify flag: %v\n%s", err, out)
	}
	if out, err := run("inspect", "--key", other.Pub, ref); err == nil || !strings.Contains(out, "does not verify with the key "+other.Pub) {
		t.Errorf("inspect with another key: %v\n%s", err, out)
	}
	if out, err := run("inspect", "--allow-unsigned", "--json", ref); err != nil || !strings.Contains(out, `"digest": "`+dgst+`"`) {
		t.Errorf("inspect --allow-unsigned --json: %v\n%s", err, out)
	}

	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	os.MkdirAll(plugins, 0o755)
	config := func(pub string) string {
		cfg := filepath.Join(dir, "mcphost.toml")
		os.WriteFile(cfg, []byte(`[server]
plugin_cache_dir = "`+filepath.Join(dir, "cache")+`"

[plugins.remote]
source = "`+ref+`"
verify = { key = "`+pub+`" }
host_functions = ["notify_progress", "notify_logging_message"]
`), 0o644)
		return cfg
	}
	cfg := config(key.Pub)
	if out, err := run("check", "--plugins", plugins, "--config", cfg); err != nil || !strings.Contains(out, "ok: 1 plugin checked") {
		t.Errorf("check: %v\n%s", err, out)
	}
	if out, err := run("call", "--config", cfg, "remote", "hash", "--arg", "text=abc"); err != nil || !strings.Contains(out, sha256abc) {
		t.Errorf("call remote: %v\n%s", err, out)
	}
	if out, err := run("call", "--config", cfg, filepath.Join(plugins, "remote.wasm"), "hash", "--arg", "text=abc"); err != nil || !strings.Contains(out, sha256abc) {
		t.Errorf("call plugins/remote.wasm (no such file; its table has a source): %v\n%s", err, out)
	}
	cfg = config(other.Pub)
	if out, err := run("check", "--plugins", plugins, "--config", cfg); err == nil || !strings.Contains(out, "remote") || !strings.Contains(out, "does not verify with the key "+other.Pub) {
		t.Errorf("check with another key: %v\n%s", err, out)
	}
	if out, err := run("call", "--config", cfg, "remote", "hash", "--arg", "text=abc"); err == nil || !strings.Contains(out, "does not verify with the key "+other.Pub) {
		t.Errorf("call with another key: %v\n%s", err, out)
	}
}

// TestServeVerifiesSignedPlugins: serve pulls a key-signed and a
// keyless-signed plugin (sigstore-go's virtual Fulcio/Rekor) from a real
// registry, verifies and serves both; with the key-signed one's table
// naming another key it is refused with its specific message, while the
// rest serve (on_load_error = "skip"), or serve exits naming it (fail).
func TestServeVerifiesSignedPlugins(t *testing.T) {
	reg := plugintest.StartRegistry(t)
	key, other, keyless := plugintest.NewKeySigner(t), plugintest.NewKeySigner(t), plugintest.NewKeylessSigner(t)
	const identity, issuer = "https://github.com/owner/tools/.github/workflows/release.yml@refs/tags/v1", "https://token.actions.githubusercontent.com"
	byKey, byIdentity := "oci://"+reg.Addr+"/signed/key-tools:1", "oci://"+reg.Addr+"/signed/keyless-tools:1"
	pushSigned(t, byKey, key)
	keyless.Sign(t, byIdentity, pushSigned(t, byIdentity, nil), identity, issuer)
	fixtureWith := func(pub string) fixture {
		dir := t.TempDir()
		f := newFixture(t, `
[plugins.bykey]
source = "`+byKey+`"
verify = { key = "`+pub+`" }
prefix = "key_"
host_functions = ["notify_progress", "notify_logging_message"]

[plugins.keyless]
source = "`+byIdentity+`"
verify = { trusted_root = "`+keyless.Root+`", identity_regexp = "^https://github.com/owner/tools/", issuer = "`+issuer+`" }
prefix = "keyless_"
host_functions = ["notify_progress", "notify_logging_message"]
`, "plugins/examples/tools")
		addServerKey(t, f, `plugin_cache_dir = "`+filepath.Join(dir, "cache")+`"`+"\npull_timeout = \"20s\"")
		return f
	}
	call := func(t *testing.T, srv *server, tool string) {
		t.Helper()
		if got, isErr, err := hostileCall(ctxT(t), srv.session(t, nil), tool, map[string]any{"text": "abc"}); err != nil || isErr || !strings.Contains(got, sha256abc) {
			t.Errorf("%s: %v %v %q\n%s", tool, err, isErr, got, srv.log.String())
		}
	}

	t.Run("good", func(t *testing.T) {
		srv := fixtureWith(key.Pub).start(t)
		poll.Until(t, 30*time.Second, "the load to end", func() bool { return readyz(t, srv).code == 200 })
		call(t, srv, "key_hash")
		call(t, srv, "keyless_hash")
		log := srv.log.String()
		if !logHas(log, "plugin fetched", "plugin=bykey", "signer=\"key "+key.Pub) ||
			!logHas(log, "plugin fetched", "plugin=keyless", "signer=\""+identity+" (issuer "+issuer+")\"") {
			t.Errorf("want each fetch logged with its signer:\n%s", log)
		}
	})
	refusal := "does not verify with the key " + other.Pub
	t.Run("wrong key, skip", func(t *testing.T) {
		f := fixtureWith(other.Pub)
		addServerKey(t, f, `on_load_error = "skip"`)
		srv := f.start(t)
		poll.Until(t, 30*time.Second, "the load to end", func() bool { return readyz(t, srv).code == 200 })
		call(t, srv, "hash")
		call(t, srv, "keyless_hash")
		if !logHas(srv.log.String(), "level=WARN", "plugin=bykey", byKey, refusal) {
			t.Errorf("no warning naming the plugin, its source and the refusal:\n%s", srv.log.String())
		}
	})
	t.Run("wrong key, fail", func(t *testing.T) {
		err, stderr := serveUntilExit(t, fixtureWith(other.Pub), 60*time.Second)
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() == 0 {
			t.Fatalf("serve ended with %v, want a non-zero exit:\n%s", err, stderr)
		}
		if !logHas(stderr, "level=ERROR", "plugin=bykey", byKey, refusal) {
			t.Errorf("no error naming the plugin and the refusal:\n%s", stderr)
		}
	})
}
