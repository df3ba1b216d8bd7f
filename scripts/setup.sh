#!/usr/bin/env bash
# Installs what the tests need on a fresh machine. Safe to run again: it
# only installs what is missing. Today that is Go (>= 1.24, for
# //go:wasmexport) and the module downloads.
set -euo pipefail
cd "$(dirname "$0")/.."

need_go="1.24"
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
