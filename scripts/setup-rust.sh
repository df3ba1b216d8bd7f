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

packages=(
	rustc                    # the compiler (1.63 on Debian 12)
	cargo
	libstd-rust-dev-wasm32   # std for wasm32-wasi (and wasm32-unknown-unknown)
	lld                      # the linker of the wasm targets: rustc's /usr/bin/rust-lld is a link to lld-14, which rustc only suggests
	librust-serde-dev        # the PDK's only dependencies ...
	librust-serde-derive-dev
	librust-serde-json-dev   # ... and what they pull in (itoa, ryu, syn, ...)
)

missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing+=("$p")
	fi
done

if [ ${#missing[@]} -eq 0 ]; then
	echo "setup-rust: ${packages[*]} already installed"
else
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "setup-rust: apt-get not found; install Rust with rustup and 'rustup target add wasm32-wasip1' (pdk/rust/README.md)" >&2
		exit 1
	fi
	sudo=()
	if [ "$(id -u)" -ne 0 ]; then
		if command -v sudo >/dev/null 2>&1; then
			sudo=(sudo)
		else
			echo "setup-rust: need root to install ${missing[*]}" >&2
			exit 1
		fi
	fi
	echo "setup-rust: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	# An update first: a fresh machine may have no package lists, or old ones.
	"${sudo[@]}" apt-get update -qq
	"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Check the result the way the build will use it.
pdk/rust/build-plugin.sh --check
