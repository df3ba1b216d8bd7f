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

apt_tool setup-chromium "the status page test (TestStatusPageInChromium)" "chromium --version" chromium fonts-dejavu-core
