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
//	task_support = { "report" = "optional", "*" = "forbidden" }
//	                       # whether clients may run a tool as an MCP task
//	                       # (2025-11-25 execution.taskSupport): "forbidden",
//	                       # "optional" or "required", by tool name (the
//	                       # plugin's own, without prefix), "*" for the
//	                       # tools not named; overrides what the plugin
//	                       # declares (see below)
//
//	[[plugins.NAME.mounts]]  # one table per host directory the plugin sees
//	host = "./docs"        # host directory; required; relative paths are
//	                       # resolved against the file's directory
//	guest = "/data"        # where the plugin sees it; required; absolute
//	mode = "ro"            # "ro" (read-only, the default) or "rw"
//
//	[http]                 # the HTTP transport (serve --transport http)
//	listen = "127.0.0.1:8080"  # host:port; --listen overrides it; port 0
//	                       # picks a free port, an empty host or 0.0.0.0
//	                       # listens on every interface
//	allowed_hosts = []     # accepted Host headers: "host" (any port) or
//	                       # "host:port", IPv6 in brackets; no wildcards;
//	                       # [] = localhost, 127.0.0.1 and [::1] with the
//	                       # listen port
//	allowed_origins = []   # accepted Origin headers, each exactly
//	                       # "http(s)://host" or "http(s)://host:port";
//	                       # [] = http and https origins of the allowed hosts
//	session_idle_timeout = "30m"  # a session without requests for this
//	                       # long ends; > 0 and <= 24h
//	max_sessions = 1000    # open sessions at once, 1..100000
//	max_body_bytes = 4194304  # size cap of one request body, 1..1073741824
//
//	[auth]                 # authorization on the HTTP transport
//	mode = "none"          # "none", "bearer" (one static token) or "jwt"
//	                       # (OAuth access tokens); see below for unset
//	resource = "https://mcp.example.com/mcp"
//	                       # canonical URI of the MCP endpoint (RFC 8707),
//	                       # as clients reach it; default http://<listen>/mcp
//	                       # (localhost for an unspecified host); required
//	                       # with "jwt"
//	token_env = "MCPHOST_TOKEN"  # bearer: the environment variable holding
//	                       # the token...
//	token_file = "token.txt"  # ...or the file holding it (relative paths
//	                       # are resolved against the file's directory);
//	                       # exactly one of the two
//	issuer = "https://auth.example.com"  # jwt: the expected iss claim, and
//	                       # the authorization server advertised; required
//	jwks_url = "https://auth.example.com/jwks"  # jwt: the issuer's signing
//	                       # keys (a JWK set); required
//	audience = ""          # jwt: a value the aud claim must hold; default
//	                       # resource
//	scopes = ["mcp"]       # jwt: scopes every request's token needs;
//	                       # default none
//	scopes_supported = []  # jwt: scopes advertised in the protected
//	                       # resource metadata; [] = scopes
//
// The host functions are those of abi.HostFunctions: create_message,
// create_elicitation, list_roots, notify_logging_message, notify_progress,
// notify_tool_list_changed, notify_prompt_list_changed,
// notify_resource_list_changed, notify_resource_updated and
// notify_elicitation_complete (also named notify_url_elicitation_completed,
// as in hyper-mcp; granting either name grants both).
//
// A plugin's allowed_hosts pattern is a host name ("api.example.com"), a wildcard
// for the subdomains of one ("*.example.org"), "*" for any host, an IPv4
// address or a bracketed IPv6 address ("[::1]"), each optionally followed
// by ":port" (1..65535). It is a host, not a URL: no scheme, path or user.
//
// Authorization is off by default, which is safe only on loopback:
// [Config.CheckExposure] refuses to serve HTTP on any other address while
// [auth] mode is unset. Writing mode = "none" serves without authentication
// on purpose. With mode "bearer" or "jwt", the keys of the other mode are
// errors, as are the keys of either when mode is unset (a forgotten mode
// would otherwise leave the server open); under an explicit "none" they are
// ignored, so that one line turns authentication off.
//
// The bearer token never comes from this file: it is read from the named
// environment variable or file when serving starts, with surrounding
// whitespace removed, and must be at least 16 characters of letters, digits,
// "-._~+/" and trailing "=" (e.g. openssl rand -hex 32). The URLs resource, issuer and jwks_url must be
// absolute https URLs, or http for localhost and loopback addresses, with
// no user info or fragment; resource and issuer take no query either. Scopes
// are OAuth scope tokens: printable ASCII without spaces, '"' or '\'.
//
// Host and origin matching ignores case; the host/ transport applies the
// defaults of empty allowed_hosts and allowed_origins. The defaults of
// resource and audience derive from listen and follow it when --listen
// overrides it ([Config.SetListen]), unless the file sets them.
//
// A tool's task support is the task_support entry naming it, else the "*"
// entry, else the plugin's own execution.taskSupport, else "forbidden".
// Tasks exist for 2025-11-25 clients only: older ones call every tool
// directly. A task is bound to the session that created it, or, when [auth]
// authenticates requests, to the authenticated subject. Its ttl is what the
// client asks for, at most 1h (10m when it asks for none); the task and its
// result are dropped when the ttl has elapsed (a task still running then is
// cancelled), and when its session ends. A session holds at most 100 tasks
// at once; each task's run is still bounded by the plugin's timeout.
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
