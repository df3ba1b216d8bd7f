package config

import (
	"strings"
	"testing"
)

func TestEnvironmentVariablesExpandInStrings(t *testing.T) {
	t.Setenv("MCPHOST_T_HOST", "api.example.com")
	t.Setenv("MCPHOST_T_EMPTY", "")
	t.Setenv("MCPHOST_T_DIR", "/srv/data")
	cfg := load(t, `
[server]
name = "${MCPHOST_T_UNSET:-fallback}-${MCPHOST_T_EMPTY:-x}"
title = "costs $${PRICE} and $HOME stays"
[plugins.weather]
allowed_hosts = ["${MCPHOST_T_HOST}"]
config = { region = "${MCPHOST_T_UNSET:-}" }
[[plugins.weather.mounts]]
host = "${MCPHOST_T_DIR}"
guest = "/data"
`)
	if cfg.Server.Name != "fallback-x" {
		t.Errorf("server.name = %q, want the defaults fallback-x", cfg.Server.Name)
	}
	if cfg.Server.Title != "costs ${PRICE} and $HOME stays" {
		t.Errorf("server.title = %q: $${ is a literal ${ and $NAME is not expanded", cfg.Server.Title)
	}
	w := cfg.Plugin("weather")
	if len(w.AllowedHosts) != 1 || w.AllowedHosts[0] != "api.example.com" || w.Config["region"] != "" ||
		len(w.Mounts) != 1 || w.Mounts[0].Host != "/srv/data" {
		t.Errorf("weather = %+v %+v %+v", w.AllowedHosts, w.Config, w.Mounts)
	}
}

func TestAnUnsetVariableIsAnErrorNamingFileLineAndVariable(t *testing.T) {
	t.Setenv("MCPHOST_T_EMPTY", "")
	t.Setenv("MCPHOST_T_SECRET", "s3cr3t-value")
	path, errs := loadErrors(t, `[server]
name = "${MCPHOST_T_UNSET}"

[plugins.a]
config = { key = "${MCPHOST_T_EMPTY}", other = "${bad name}" }
prefix = "${MCPHOST_T_SECRET}${MCPHOST_T_UNSET2}"
`)
	want := []string{
		path + `:2: server.name: environment variable MCPHOST_T_UNSET is unset or empty and has no default (write ${MCPHOST_T_UNSET:-default} for one)`,
		path + `:5: plugins.a.config.key: environment variable MCPHOST_T_EMPTY is unset or empty`,
		path + `:5: plugins.a.config.other: "${" starts no reference`,
		path + `:6: plugins.a.prefix: environment variable MCPHOST_T_UNSET2 is unset or empty`,
	}
	if len(errs) != len(want) {
		t.Fatalf("errors: %v, want %d", errs, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(errs[i].Error(), w) {
			t.Errorf("error %d: %q, want it to start %q", i, errs[i].Error(), w)
		}
		if strings.Contains(errs[i].Error(), "s3cr3t") {
			t.Errorf("error %d shows a variable's value: %q", i, errs[i].Error())
		}
	}
}

func TestSecretsAreNotExpandedInline(t *testing.T) {
	t.Setenv("MCPHOST_T_KEY", "s3cr3t-value")
	_, errs := loadErrors(t, "[plugins.a]\nsecrets = { key = \"${MCPHOST_T_KEY}\" }\n")
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `env:MCPHOST_T_KEY`) || strings.Contains(errs[0].Error(), "s3cr3t") {
		t.Errorf("a secret written as ${VAR}: %v, want one error pointing to env:MCPHOST_T_KEY without the value", errs)
	}
}
