#!/usr/bin/env bash
# Installs Debian's redis-server (7.0), the shared state backend that the
# scale-out tests start on loopback with a temporary folder
# (internal/testrig/redistest; [state] backend = "redis").
#
# Safe to run again: it installs only when redis-server is missing, and
# stops the service the package starts (the tests start their own). It
# needs apt-get, and root or sudo. Without apt-get it prints a warning and
# the tests are skipped, unless CI is set: then it fails.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/apt.sh

installed=$(command -v redis-server || true)
apt_tool setup-redis "the tests of the Redis state backend" "redis-server --version" redis-server
if [ -z "$installed" ] && command -v redis-server >/dev/null && command -v systemctl >/dev/null 2>&1 &&
	systemctl is-active --quiet redis-server 2>/dev/null; then
	sudo=()
	[ "$(id -u)" -ne 0 ] && sudo=(sudo)
	"${sudo[@]}" systemctl disable --now redis-server >/dev/null 2>&1 || true
fi
