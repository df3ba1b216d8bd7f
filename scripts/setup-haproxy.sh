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

apt_tool setup-haproxy "the trusted-proxy test (TestPerClientLimitsBehindHAProxy)" "haproxy -v" haproxy
