package clienv

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/config"
)

func TestEgressFollowsTheProxyEnvironmentAndTheCAFile(t *testing.T) {
	t.Setenv("HTTPS_PROXY", "http://user:pw@proxy.corp:3128")
	t.Setenv("HTTP_PROXY", "")
	t.Setenv("NO_PROXY", "internal.corp")
	cfg := config.Default()
	e, err := Egress(cfg, nil)
	if err != nil || e.Proxy == nil || e.RootCAs != nil {
		t.Fatalf("Egress: %+v, %v", e, err)
	}
	for target, want := range map[string]string{"https://api.example.com/": "proxy.corp:3128", "https://internal.corp/": ""} {
		u, _ := url.Parse(target)
		got, err := e.Proxy(u)
		if err != nil || (got == nil) != (want == "") || got != nil && got.Host != want {
			t.Errorf("proxy of %s: %v, %v; want %q", target, got, err, want)
		}
	}
	bad := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(bad, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.Server.EgressCAFile = bad
	if _, err := Egress(cfg, nil); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("a CA file without certificates: %v", err)
	}
}
