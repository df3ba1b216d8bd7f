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

if command -v docker-registry >/dev/null 2>&1; then
	echo "setup-registry: $(docker-registry --version 2>/dev/null | head -1)"
	exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
	if [ -n "${CI:-}" ]; then
		echo "setup-registry: apt-get not found and CI is set: install docker-registry (the CNCF distribution registry), which the OCI plugin tests need" >&2
		exit 1
	fi
	echo "setup-registry: *** SKIP *** apt-get not found: install docker-registry yourself, or the OCI registry tests are SKIPPED" >&2
	exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		sudo=(sudo)
	else
		echo "setup-registry: need root (or sudo) to install docker-registry" >&2
		exit 1
	fi
fi
echo "setup-registry: installing docker-registry"
export DEBIAN_FRONTEND=noninteractive
# An update first: a fresh machine may have no package lists, or old ones.
"${sudo[@]}" apt-get update -qq
# The package's service is not wanted: the tests start their own registry.
"${sudo[@]}" apt-get install -y -qq --no-install-recommends docker-registry >/dev/null
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet docker-registry 2>/dev/null; then
	"${sudo[@]}" systemctl disable --now docker-registry >/dev/null 2>&1 || true
fi
docker-registry --version | head -1
