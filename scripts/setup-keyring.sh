#!/usr/bin/env bash
# Installs a Secret Service to test get_keyring_secret against: GNOME
# Keyring's daemon, run by the tests on a D-Bus session bus of their own
# (dbus-run-session, from dbus-daemon) with a throwaway home, and
# secret-tool (libsecret-tools), with which they store the entries.
#
# Safe to run again: it installs only what is missing. It needs apt-get,
# and root or sudo. Without apt-get it prints a warning and the OS keyring
# tests are skipped, unless CI is set: then it fails.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/apt.sh

rc=0
apt_install setup-keyring "the OS keyring tests of get_keyring_secret, which start their own Secret Service" \
	dbus-daemon gnome-keyring libsecret-tools || rc=$?
case $rc in
0) echo "setup-keyring: $(gnome-keyring-daemon --version 2>/dev/null | head -1), $(dbus-run-session --version 2>/dev/null | head -1)" ;;
2)
	if [ -n "${CI:-}" ]; then
		echo "setup-keyring: apt-get not found and CI is set: install dbus-daemon, gnome-keyring and libsecret-tools, which the OS keyring tests need" >&2
		exit 1
	fi
	echo "setup-keyring: *** SKIP *** apt-get not found: install dbus-daemon, gnome-keyring and libsecret-tools yourself, or the OS keyring tests are SKIPPED" >&2
	;;
*) exit "$rc" ;;
esac
