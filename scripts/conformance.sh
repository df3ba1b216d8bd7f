#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
# versions pinned below) against mcphost serving plugins/conformance over
# HTTP, and exits non-zero when any run fails. The runs:
#
#   legacy     0.1.16          --suite all
#   2026       0.2.0-alpha.12  --spec-version 2026-07-28
#   req-2026   0.2.0-alpha.12  --requirements 2026-07-28
#   req-2025   0.2.0-alpha.12  --requirements 2025-11-25
#
#   scripts/conformance.sh                                 # every run
#   scripts/conformance.sh --run 2026 --scenario server-stateless   # one run, arguments passed on
#   scripts/conformance.sh --scenario tools-call-image     # the legacy run, arguments passed on
#
# No run has expected failures: every scenario must pass.
#
# Needs Node.js >= 22 and npm (scripts/node.sh finds or installs them):
# without npm, Debian's is installed (scripts/apt.sh); when `node` is
# older, Node 22 is installed from npm into .cache/node (package
# node-<os>-<arch>); each suite version goes into
# .cache/conformance-<version>. When Node or npm cannot be had, the run is
# SKIPPED (exit 0), except in CI (CI=true), where that is an error.
#
# Environment: CONFORMANCE_PORT (default: a free port),
# CONFORMANCE_START_TIMEOUT (seconds to wait for the server, default 120),
# CONFORMANCE_TOOLCHAIN: go (default) builds plugins/conformance with the
# standard Go toolchain (make conformance-plugin); tinygo or tinygo-none
# builds it with `mcphost build --tinygo` (--scheduler asyncify or none),
# which needs scripts/setup-tinygo.sh, into build/conformance-TOOLCHAIN,
# where the run's logs and results go too.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/apt.sh
. scripts/node.sh

legacy_suite="0.1.16"
modern_suite="0.2.0-alpha.12"
node_major_wanted=22
cache=.cache
toolchain=${CONFORMANCE_TOOLCHAIN:-go}
case $toolchain in
  go) out=build/conformance ;;
  tinygo | tinygo-none) out=build/conformance-$toolchain ;;
  *) echo "conformance: ERROR: CONFORMANCE_TOOLCHAIN=$toolchain: want go, tinygo or tinygo-none" >&2; exit 2 ;;
esac
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

# suite_dir is where suite version $1 is installed.
suite_dir() { echo "$cache/conformance-$1/node_modules/@modelcontextprotocol/conformance"; }

# install_suite installs suite version $1 into .cache/conformance-$1.
install_suite() {
  local version=$1 have
  have=$("$node" -p "require('./$(suite_dir "$version")/package.json').version" 2>/dev/null || true)
  if [ "$have" = "$version" ]; then
    return
  fi
  need_npm "the MCP conformance suite" || missing "npm is missing: it installs @modelcontextprotocol/conformance@$version"
  say "installing @modelcontextprotocol/conformance@$version into $cache/conformance-$version"
  # npm runs on the Node found above (its engines want a recent one).
  PATH="$(cd "$(dirname "$node")" && pwd):$PATH" \
    npm install --prefix "$cache/conformance-$version" --save-exact --no-audit --no-fund --loglevel=error \
    "@modelcontextprotocol/conformance@$version" >&2
}

# The runs to make: every one, or the one --run names (plain arguments
# select the legacy run, as before there were several).
runs=(legacy 2026 req-2026 req-2025)
if [ "${1:-}" = "--run" ]; then
  [ $# -ge 2 ] || { say "ERROR: --run needs a run: ${runs[*]}"; exit 2; }
  case " ${runs[*]} " in
    *" $2 "*) runs=("$2") ;;
    *) say "ERROR: unknown run '$2' (runs: ${runs[*]})"; exit 2 ;;
  esac
  shift 2
elif [ $# -gt 0 ]; then
  runs=(legacy)
fi

need_node "$node_major_wanted" "the MCP conformance suite" || missing "$node_missing"
install_suite "$legacy_suite"
install_suite "$modern_suite"
node=$(cd "$(dirname "$node")" && pwd)/$(basename "$node")
say "node $("$node" --version) ($node), suites $legacy_suite and $modern_suite"

case $toolchain in
  go) make build conformance-plugin ;;
  tinygo) make build && build/mcphost build plugins/conformance --tinygo --scheduler asyncify -o "$out/conformance.wasm" ;;
  tinygo-none) make build && build/mcphost build plugins/conformance --tinygo --scheduler none -o "$out/conformance.wasm" ;;
esac
say "serving plugins/conformance built with $toolchain ($out/conformance.wasm)"

port=${CONFORMANCE_PORT:-$("$node" -e '
const s = require("net").createServer();
s.listen(0, "127.0.0.1", () => { process.stdout.write(String(s.address().port)); s.close(); });')}
url="http://127.0.0.1:$port/mcp"
mkdir -p "$out"
server_log="$out/mcphost.log"

build/mcphost serve --plugins "$out" --config plugins/conformance/mcphost.toml \
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

# run_suite NAME VERSION ARGS... runs one suite against the server, saving
# its checks to build/conformance/results-NAME and its output to
# build/conformance/NAME.log, and lists what failed or warned.
run_suite() {
  local name=$1 version=$2 status=0
  shift 2
  local results="$out/results-$name"
  rm -rf "$results"
  say "run $name: conformance@$version server $*"
  "$node" "$(suite_dir "$version")/dist/index.js" server --url "$url" --output-dir "$results" "$@" \
    2>&1 | tee "$out/$name.log" || status=$?
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
  # The suite exits 0 in --requirements mode whatever failed: its total
  # decides.
  local total failed
  total=$(grep -o 'Total: .*' "$out/$name.log" | tail -1)
  failed=$(printf '%s\n' "$total" | sed -n 's/.*, \([0-9][0-9]*\) failed.*/\1/p')
  if [ -z "$total" ] || [ "${failed:-1}" -ne 0 ]; then
    status=1
  fi
  summary+=("$(printf '%-9s %-15s %s (exit %d)' "$name" "$version" "$total" "$status")")
  return "$status"
}

status=0
summary=()
for run in "${runs[@]}"; do
  case $run in
    legacy) run_suite legacy "$legacy_suite" --suite all "$@" || status=1 ;;
    2026) run_suite 2026 "$modern_suite" --spec-version 2026-07-28 "$@" || status=1 ;;
    req-2026) run_suite req-2026 "$modern_suite" --requirements 2026-07-28 "$@" || status=1 ;;
    req-2025) run_suite req-2025 "$modern_suite" --requirements 2025-11-25 "$@" || status=1 ;;
  esac
done

say "summary:"
printf '  %s\n' "${summary[@]}" >&2
stop_server
if [ "$status" -eq 0 ]; then
  say "PASSED"
else
  say "FAILED; server log: $server_log"
fi
exit "$status"
