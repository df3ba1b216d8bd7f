#!/usr/bin/env bash
# Installs the toolchain that builds the JavaScript engine
# (internal/jsengine/engine.wasm): Debian's clang, lld, wasi-libc and the wasm32
# compiler-rt builtins, plus patch. Safe to run again: it installs only what
# is missing. Needs root (or sudo) to install; CI runs as root. mcphost
# itself does not need any of this: the engine is committed and embedded.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/apt.sh

packages=(clang lld wasi-libc libclang-rt-dev-wasm32 patch)

rc=0
apt_install setup-js "building and checking the embedded JavaScript engine (internal/jsengine)" "${packages[@]}" || rc=$?
case $rc in
0) ;;
2)
  echo "setup-js: apt-get not found; install ${packages[*]} (Debian/Ubuntu package names) by hand" >&2
  exit 1
  ;;
*) exit "$rc" ;;
esac
