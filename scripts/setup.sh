#!/usr/bin/env bash
# Installs what the tests need on a fresh machine. Safe to run again: it
# only installs what is missing: Go modules (the Go of go.mod's go line
# must be there) and the TypeScript SDK client of the interop tests.
set -euo pipefail
cd "$(dirname "$0")/.."

need_go=$(sed -n 's/^go \([0-9.]*\)$/\1/p' go.mod) # the server's minimum; plugins need only 1.24 (pdk/go/go.mod)
if ! command -v go >/dev/null 2>&1; then
  echo "setup: Go is not installed; install Go >= $need_go (https://go.dev/dl/)" >&2
  exit 1
fi
have=$(go env GOVERSION | sed 's/^go//')
if [ "$(printf '%s\n%s\n' "$need_go" "$have" | sort -V | head -1)" != "$need_go" ]; then
  echo "setup: Go $have is too old; mcphost needs Go >= $need_go" >&2
  exit 1
fi
go mod download

# The TypeScript SDK clients (v1 and v2) and the Inspector CLI the interop
# tests drive (internal/testrig/e2e/testdata/tsclient), with npm, Debian's when
# there is none (scripts/node.sh). The conformance suite installs its own
# Node 22 the same way (scripts/conformance.sh).
. scripts/apt.sh
. scripts/node.sh
tsclient=internal/testrig/e2e/testdata/tsclient
rc=0
need_npm "the TypeScript SDK interop tests (internal/testrig/e2e/testdata/tsclient)" || rc=$?
if [ "$rc" -eq 0 ]; then
  if [ ! -f "$tsclient/node_modules/@modelcontextprotocol/sdk/package.json" ] ||
    [ ! -f "$tsclient/node_modules/@modelcontextprotocol/client/package.json" ] ||
    [ ! -f "$tsclient/node_modules/@modelcontextprotocol/inspector/package.json" ]; then
    npm install --prefix "$tsclient" --no-package-lock --no-audit --no-fund --loglevel=error
  fi
elif [ -n "${CI:-}" ]; then
  echo "setup: npm is needed in CI (TypeScript SDK interop tests), and it could not be installed" >&2
  exit 1
else
  echo "setup: npm not found: the TypeScript SDK interop tests will be SKIPPED" >&2
fi
