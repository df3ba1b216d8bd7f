#!/usr/bin/env bash
# Installs haproxy, the reverse proxy the host package's trusted-proxy test
# (TestPerClientLimitsBehindHAProxy) puts in front of the HTTP transport.
#
# Safe to run again: it installs only when haproxy is missing. It needs
# apt-get, and root or sudo. Without apt-get it prints a warning and the
# test is skipped, unless CI is set: then it fails.
set -euo pipefail

if command -v haproxy >/dev/null 2>&1; then
	echo "setup-haproxy: $(haproxy -v 2>/dev/null | head -1)"
	exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
	if [ -n "${CI:-}" ]; then
		echo "setup-haproxy: apt-get not found and CI is set: install haproxy, which the trusted-proxy test needs" >&2
		exit 1
	fi
	echo "setup-haproxy: *** SKIP *** apt-get not found: install haproxy yourself, or the trusted-proxy test (TestPerClientLimitsBehindHAProxy) is SKIPPED" >&2
	exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		sudo=(sudo)
	else
		echo "setup-haproxy: need root (or sudo) to install haproxy" >&2
		exit 1
	fi
fi
echo "setup-haproxy: installing haproxy"
export DEBIAN_FRONTEND=noninteractive
# An update first: a fresh machine may have no package lists, or old ones.
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends haproxy >/dev/null
haproxy -v | head -1
