#!/usr/bin/env bash
# Installs docker-registry, Debian's package of the CNCF distribution
# registry (2.8), which the OCI plugin tests (package internal/ociplugin and
# the e2e tests of oci:// sources) start on a loopback port with a
# temporary storage folder.
#
# Safe to run again: it installs only when the registry is missing. It
# needs apt-get, and root or sudo. Without apt-get it prints a warning and
# the tests are skipped, unless CI is set: then it fails.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/apt.sh

rc=0
installed=$(command -v docker-registry || true)
apt_install setup-registry "the OCI plugin tests, which start their own registry" docker-registry || rc=$?
case $rc in
0)
	# The package's service is not wanted: the tests start their own registry.
	if [ -z "$installed" ] && command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet docker-registry 2>/dev/null; then
		sudo=()
		[ "$(id -u)" -ne 0 ] && sudo=(sudo)
		"${sudo[@]}" systemctl disable --now docker-registry >/dev/null 2>&1 || true
	fi
	echo "setup-registry: $(docker-registry --version 2>/dev/null | head -1)"
	;;
2)
	if [ -n "${CI:-}" ]; then
		echo "setup-registry: apt-get not found and CI is set: install docker-registry (the CNCF distribution registry), which the OCI plugin tests need" >&2
		exit 1
	fi
	echo "setup-registry: *** SKIP *** apt-get not found: install docker-registry yourself, or the OCI registry tests are SKIPPED" >&2
	;;
*) exit "$rc" ;;
esac
