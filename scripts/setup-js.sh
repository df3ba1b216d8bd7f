#!/usr/bin/env bash
# Installs the toolchain that builds the JavaScript engine
# (internal/jsengine/engine.wasm): Debian's clang, lld, wasi-libc and the wasm32
# compiler-rt builtins, plus patch. Safe to run again: it installs only what
# is missing. Needs root (or sudo) to install; CI runs as root. mcphost
# itself does not need any of this: the engine is committed and embedded.
set -euo pipefail

packages=(clang lld wasi-libc libclang-rt-dev-wasm32 patch)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "setup-js: apt-get not found; install ${missing[*]} (Debian/Ubuntu package names) by hand" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo="sudo"
  else
    echo "setup-js: need root to install ${missing[*]}" >&2
    exit 1
  fi
fi
echo "setup-js: installing ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
