package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/internal/ociplugin"
	"github.com/mcphost/mcphost/internal/testrig/plugintest"
)

// runPlugin runs mcphost plugin with args and returns what it printed.
func runPlugin(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newPluginCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

// TestPluginPullAndUpdate: plugin pull NAME pulls the source of its table,
// verified as the table says, and pins the tag; a moved tag keeps its pin
// until plugin update NAME, which moves it only to a digest that verifies;
// plugin pull oci://REF needs exactly one way to verify.
func TestPluginPullAndUpdate(t *testing.T) {
	reg := plugintest.StartRegistry(t)
	key := plugintest.NewKeySigner(t)
	ref := "oci://" + reg.Addr + "/cli/tools:1"
	out, err := runPlugin(t, "push", plugintest.Build(t, "plugins/examples/tools"), ref)
	_, first, _ := strings.Cut(out, "digest: ")
	first, _, _ = strings.Cut(first, "\n")
	if err != nil || first == "" {
		t.Fatalf("push: %v\n%s", err, out)
	}
	key.Sign(t, ref, first)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcphost.toml")
	os.WriteFile(cfg, []byte(`[server]
plugin_cache_dir = "`+filepath.Join(dir, "cache")+`"

[plugins.remote]
source = "`+ref+`"
verify = { key = "`+key.Pub+`" }
`), 0o644)
	lock := ociplugin.OpenLock(filepath.Join(dir, "mcphost.lock"))
	pinned := func() string { d, _ := lock.Get(ref); return d }

	out, err = runPlugin(t, "pull", "--config", cfg, "remote")
	if err != nil || !strings.Contains(out, "digest:  "+first) || !strings.Contains(out, "signer:  key "+key.Pub) || !strings.Contains(out, "manifest: {") {
		t.Fatalf("pull remote: %v\n%s", err, out)
	}
	if pinned() != first {
		t.Errorf("pin %q, want %q", pinned(), first)
	}

	wasm, _ := os.ReadFile(plugintest.Build(t, "plugins/examples/tools"))
	unsigned, err := (&ociplugin.Puller{}).Push(context.Background(), ref, wasm, map[string]string{"v": "2"})
	if err != nil {
		t.Fatal(err)
	}
	if out, err = runPlugin(t, "pull", "--config", cfg, "remote"); err != nil || !strings.Contains(out, first) {
		t.Errorf("pull after the tag moved: want the pinned %s: %v\n%s", first, err, out)
	}
	if out, err = runPlugin(t, "update", "--config", cfg, "remote"); err == nil || !strings.Contains(err.Error(), "no cosign signature") || pinned() != first {
		t.Errorf("update to an unsigned digest: %v, pin %s\n%s", err, pinned(), out)
	}
	key.Sign(t, ref, unsigned)
	if out, err = runPlugin(t, "update", "--config", cfg, "remote"); err != nil || !strings.Contains(out, "pin moved: "+first+" -> "+unsigned) || pinned() != unsigned {
		t.Errorf("update: %v, pin %s\n%s", err, pinned(), out)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"pull", "--config", cfg, "--key", key.Pub, ref}, "signer:  key " + key.Pub},
		{[]string{"pull", "--config", cfg, "--allow-unsigned", ref}, "signer:  unsigned"},
		{[]string{"pull", "--config", cfg, ref}, "give one of --key"},
		{[]string{"pull", "--config", cfg, "--key", key.Pub, "--allow-unsigned", ref}, "give one of --key"},
		{[]string{"pull", "--config", cfg, "nosuch"}, "no [plugins.nosuch] table with a source"},
		{[]string{"update", "--config", cfg, "nosuch"}, "no [plugins.nosuch] table with a source"},
	} {
		out, err := runPlugin(t, c.args...)
		if got := out + "\n" + errString(err); !strings.Contains(got, c.want) {
			t.Errorf("plugin %s: want %q in\n%s", strings.Join(c.args, " "), c.want, got)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
