package clienv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigIsFoundWhateverTheWorkingDirectory: the config is --config,
// then $MCPHOST_CONFIG, then mcphost.toml in the plugins folder, then in
// the user's config directory; a mcphost.toml in the working directory is
// not read (a desktop client starts serve from anywhere).
func TestConfigIsFoundWhateverTheWorkingDirectory(t *testing.T) {
	dir := t.TempDir()
	write := func(path string) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("[server]\nname = \""+filepath.Base(filepath.Dir(path))+"\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	flag := write(filepath.Join(dir, "flag", "mine.toml"))
	env := write(filepath.Join(dir, "env", "mcphost.toml"))
	plugins := filepath.Join(dir, "plugins")
	inPlugins := write(filepath.Join(plugins, ConfigFile))
	userDir := filepath.Join(dir, "xdg")
	inUser := write(filepath.Join(userDir, "mcphost", ConfigFile))
	t.Chdir(dir)
	write(filepath.Join(dir, "cwd", ConfigFile))
	t.Chdir(filepath.Join(dir, "cwd"))
	t.Setenv("XDG_CONFIG_HOME", userDir)

	t.Setenv(ConfigEnv, env)
	for _, c := range []struct {
		name, flag, plugins, env, want string
	}{
		{"--config first", flag, plugins, env, flag},
		{"then " + ConfigEnv, "", plugins, env, env},
		{"then the plugins folder", "", plugins, "", inPlugins},
		{"then the user's config directory", "", filepath.Join(dir, "empty"), "", inUser},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(ConfigEnv, c.env)
			got, err := FindConfig(c.flag, c.plugins)
			if err != nil || got != c.want {
				t.Errorf("FindConfig = %q, %v; want %q", got, err, c.want)
			}
			cfg, err := LoadConfig(c.flag, c.plugins)
			if err != nil || cfg.Path != c.want {
				t.Errorf("LoadConfig read %q, %v; want %q", cfg.Path, err, c.want)
			}
		})
	}
	t.Run("else the built-in defaults", func(t *testing.T) {
		t.Setenv(ConfigEnv, "")
		t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "none"))
		if got, err := FindConfig("", filepath.Join(dir, "empty")); err != nil || got != "" {
			t.Errorf("FindConfig = %q, %v; want none (the working directory's file is not read)", got, err)
		}
	})
	t.Run("a missing file named by the environment is an error", func(t *testing.T) {
		t.Setenv(ConfigEnv, filepath.Join(dir, "nope.toml"))
		if _, err := LoadConfig("", plugins); err == nil || !strings.Contains(err.Error(), "nope.toml") || !strings.Contains(err.Error(), ConfigEnv) {
			t.Errorf("LoadConfig with %s naming a missing file: %v", ConfigEnv, err)
		}
	})
}
