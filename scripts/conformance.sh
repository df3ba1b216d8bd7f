#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
# pinned below) against mcphost serving plugins/conformance over HTTP, and
# exits with the suite's status.
#
#   scripts/conformance.sh                            # every server scenario
#   scripts/conformance.sh --scenario tools-call-image
#   scripts/conformance.sh --expected-failures FILE   # a baseline (YAML)
#
# Arguments are handed to `conformance server` after `--suite all`.
#
# Needs Node.js >= 22 and npm. When `node` is older, Node 22 is installed
# from npm into .cache/node (package node-<os>-<arch>); the suite goes into
# .cache/conformance. Nothing is installed globally. Without Node or npm the
# run is SKIPPED (exit 0), except in CI (CI=true), where that is an error.
#
# Environment: CONFORMANCE_PORT (default: a free port),
# CONFORMANCE_START_TIMEOUT (seconds to wait for the server, default 120).
set -euo pipefail
cd "$(dirname "$0")/.."

suite_version="0.1.16"
node_major_wanted=22
cache=.cache
suite_dir="$cache/conformance/node_modules/@modelcontextprotocol/conformance"
out=build/conformance
start_timeout=${CONFORMANCE_START_TIMEOUT:-120}

say() { echo "conformance: $*" >&2; }

in_ci() {
  case "${CI:-}" in
    "" | false | 0) return 1 ;;
    *) return 0 ;;
  esac
}

# missing reports a missing tool: a loud skip on a workstation, an error in CI.
missing() {
  if in_ci; then
    say "ERROR: $* (CI is set, so this is an error)"
    exit 1
  fi
  cat >&2 <<EOF

######################################################################
#  SKIPPED: MCP conformance suite not run.
#  $*
#  Install Node.js >= $node_major_wanted and npm, then run: make conformance
######################################################################

EOF
  exit 0
}

# node_major prints the major version of the node binary $1 (0 if unknown).
node_major() {
  local v
  v=$("$1" --version 2>/dev/null || true)
  v=${v#v}
  v=${v%%.*}
  case "$v" in
    '' | *[!0-9]*) echo 0 ;;
    *) echo "$v" ;;
  esac
}

# find_node sets node to a Node.js >= 22 binary, installing one with npm
# into .cache/node when needed.
find_node() {
  if command -v node >/dev/null 2>&1 && [ "$(node_major node)" -ge "$node_major_wanted" ]; then
    node=$(command -v node)
    return
  fi
  local os arch pkg
  case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    *) missing "no Node.js >= $node_major_wanted, and no npm package of Node for $(uname -s)" ;;
  esac
  case "$(uname -m)" in
    x86_64 | amd64) arch=x64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) missing "no Node.js >= $node_major_wanted, and no npm package of Node for $(uname -m)" ;;
  esac
  pkg="node-$os-$arch"
  node="$cache/node/node_modules/$pkg/bin/node"
  if [ -x "$node" ] && [ "$(node_major "$node")" -ge "$node_major_wanted" ]; then
    return
  fi
  if ! command -v npm >/dev/null 2>&1; then
    missing "Node.js >= $node_major_wanted is missing (found: $(node --version 2>/dev/null || echo none)) and npm is missing too"
  fi
  say "installing Node $node_major_wanted into $cache/node ($pkg)"
  npm install --prefix "$cache/node" --no-audit --no-fund --loglevel=error "$pkg@$node_major_wanted" >&2
  if [ "$(node_major "$node")" -lt "$node_major_wanted" ]; then
    say "ERROR: $node is not Node >= $node_major_wanted after npm install $pkg@$node_major_wanted"
    exit 1
  fi
}

# install_suite installs the pinned suite into .cache/conformance.
install_suite() {
  local have
  have=$("$node" -p "require('./$suite_dir/package.json').version" 2>/dev/null || true)
  if [ "$have" = "$suite_version" ]; then
    return
  fi
  if ! command -v npm >/dev/null 2>&1; then
    missing "npm is missing: it installs @modelcontextprotocol/conformance@$suite_version"
  fi
  say "installing @modelcontextprotocol/conformance@$suite_version into $cache/conformance"
  # npm runs on the Node found above (its engines want a recent one).
  PATH="$(cd "$(dirname "$node")" && pwd):$PATH" \
    npm install --prefix "$cache/conformance" --save-exact --no-audit --no-fund --loglevel=error \
    "@modelcontextprotocol/conformance@$suite_version" >&2
}

find_node
install_suite
node=$(cd "$(dirname "$node")" && pwd)/$(basename "$node")
say "node $("$node" --version) ($node), suite $suite_version"

make build conformance-plugin

port=${CONFORMANCE_PORT:-$("$node" -e '
const s = require("net").createServer();
s.listen(0, "127.0.0.1", () => { process.stdout.write(String(s.address().port)); s.close(); });')}
url="http://127.0.0.1:$port/mcp"
mkdir -p "$out"
server_log="$out/mcphost.log"

build/mcphost serve --plugins build/conformance --config plugins/conformance/mcphost.toml \
  --transport http --listen "127.0.0.1:$port" </dev/null >"$server_log" 2>&1 &
server_pid=$!

stop_server() {
  if kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
}
trap stop_server EXIT

# Wait until the server accepts connections (loading the plugin compiles
# it on the first run, which takes a while).
deadline=$((SECONDS + start_timeout))
until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
  if ! kill -0 "$server_pid" 2>/dev/null; then
    status=0
    wait "$server_pid" || status=$?
    say "ERROR: mcphost exited (status $status) before accepting connections; its log ($server_log):"
    sed 's/^/  | /' "$server_log" >&2
    exit 1
  fi
  if [ "$SECONDS" -ge "$deadline" ]; then
    say "ERROR: mcphost did not accept connections on 127.0.0.1:$port within ${start_timeout}s; its log ($server_log):"
    sed 's/^/  | /' "$server_log" >&2
    exit 1
  fi
  sleep 0.2
done
say "mcphost serves $url (pid $server_pid, log $server_log)"

results="$out/results"
rm -rf "$results"
status=0
"$node" "$suite_dir/dist/index.js" server --url "$url" --suite all --output-dir "$results" "$@" || status=$?

# The suite prints only pass/fail counts per scenario: list what failed or
# warned, from the checks it saved.
"$node" - "$results" <<'EOF' || true
const fs = require("fs"), path = require("path");
const dir = process.argv[2];
let lines = [];
for (const d of fs.existsSync(dir) ? fs.readdirSync(dir).sort() : []) {
  let checks;
  try { checks = JSON.parse(fs.readFileSync(path.join(dir, d, "checks.json"), "utf8")); } catch { continue; }
  for (const c of checks) {
    if (c.status === "FAILURE" || c.status === "WARNING") {
      const scenario = d.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT.*$/, "");
      lines.push(`  ${c.status.padEnd(7)} ${scenario} / ${c.name}: ${c.errorMessage || c.description}`);
    }
  }
}
if (lines.length) console.log("\nFailures and warnings (details in " + dir + "):\n" + lines.join("\n"));
EOF

stop_server
if [ "$status" -eq 0 ]; then
  say "PASSED"
else
  say "FAILED (suite status $status); server log: $server_log"
fi
exit "$status"
