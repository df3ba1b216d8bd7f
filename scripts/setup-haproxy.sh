#!/usr/bin/env bash
# Installs haproxy, the reverse proxy the host package's trusted-proxy test
# (TestPerClientLimitsBehindHAProxy) puts in front of the HTTP transport.
#
# Safe to run again: it installs only when haproxy is missing. It needs
# apt-get, and root or sudo. Without apt-get it prints a warning and the
# test is skipped, unless CI is set: then it fails.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/apt.sh

rc=0
apt_install setup-haproxy "the trusted-proxy test (TestPerClientLimitsBehindHAProxy)" haproxy || rc=$?
case $rc in
0) echo "setup-haproxy: $(haproxy -v 2>/dev/null | head -1)" ;;
2)
	if [ -n "${CI:-}" ]; then
		echo "setup-haproxy: apt-get not found and CI is set: install haproxy, which the trusted-proxy test needs" >&2
		exit 1
	fi
	echo "setup-haproxy: *** SKIP *** apt-get not found: install haproxy yourself, or the trusted-proxy test (TestPerClientLimitsBehindHAProxy) is SKIPPED" >&2
	;;
*) exit "$rc" ;;
esac
