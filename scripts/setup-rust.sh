#!/usr/bin/env bash
# Installs what building the Rust PDK (pdk/rust) and the Rust example
# plugins (plugins/examples/textkit) needs, offline from crates.io: Debian's
# rustc and cargo, the Rust standard library for wasm32-wasi, and the crates
# the PDK uses as Debian packages (in /usr/share/cargo/registry).
#
# Safe to run again: it installs only what is missing. It needs apt-get and
# root (CI runs as root). Elsewhere, install Rust with rustup instead
# (`rustup target add wasm32-wasip1`; see pdk/rust/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/apt.sh

packages=(
	rustc                    # the compiler (1.63 on Debian 12)
	cargo
	libstd-rust-dev-wasm32   # std for wasm32-wasi (and wasm32-unknown-unknown)
	lld                      # the linker of the wasm targets: rustc's /usr/bin/rust-lld is a link to lld-14, which rustc only suggests
	librust-serde-dev        # the PDK's only dependencies ...
	librust-serde-derive-dev
	librust-serde-json-dev   # ... and what they pull in (itoa, ryu, syn, ...)
)

rc=0
apt_install setup-rust "the Rust PDK, the Rust example and the Rust test plugins" "${packages[@]}" || rc=$?
case $rc in
0) ;;
2)
	echo "setup-rust: apt-get not found; install Rust with rustup and 'rustup target add wasm32-wasip1' (pdk/rust/README.md)" >&2
	exit 1
	;;
*) exit "$rc" ;;
esac

# Check the result the way the build will use it.
pdk/rust/build-plugin.sh --check
