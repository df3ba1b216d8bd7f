// Package config loads mcphost.toml, the mcphost configuration file.
//
// [Load] reads and checks a file; [Default] is the configuration when there
// is none. Every key is optional: a key the file leaves out keeps its
// default. A plugin gets nothing it is not granted here: without a table
// it runs with the [defaults] limits, no host functions, no network, no
// configuration values, no secrets and no files. SECURITY.md at the root
// of the repository is the threat model: what a plugin can and cannot do
// and what every grant and limit allows.
//
// Any string value may hold ${NAME}, the value of the environment variable
// NAME (an error naming the file, line, key and variable when NAME is
// unset or empty), or ${NAME:-default}, its value or default; $${ is a
// literal ${ and $NAME is left as it is. Values are expanded after the file
// is parsed, and errors name variables, never their values. Secrets are
// not expanded: write "env:NAME" in a secrets table.
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
//	egress_ca_file = "corp-ca.pem"  # certificate authorities (PEM) that
//	                       # plugins' HTTPS requests trust besides the
//	                       # system's, e.g. a corporate proxy's; plugins'
//	                       # requests go through the proxy HTTPS_PROXY,
//	                       # HTTP_PROXY and NO_PROXY name, their grants
//	                       # still checked against the URL and the
//	                       # addresses its host resolves to
//	tool_names = "portable"  # exposed tool names: "portable", 1-64 of
//	                       # A-Z a-z 0-9 _ - as the major LLM APIs take
//	                       # them, or "mcp", MCP's 1-128 of A-Z a-z 0-9 _
//	                       # - .; a tool whose name breaks the rule is left
//	                       # out with a warning. When plugins expose the
//	                       # same name, the one whose [plugins.NAME] table
//	                       # comes first keeps it (then plugins without a
//	                       # table, by name); the others' become
//	                       # <plugin>_<name>
//	cache_max_mib = 2048   # the compilation cache's size cap, 1..1048576:
//	                       # once plugins are loaded, serve removes the
//	                       # least recently used entries beyond it (also
//	                       # `mcphost cache prune`; `mcphost cache ls`
//	                       # lists them)
//	page_size = 100        # items per page in list results, 1..1000
//	startup_wait = "500ms" # how long a client's initialize waits, after
//	                       # the server starts, for plugins still loading,
//	                       # > 0 and <= 1h; the server answers at once when all
//	                       # have loaded or failed, and announces those
//	                       # that load later with list_changed
//	memory_budget_mib = 16384  # memory the instances and the compiled code
//	                       # of all plugins may hold together,
//	                       # 64..1048576; each instance reserves its worst
//	                       # case (2 × memory_mib, its tables, and host
//	                       # copies of max_output_bytes; see RATIONALE.md)
//	                       # before it is created, each module's code 8 ×
//	                       # its size; when the budget is spent, idle
//	                       # instances of any plugin are closed, longest
//	                       # idle first, then plugins without a call under
//	                       # way give back their code and instances, least
//	                       # recently used first, then a call waits within
//	                       # its timeout (at once fails when its plugin has
//	                       # max_queue = 0) and fails with "plugin busy:
//	                       # memory_budget_mib = ... is spent"; a plugin
//	                       # one instance and the code of which cannot fit
//	                       # is not loaded; the default is two thirds of a
//	                       # 24 GiB machine: lower it on smaller ones
//	unload_idle_after = "10m"  # how long a plugin may go without calls
//	                       # before the server gives back its compiled
//	                       # code and instances, > 0 and <= 720h, or
//	                       # "never"; its next call compiles it again from
//	                       # the compilation cache (tens of ms; longer
//	                       # without one), and its lists are answered as
//	                       # before meanwhile
//	on_load_error = "fail" # what serve does when a plugin named by a
//	                       # [plugins.NAME] table (not disabled) does not
//	                       # load at start-up, its file broken, refused,
//	                       # over its load_budget or missing from the
//	                       # folder: "fail" exits non-zero with a line per
//	                       # plugin saying why; "skip" (or serve
//	                       # --allow-partial) serves the rest and warns. A
//	                       # plugin that is only in the folder and does not
//	                       # load is a warning either way
//
//	[server.tls]           # serve the HTTP transport over TLS (https)
//	cert = "cert.pem"      # certificate chain, PEM, leaf first; cert and
//	key = "key.pem"        # key go together; read again when they change
//	instructions = ""      # how to use the server, for the client's model:
//	                       # sent with initialize and server/discover
//	request_state_key_file = ""  # keys signing the requestState of
//	                       # 2026-07-28 input_required results, one a
//	                       # line (# comments), each >= 32 bytes, the
//	                       # signing key first, all accepted; mcphost
//	                       # processes sharing the file complete each
//	                       # other's retries; rotate by adding a key on
//	                       # top and removing the old one a TTL later;
//	                       # unset: a random key per process
//	request_state_ttl = "15m"  # how long a requestState is accepted,
//	                       # > 0 and <= 24h
//	task_after = "250ms"   # how long a 2026-07-28 call of a tool that may
//	                       # run as a task (execution.taskSupport, or
//	                       # task_support) runs as a plain request before
//	                       # it becomes a task, for a client that declared
//	                       # the io.modelcontextprotocol/tasks extension;
//	                       # > 0 and <= 1h
//	max_tasks = 1000       # tasks the server holds at once, of all users,
//	                       # 1..1000000; beyond it a task-augmented call
//	                       # fails with "server busy: ... [server] max_tasks"
//	max_tasks_per_user = 100  # tasks one user holds at once, 1..max_tasks:
//	                       # the authenticated subject; without [auth], a
//	                       # legacy session, or every 2026-07-28 request
//	                       # together; beyond it a task-augmented call fails
//	                       # with "too many tasks: ... [server]
//	                       # max_tasks_per_user". A task counts until it
//	                       # ends and its ttl expires
//
//	[defaults]             # limits of every plugin that does not override them
//	memory_mib = 128       # linear memory cap in MiB, 4..4096
//	timeout = "30s"        # bound of one call: a Go duration, > 0 and <= 1h
//	max_output_bytes = 4194304  # size cap of one call's output, 1..1073741824
//	max_instances = 4      # instances of the plugin running at once, 1..64
//	max_queue = 64         # calls waiting for a free instance, 0..10000;
//	                       # a call that finds the queue full fails at once
//	calls_per_second = 0   # client calls into the plugin per second (tool
//	                       # calls, prompt gets, resource reads,
//	                       # completions), a number, 0..100000; 0 = no
//	                       # limit; bursts of max(1, rate); a call beyond it
//	                       # fails at once with "plugin rate limit exceeded";
//	                       # with [state] backend = "redis", the replicas
//	                       # share it (docs/scale-out.md)
//	host_calls_per_second = 1000  # host function calls one plugin call may
//	                       # make per second (bursts of as many), 1..100000;
//	                       # a call beyond it is stopped (a trap)
//	max_module_mib = 20    # size cap of the plugin's file (wasm module or
//	                       # JavaScript source) in MiB, 1..1024; a larger
//	                       # one is refused at load, before it is read, as
//	                       # is one whose code would cost too much to
//	                       # compile for its size (RATIONALE.md, "How is
//	                       # a module's compile cost bounded?")
//	max_list_items = 1000  # tools, prompts, resources and resource
//	                       # templates one plugin may list, each kind
//	                       # counted apart, 1..100000; the rest are left
//	                       # out with a warning; the host reads at most
//	                       # 10000 of each kind
//	load_budget = "5s"     # time to load one plugin once it is compiled:
//	                       # its first instance (start function), its
//	                       # initialisation and all its list exports and
//	                       # their pages, > 0 and <= 1h; a plugin still
//	                       # loading then has failed to load; every later
//	                       # listing of the plugin gets as long
//	breaker_failures = 5   # failures (traps, timeouts, oversized or
//	                       # malformed output) within breaker_window that
//	                       # open the plugin's circuit breaker, 0..1000;
//	                       # 0 = no breaker
//	breaker_window = "30s" # > 0 and <= 1h
//	breaker_backoff = "10s"  # how long the breaker first stays open; it
//	                       # doubles after each failed probe; > 0, <= 24h
//	                       # and <= breaker_max_backoff
//	breaker_max_backoff = "5m"  # cap of the back-off; > 0 and <= 24h
//	wazero_checks = false  # true: wazero's own look at the call's context
//	                       # at every loop head too, a second line behind
//	                       # the sandbox's countdown, at some 30 ns a loop
//	                       # iteration (RATIONALE.md, "When should a plugin
//	                       # have wazero's checks too?")
//
//	[plugins.NAME]         # NAME is the plugin file name without extension:
//	                       # letters, digits, '-' and '_'
//	prefix = "fs_"         # prepended to the plugin's tool, prompt and
//	                       # resource template names; letters, digits,
//	                       # '-', '_' and '.'
//	disabled = false       # true: do not load the plugin
//	isolation = "user"     # whose calls may share an instance (its memory
//	                       # and vars): "shared", "user" (one per
//	                       # authenticated subject) or "session" (one per
//	                       # client session); default "user" with an [auth]
//	                       # mode that authenticates, else "shared"
//	memory_mib = 64        # any [defaults] key overrides the default for
//	timeout = "5s"         # this plugin
//	host_functions = ["notify_logging_message"]
//	                       # host functions the plugin may import (see
//	                       # below); none unless listed
//	allowed_hosts = ["api.example.com", "https://*.example.org", "example.net:8443"]
//	                       # what the plugin may send HTTP requests to;
//	                       # nothing unless listed (see below)
//	allow_private_network = false
//	                       # true: its requests may connect to loopback,
//	                       # private, link-local, CGNAT and other
//	                       # non-public addresses (see below)
//	config = { root = "/data" }
//	                       # values the plugin reads with config_get; strings,
//	                       # numbers and booleans (passed on as text)
//	secrets = { api_key = "env:WEATHER_API_KEY", cert = "file:secrets/cert.pem" }
//	                       # values the plugin reads with config_get too,
//	                       # read when the plugin loads from an environment
//	                       # variable ("env:NAME") or a file ("file:PATH",
//	                       # relative to this file's directory, trailing
//	                       # newlines removed); never written here; a key
//	                       # may not also be in config (see below)
//	sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
//	                       # pins the plugin file (sha256sum PLUGIN.wasm,
//	                       # or the .js file); a file that differs is not
//	                       # loaded; the error gives both digests
//	rename = { "fs.read" = "read_file" }
//	                       # exposed names of tools and prompts, by the
//	                       # plugin's own name, instead of prefix + name;
//	                       # 1-64 of A-Z a-z 0-9 _ - (1-128, '.' too, with
//	                       # tool_names = "mcp")
//	tools = ["search", "fetch_*"]
//	                       # allow-list of the tools the plugin exposes:
//	                       # glob patterns of their names (the plugin's
//	                       # own, without prefix); unset = all, [] = none
//	prompts = ["*"]        # the same for prompts
//	resources = ["docs://*"]
//	                       # the same for resources (their URIs) and
//	                       # resource templates (their URI templates); a
//	                       # read of a URI outside the list is refused
//	skip_tools = ["debug_*"]  # deny-lists of the same form as tools,
//	skip_prompts = ["draft*"] # prompts and resources, applied after them:
//	skip_resources = ["file:///private/*"]  # what matches is not exposed
//	cache_ttl = "0s"       # caching hint of 2026-07-28 (ttlMs) of what the
//	                       # plugin lists and reads: how long a client may
//	                       # reuse it; unset = 0 (stale at once), <= 24h; a
//	                       # list of several plugins takes the shortest
//	cache_scope = "private"  # "private" (one user's) or "public" (any
//	                       # user's: nothing the plugin answers depends on
//	                       # the caller); a list is public only when all
//	                       # its plugins are
//	task_support = { "report" = "optional", "*" = "forbidden" }
//	                       # whether clients may run a tool as an MCP task
//	                       # (2025-11-25 execution.taskSupport): "forbidden",
//	                       # "optional" or "required", by tool name (the
//	                       # plugin's own, without prefix), "*" for the
//	                       # tools not named; overrides what the plugin
//	                       # declares (see below)
//	keyring = [{ service = "github", user = "me", secret = "api_key" }, { service = "vault", user = "ops" }]
//	                       # keyring entries the plugin may read with
//	                       # get_keyring_secret (hyper-mcp's
//	                       # allowed_secrets), each answered with the value
//	                       # of the key of secrets it names or, without
//	                       # secret, of the entry in the OS keyring (the
//	                       # Secret Service on D-Bus, as secret-tool store
//	                       # service S username U writes it; macOS's
//	                       # Keychain, Windows' Credential Manager), read
//	                       # when the plugin loads: an entry missing there
//	                       # fails the load; no other entry is readable
//	audit_arguments = false  # put the arguments of its tool calls in the
//	                       # audit trail ([telemetry] audit), its secrets'
//	                       # values redacted
//	require_scopes = ["notes:read", "team-a"]
//	                       # OAuth scopes a client's token must all hold
//	                       # for the client to see the plugin at all: to a
//	                       # token without them its tools, prompts,
//	                       # resources, templates and completions do not
//	                       # exist (using one is answered as using one
//	                       # nobody offers); needs [auth] mode = "jwt"; not
//	                       # empty; over stdio, which has no token, the
//	                       # plugin is served to nobody (see below); list
//	                       # them in [auth] scopes_supported for clients to
//	                       # learn that they may ask for them
//
//	[[plugins.NAME.oauth2]]  # one table per OAuth2 client whose access
//	                       # tokens the plugin may get (get_access_token)
//	token_url = "https://auth.example.com/oauth/token"
//	                       # the token endpoint; required; with client_id,
//	                       # how the plugin names the client
//	client_id = "mcphost"  # required
//	client_secret = "env:OAUTH_CLIENT_SECRET"
//	                       # "env:NAME" or "file:PATH", as in secrets;
//	                       # unset for a public client; never readable by
//	                       # the plugin, and redacted like secrets (as is
//	                       # each access token the plugin is handed, from
//	                       # its output, errors and logs and the audit
//	                       # trail)
//	device_authorization_url = "https://auth.example.com/oauth/device"
//	                       # set: the device authorization grant, the user
//	                       # sent to approve through a URL elicitation;
//	                       # unset: the client credentials grant
//	scopes = ["read"]      # the scopes the plugin may ask for, and what it
//	                       # gets when it asks for none
//	auth_style = "basic"   # "basic" or "body"; unset: try both, except
//	                       # for the device authorization grant, whose
//	                       # polls would then go twice: "body" for a public
//	                       # client, "basic" for one with a secret
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
//	session_idle_timeout = "5m"  # a session without requests or an open
//	                       # stream for this long ends (its client gets 404
//	                       # and initializes anew); > 0 and <= 24h
//	init_timeout = "10s"   # a session whose client has not sent
//	                       # notifications/initialized this long after its
//	                       # last request ends; > 0 and <= 24h
//	max_sessions = 1000    # open sessions at once, 1..100000
//	max_sessions_per_client = 256  # open sessions of one client,
//	                       # 1..100000: each user (the token's subject) with
//	                       # [auth] mode = "jwt", so that users behind one
//	                       # address (a NAT) have a cap each; else each
//	                       # address, every holder of the static token too
//	                       # (behind a reverse proxy every client has the
//	                       # proxy's address: list the proxy in
//	                       # trusted_proxies)
//	max_body_bytes = 4194304  # size cap of one request body, 1..1073741824
//	max_body_bytes_in_flight = 268435456  # request body bytes being
//	                       # received at once, server-wide; each body is
//	                       # counted whole from its first byte (by its
//	                       # Content-Length, or max_body_bytes when chunked),
//	                       # and one that does not fit gets 503 with
//	                       # Retry-After, unread; >= max_body_bytes,
//	                       # <= 68719476736
//	max_body_bytes_in_flight_per_client = 67108864  # the same, for one
//	                       # client (a user or an address, as for
//	                       # max_sessions_per_client), so that one client
//	                       # cannot spend the whole budget; >=
//	                       # max_body_bytes, <= 68719476736
//	max_connections = 4096  # connections open at once, 1..1000000; one
//	                       # more is answered 503 and closed before it is
//	                       # read; keep it below the open-file limit
//	max_connections_per_client = 512  # connections open at once from one
//	                       # client address, 1..1000000, so that one
//	                       # client's slow or idle connections (slowloris)
//	                       # cannot take them all; by address even with
//	                       # [auth] mode = "jwt", as a connection has no
//	                       # token when it opens: users behind one address
//	                       # share it
//	trusted_proxies = []   # reverse proxies whose X-Forwarded-For is
//	                       # believed: IP addresses or CIDR prefixes, e.g.
//	                       # ["10.0.0.7", "10.1.0.0/16"]; [] = none, the
//	                       # header is ignored. For a request from one of
//	                       # them, the client the *_per_client limits count
//	                       # is the rightmost X-Forwarded-For address that
//	                       # is not a trusted proxy, and the proxy's own
//	                       # connections count against max_connections only.
//	                       # Every client it lets through can claim any
//	                       # address: list only proxies that append the
//	                       # address they got each request from
//	                       # (haproxy's option forwardfor, nginx's
//	                       # $proxy_add_x_forwarded_for). The per-client
//	                       # limits count an IPv6 client by its /64
//	drain_delay = "0s"     # told to stop (SIGTERM), serve fails /readyz
//	                       # and serves on this long before it stops taking
//	                       # requests, for a load balancer's health checks
//	                       # to take it out (docs/scale-out.md); unset: none
//	max_batch_response_bytes = 8388608  # size cap of the reply to a
//	                       # JSON-RPC batch (2025-03-26 sessions, at most
//	                       # 100 messages), 1..1073741824: a response that
//	                       # does not fit is replaced by an error naming
//	                       # this key; stdio sessions keep 8 MiB
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
//	[telemetry]            # what operators watch (docs/observability.md)
//	metrics = "auto"       # /metrics in the Prometheus text format: "auto"
//	                       # serves it on a loopback HTTP listener or on
//	                       # metrics_listen, "on" on any listener, "off"
//	                       # nowhere
//	metrics_listen = ""    # a host:port of its own for /metrics (the only
//	                       # way to scrape a stdio server); default the HTTP
//	                       # transport's listener; one open to the network
//	                       # needs metrics_token_file (or metrics = "on")
//	metrics_token_file = ""  # a file holding the bearer token /metrics
//	                       # requires (relative to the file's directory);
//	                       # default none
//	metrics_item_names = false  # label the operation metric with the tool,
//	                       # prompt and resource a request named: a plugin
//	                       # can invent names without end
//	traces = "off"         # spans: "off", or "otlp" to an OpenTelemetry
//	                       # collector; OTEL_TRACES_EXPORTER and the other
//	                       # standard OTEL_* variables win over these keys
//	otlp_endpoint = ""     # the collector's URL; default
//	                       # http://localhost:4318 (4317 over gRPC)
//	otlp_protocol = "http/protobuf"  # or "grpc"
//	trace_sample_ratio = 1.0  # the share of traces sampled (0 to 1) of
//	                       # requests without a sampled parent
//	audit = "off"          # the audit trail, one JSON record per call and
//	                       # per denial: "off", "stderr" or "file"
//	audit_file = ""        # its file, for audit = "file" (relative to the
//	                       # config file's directory)
//	audit_max_mib = 100    # the file turns over at this size ...
//	audit_max_files = 5    # ... keeping this many older files
//	status_token_file = "" # a file holding the bearer token that opens
//	                       # /status and /status.json (served where
//	                       # /metrics is); without it (or a JWT with
//	                       # status_scope) the page is open only on a
//	                       # loopback listener without [auth]
//	status_scope = "mcphost:operator"  # the JWT scope that opens /status
//
//	[state]                # the state replicas of one HTTP service share
//	                       # (docs/scale-out.md)
//	backend = "memory"     # "memory": this process's own; "redis": the
//	                       # 2025-era sessions in Redis, where any replica
//	                       # serves any session; needs [server]
//	                       # request_state_key_file, the same on every
//	                       # replica, whose keys seal what Redis holds
//	url = ""               # redis: the server, "redis://[user@]host:port[/db]"
//	                       # or "rediss://..." (TLS); no password here
//	password_file = ""     # redis: a file holding the password (relative to
//	                       # the config file's directory) ...
//	password_env = ""      # ... or the environment variable holding it
//	prefix = "mcphost:"    # starts every key, so services sharing a Redis
//	                       # keep apart
//	ca_file = ""           # rediss: the PEM certificates the server's must
//	                       # chain to; default the system's
//	task_lease = "15s"     # redis: how long a replica vouches for the tasks
//	                       # it runs, renewing it every third of it, 3s..10m;
//	                       # a task whose replica stopped renewing (killed,
//	                       # cut off) fails after it, naming the replica,
//	                       # and is never run again elsewhere
//
//	[[endpoints]]          # one table per further MCP endpoint of the
//	                       # HTTP transport, serving only some plugins
//	path = "/mcp/team-a"   # where it serves Streamable HTTP; HTTP+SSE at
//	                       # path + "/sse" (messages at path + "/messages");
//	                       # required; a clean absolute path, not one the
//	                       # server takes (/, /sse, /messages, /readyz, /livez,
//	                       # /healthz, /metrics, /status, /status.json,
//	                       # /.well-known/...) nor another endpoint's;
//	                       # "/mcp" sets what the default endpoint (and its
//	                       # /sse) serves, every plugin otherwise
//	plugins = ["notes", "tools"]  # the plugins it serves, each named by
//	                       # its [plugins.NAME] table (write an empty one
//	                       # for a plugin that needs no settings); required
//
// The host functions are those of abi.HostFunctionNames: create_message,
// create_elicitation, list_roots, request_input (asks several of the first
// three's questions at once), notify_logging_message, notify_progress,
// notify_tool_list_changed, notify_prompt_list_changed,
// notify_resource_list_changed, notify_resource_updated and
// notify_elicitation_complete (also named notify_url_elicitation_completed,
// as in hyper-mcp; granting either name grants both).
//
// A plugin's allowed_hosts entry is "[scheme://]host[:port]". The scheme is
// "http" or "https"; without one, either. The host is a host name
// ("api.example.com"), a wildcard for the subdomains of one
// ("*.example.org"), "*" for any host, an IPv4 address or a bracketed IPv6
// address ("[::1]"). The port is a number (1..65535) or "*" for any; without
// one, the scheme's default port (443 for https, 80 for http): "example.net"
// does not grant example.net:8443. No path, query or user. Only http and
// https requests are ever sent. Every redirect is checked like the first
// request, and a plugin's requests never go through a proxy nor share a
// connection with another plugin's. Each request is bounded by the plugin's
// timeout, and a response body by 16 MiB.
//
// Whatever the host name, the address a request connects to is checked
// when connecting, after name resolution (so DNS cannot smuggle a private
// address past a granted name): loopback (127.0.0.0/8, ::1), private
// (10/8, 172.16/12, 192.168/16, fc00::/7), link-local (169.254/16, where
// cloud metadata services such as 169.254.169.254 live, and fe80::/10;
// fd00:ec2::254 is in fc00::/7), CGNAT (100.64/10), "this network"
// (0/8), multicast, reserved, documentation and benchmarking ranges, and
// IPv6 addresses that embed one of them (IPv4-mapped, NAT64, 6to4), are
// refused unless allow_private_network = true or an allowed_hosts entry
// names that address itself ("10.0.0.5:9000", "[fd00::1]").
//
// A plugin's secrets are read when it loads; a variable that is not set or
// is empty, or a file that cannot be read or is empty, keeps the plugin
// from loading with an error that names the key and the variable or file,
// never the value. Secret values are replaced by "[REDACTED]" wherever they
// appear verbatim in the plugin's output, log lines, stderr and errors, and
// in what the host logs for it. The secrets of one plugin are never given
// to another. mcphost check reads them too, to report the missing ones.
//
// The circuit breaker counts a plugin's failures: traps (crashes, running
// out of memory, exceeding host_calls_per_second, denied network access),
// timeouts, output over max_output_bytes and output that is not valid JSON.
// Errors the plugin returns on purpose, cancelled calls and busy refusals
// are not failures. When breaker_failures of them fall within
// breaker_window, the breaker opens: every call of the plugin fails at
// once with "plugin unavailable: circuit breaker open ..." for
// breaker_backoff. Then the next call runs as a probe (the others still
// fail at once): if it succeeds the breaker closes, if it fails the
// breaker opens again for twice as long, up to breaker_max_backoff. Each
// change is logged with the plugin's name. Listings the host makes itself
// (list_tools and the like) go through the breaker too, but not through
// calls_per_second.
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
// Who sees which plugins: a client sees the plugins of the endpoint it
// uses whose require_scopes its token holds. A plugin hidden from a client
// is absent from its lists and list_changed notifications, and using one
// of its items, or a task it runs, is answered exactly as using an item
// or task nobody has. Names
// and resource URIs are given over every plugin, hidden or not: give a
// plugin that requires scopes a prefix and URIs of its own, so that it
// does not push a visible plugin's names to <plugin>_<name> or take its
// URIs. A session belongs to the endpoint that opened it, and
// its notifications follow the scopes of the token it initialized with.
// Over stdio no request has a token: a plugin with require_scopes is not
// served there (serve warns at start), and the developer commands (call,
// get-prompt, read, complete) act as a client holding the plugin's scopes.
// [[endpoints]] take effect on restart.
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
// A plugin with a source is fetched at start and when its settings change
// into the plugin cache, where manifests and blobs are kept by digest, then
// loaded exactly as NAME.wasm from the folder would be (sha256 pin,
// manifest, grants); a file of its name in the folder is ignored. A tag is
// resolved to a digest once and pinned in mcphost.lock, beside this file;
// while the pin stands, a tag that moved is logged and the pinned digest is
// served; mcphost plugin update NAME moves the pin. Registry credentials
// come from the Docker configuration (~/.docker/config.json, $DOCKER_CONFIG)
// and its credential helpers, never from this file. A registry on a
// loopback address is reached over plain HTTP, every other over HTTPS.
// Each signature verification that passes is recorded in the plugin cache
// with the exact verify policy (its settings and the sha256 of the key or
// trusted root file); when the registry cannot be asked at start, a digest
// recorded under the same policy is served from the cache, with a warning,
// and one verified under another policy (verify changed) is refused until
// the registry answers again. mcphost check and the developer commands
// (call, get-prompt, read, complete) fetch a source as serve does.
//
// Mount host directories are not checked for existence here; the sandbox
// reports missing ones when it loads the plugin, and mcphost check reports
// them too. Two mounts of a plugin may not share a guest path. A plugin
// cannot leave its mounts: a path that climbs out of one with ".." is
// refused, the plugin cannot create symbolic links, and a link the host left in a
// mounted directory is followed only while it resolves inside the mount
// (otherwise EACCES, "permission denied"). A "ro" mount refuses every
// change.
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
//	mcphost.toml:21: plugins.web.secrets.key: must be "env:VARIABLE" or "file:PATH" (the secret itself never goes in this file)
//
// Keys are matched exactly, case included. A syntax error stops the check
// at that error.
package config
