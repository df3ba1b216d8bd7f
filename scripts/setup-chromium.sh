#!/usr/bin/env bash
# Installs Debian's chromium, the headless browser the status page test
# (TestStatusPageInChromium) loads /status in, with scripts and without.
#
# Safe to run again: it installs only when chromium is missing. It needs
# apt-get, and root or sudo. Without apt-get it prints a warning and the
# test is skipped, unless CI is set: then it fails.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/apt.sh

rc=0
apt_install setup-chromium "the status page test (TestStatusPageInChromium)" chromium fonts-dejavu-core || rc=$?
case $rc in
0) echo "setup-chromium: $(chromium --version 2>/dev/null | head -1)" ;;
2)
	if [ -n "${CI:-}" ]; then
		echo "setup-chromium: apt-get not found and CI is set: install chromium, which the status page test needs" >&2
		exit 1
	fi
	echo "setup-chromium: *** SKIP *** apt-get not found: install chromium yourself, or the status page test (TestStatusPageInChromium) is SKIPPED" >&2
	;;
*) exit "$rc" ;;
esac
