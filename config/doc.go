// Package config loads mcphost.toml, the mcphost configuration file.
//
// [Load] reads and checks a file; [Default] is the configuration when there
// is none. Every key is optional: a key the file leaves out keeps its
// default. A plugin gets nothing it is not granted here: without a table
// it runs with the [defaults] limits, no host functions, no network, no
// configuration values and no files.
//
// # Reference
//
//	[server]
//	name = "mcphost"       # serverInfo.name sent to clients; not empty
//	title = "mcphost"      # serverInfo.title sent to clients
//	cache_dir = ""         # wasm compilation cache directory:
//	                       #   ""    = <user cache dir>/mcphost/wazero
//	                       #   "off" = no persistent cache
//	                       #   other = this directory (relative paths are
//	                       #           resolved against the file's directory)
//	page_size = 100        # items per page in list results, 1..1000
//
//	[defaults]             # limits of every plugin that does not override them
//	memory_mib = 128       # linear memory cap in MiB, 1..4096
//	timeout = "30s"        # bound of one call: a Go duration, > 0 and <= 1h
//	max_output_bytes = 4194304  # size cap of one call's output, 1..1073741824
//	max_instances = 4      # instances of the plugin running at once, 1..64
//	max_queue = 64         # calls waiting for a free instance, 0..10000;
//	                       # a call that finds the queue full fails at once
//
//	[plugins.NAME]         # NAME is the plugin file name without extension:
//	                       # letters, digits, '-' and '_'
//	prefix = "fs_"         # prepended to the plugin's tool, prompt and
//	                       # resource template names; letters, digits,
//	                       # '-', '_' and '.'
//	disabled = false       # true: do not load the plugin
//	memory_mib = 64        # any [defaults] key overrides the default for
//	timeout = "5s"         # this plugin
//	host_functions = ["notify_logging_message"]
//	                       # host functions the plugin may import (see
//	                       # below); none unless listed
//	allowed_hosts = ["api.example.com", "*.example.org", "example.net:8443"]
//	                       # network hosts the plugin may reach; none unless
//	                       # listed (see below)
//	config = { root = "/data" }
//	                       # values the plugin reads with config_get; strings,
//	                       # numbers and booleans (passed on as text)
//
//	[[plugins.NAME.mounts]]  # one table per host directory the plugin sees
//	host = "./docs"        # host directory; required; relative paths are
//	                       # resolved against the file's directory
//	guest = "/data"        # where the plugin sees it; required; absolute
//	mode = "ro"            # "ro" (read-only, the default) or "rw"
//
// The host functions are those of abi.HostFunctions: create_message,
// create_elicitation, list_roots, notify_logging_message, notify_progress,
// notify_tool_list_changed, notify_prompt_list_changed,
// notify_resource_list_changed and notify_resource_updated.
//
// An allowed_hosts pattern is a host name ("api.example.com"), a wildcard
// for the subdomains of one ("*.example.org"), "*" for any host, an IPv4
// address or a bracketed IPv6 address ("[::1]"), each optionally followed
// by ":port" (1..65535). It is a host, not a URL: no scheme, path or user.
//
// Mount host directories are not checked for existence here; the sandbox
// reports missing ones when it loads the plugin. Two mounts of a plugin may
// not share a guest path.
//
// # Errors
//
// Load checks the whole file and returns every problem it finds as
// [Errors], one [Error] per problem in line order, each formatted
// "file:line: message" and naming the key:
//
//	mcphost.toml:7: expected value but found '\n' instead
//	mcphost.toml:12: unknown key "plugins.files.memroy_mib" (did you mean "memory_mib"?)
//	mcphost.toml:13: plugins.files.timeout: bad duration "5 s": use a Go duration such as "30s", "1m30s" or "500ms"
//	mcphost.toml:19: plugins.files.mounts[0].guest: "data" is not absolute; guest paths start with "/"
//
// Keys are matched exactly, case included. A syntax error stops the check
// at that error.
package config
