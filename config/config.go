package config

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Config is a loaded mcphost configuration.
type Config struct {
	// Server holds the [server] table.
	Server ServerConfig
	// Defaults holds the [defaults] table: the limits of every plugin that
	// does not override them.
	Defaults Limits
	// Plugins holds the [plugins.<name>] tables by plugin name, with their
	// limits merged with Defaults as loaded. Use Plugin for the effective
	// settings of any plugin, with or without a table.
	Plugins map[string]PluginConfig
	// Path is the absolute path of the loaded file; "" for Default.
	Path string
}

// ServerConfig holds the [server] table.
type ServerConfig struct {
	// Name is sent to clients as serverInfo.name.
	Name string
	// Title is sent to clients as serverInfo.title.
	Title string
	// CacheDir is the wasm compilation cache directory as configured: ""
	// for the default location, "off" for no persistent cache, otherwise an
	// absolute path. Use Config.CacheDir to resolve it.
	CacheDir string
	// PageSize is the number of items per page in list results.
	PageSize int
}

// Limits are the resource limits of a plugin.
type Limits struct {
	// MemoryMiB caps the plugin's linear memory, in MiB.
	MemoryMiB int
	// Timeout bounds each call into the plugin.
	Timeout time.Duration
	// MaxOutputBytes caps the size of one call's output.
	MaxOutputBytes int
	// MaxInstances is the number of plugin instances that may run at once.
	MaxInstances int
	// MaxQueue is the number of calls that may wait for a free instance;
	// a call that finds the queue full fails at once.
	MaxQueue int
}

// PluginConfig holds the settings of one plugin.
type PluginConfig struct {
	// Name is the plugin name: its file name without extension.
	Name string
	// Prefix is prepended to the plugin's tool, prompt and resource
	// template names.
	Prefix string
	// Disabled keeps the plugin from being loaded.
	Disabled bool
	// Limits are the plugin's resource limits.
	Limits Limits
	// HostFunctions are the granted host functions (names from
	// abi.HostFunctions). A plugin may import no others.
	HostFunctions []string
	// AllowedHosts are the network host patterns the plugin may reach:
	// "api.example.com", "*.example.org", "example.net:8443" or "*".
	AllowedHosts []string
	// Config holds the values the plugin may read with config_get.
	Config map[string]string
	// Mounts are the host directories visible to the plugin.
	Mounts []Mount

	// set records which Limits fields the plugin's table sets; Plugin
	// takes the others from Config.Defaults.
	set limitKeys
}

// Mount makes a host directory visible to a plugin.
type Mount struct {
	// Host is the absolute, cleaned host directory.
	Host string
	// Guest is the absolute, cleaned path the plugin sees it at.
	Guest string
	// ReadOnly forbids the plugin to modify anything under Guest.
	ReadOnly bool
}

// limitKeys is a set of Limits fields, one bit per [defaults] key.
type limitKeys uint8

const (
	setMemoryMiB limitKeys = 1 << iota
	setTimeout
	setMaxOutputBytes
	setMaxInstances
	setMaxQueue
)

// merge returns l with the fields in set taken from over.
func (l Limits) merge(over Limits, set limitKeys) Limits {
	if set&setMemoryMiB != 0 {
		l.MemoryMiB = over.MemoryMiB
	}
	if set&setTimeout != 0 {
		l.Timeout = over.Timeout
	}
	if set&setMaxOutputBytes != 0 {
		l.MaxOutputBytes = over.MaxOutputBytes
	}
	if set&setMaxInstances != 0 {
		l.MaxInstances = over.MaxInstances
	}
	if set&setMaxQueue != 0 {
		l.MaxQueue = over.MaxQueue
	}
	return l
}

// Default returns the configuration used when there is no file.
func Default() *Config {
	return &Config{
		Server: ServerConfig{
			Name:     "mcphost",
			Title:    "mcphost",
			PageSize: 100,
		},
		Defaults: Limits{
			MemoryMiB:      128,
			Timeout:        30 * time.Second,
			MaxOutputBytes: 4 << 20,
			MaxInstances:   4,
			MaxQueue:       64,
		},
		Plugins: map[string]PluginConfig{},
	}
}

// Load reads and validates the configuration file at path. Keys the file
// does not set keep their Default values. When the file cannot be read the
// error wraps the cause (errors.Is(err, fs.ErrNotExist) when it is missing);
// when its content is invalid the error is an Errors listing every problem.
func Load(path string) (*Config, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	cfg, errs := parse(path, filepath.Dir(abs), string(src))
	if len(errs) > 0 {
		return nil, errs
	}
	cfg.Path = abs
	return cfg, nil
}

// Plugin returns the effective settings of the named plugin: Defaults
// merged with its table. A plugin without a table gets Defaults and no
// grants.
func (c *Config) Plugin(name string) PluginConfig {
	p, ok := c.Plugins[name]
	if !ok {
		return PluginConfig{Name: name, Limits: c.Defaults}
	}
	p.Name = name
	p.Limits = c.Defaults.merge(p.Limits, p.set)
	p.HostFunctions = slices.Clone(p.HostFunctions)
	p.AllowedHosts = slices.Clone(p.AllowedHosts)
	p.Config = maps.Clone(p.Config)
	p.Mounts = slices.Clone(p.Mounts)
	return p
}

// CacheDir returns the wasm compilation cache directory: "" when caching
// is off, <user cache dir>/mcphost/wazero when none is configured,
// otherwise the configured directory.
func (c *Config) CacheDir() (string, error) {
	switch c.Server.CacheDir {
	case "off":
		return "", nil
	case "":
		base, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("cache directory: %w", err)
		}
		return filepath.Join(base, "mcphost", "wazero"), nil
	}
	return c.Server.CacheDir, nil
}
