package config

import (
	"testing"

	"github.com/mcphost/mcphost/sandbox"
)

// TestMaxModuleMiB checks max_module_mib: the sandbox's default, set in
// [defaults] and overridden per plugin, handed to the sandbox, and refused
// with its line outside 1..1024.
func TestMaxModuleMiB(t *testing.T) {
	if got := load(t, "").Plugin("p").Limits.Sandbox().MaxModuleMiB; got != sandbox.DefaultMaxModuleMiB {
		t.Errorf("default max_module_mib = %d, want %d", got, sandbox.DefaultMaxModuleMiB)
	}
	cfg := load(t, "[defaults]\nmax_module_mib = 8\n\n[plugins.big]\nmax_module_mib = 1024\n")
	if got := cfg.Plugin("other").Limits.Sandbox().MaxModuleMiB; got != 8 {
		t.Errorf("[defaults] max_module_mib = 8 gives %d", got)
	}
	if got := cfg.Plugin("big").Limits.Sandbox().MaxModuleMiB; got != 1024 {
		t.Errorf("[plugins.big] max_module_mib = 1024 gives %d", got)
	}
	testErrorCases(t, []errorCase{
		{"zero", "[defaults]\nmax_module_mib = 0\n", 2, "defaults.max_module_mib: 0 is less than 1"},
		{"above the bound", "[plugins.p]\nmax_module_mib = 1025\n", 2, "plugins.p.max_module_mib: module size limit 1025 MiB is more than 1024"},
		{"far above", "[defaults]\nmax_module_mib = 9223372036854775807\n", 2,
			"defaults.max_module_mib: module size limit 9223372036854775807 MiB is more than 1024"},
		{"not a number", "[plugins.p]\nmax_module_mib = \"20MiB\"\n", 2, "plugins.p.max_module_mib: expected integer, got string"},
	})
}
