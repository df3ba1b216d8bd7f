package pluginhost

import (
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/config"
)

func TestMissingGrantsListsTheConfigLinesToAdd(t *testing.T) {
	m := &abi.Manifest{ABI: abi.Version, Needs: abi.Needs{
		HostFunctions: []string{"notify_progress", "notify_logging_message"},
		Hosts:         []string{"api.example.com"},
		Paths:         []string{"/data"},
		Config:        []string{"token"},
	}}
	granted := config.PluginConfig{HostFunctions: []string{"notify_progress"}}
	got := missingGrants("tools", m, granted)
	for _, want := range []string{
		"[plugins.tools]",
		`host_functions = ["notify_progress", "notify_logging_message"]`,
		`allowed_hosts = ["api.example.com"]`,
		`config = { token = "..." }`,
		"[[plugins.tools.mounts]]",
		`guest = "/data"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	all := config.PluginConfig{
		HostFunctions: m.Needs.HostFunctions, AllowedHosts: m.Needs.Hosts,
		Config: map[string]string{"token": "x"}, Mounts: []config.Mount{{Host: "/srv", Guest: "/data"}},
	}
	if got := missingGrants("tools", m, all); got != "" {
		t.Errorf("everything granted, still missing:\n%s", got)
	}
	if got := missingGrants("legacy", nil, config.PluginConfig{}); got != "" {
		t.Errorf("a plugin without a manifest asks for nothing, got:\n%s", got)
	}
}
