#!/usr/bin/env bash
# Builds an mcphost plugin written in Rust (a cdylib crate using
# mcphost-pdk) into a .wasm file, or runs a crate's native tests.
#
#   pdk/rust/build-plugin.sh [--skip-missing] CRATE_DIR OUT.wasm   release build for WASI
#   pdk/rust/build-plugin.sh --test CRATE_DIR                      cargo test, natively
#   pdk/rust/build-plugin.sh --check                               which toolchain would be used
#
# The crate embeds its own manifest (mcphost_pdk::manifest!), so nothing is
# appended to the module afterwards.
#
# Toolchains, in this order (MCPHOST_RUST=debian or MCPHOST_RUST=path
# forces one):
#   debian  Debian's rustc (/usr/bin/rustc, 1.63+) with libstd-rust-dev-wasm32
#           (target wasm32-wasi) and the crates Debian packages in
#           /usr/share/cargo/registry, offline (pdk/rust/debian-offline.toml).
#           scripts/setup-rust.sh installs it.
#   path    the cargo and rustc on PATH (rustup) with target wasm32-wasip1
#           (or the older wasm32-wasi) installed, crates from crates.io.
#
# When no toolchain is found it exits with status 2; with --skip-missing
# it warns and exits 0 instead, unless CI is set (a CI run must build it).
# Build outputs go to $CARGO_TARGET_DIR, by default build/rust-target at the
# repository root, so that repeated builds are incremental.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/build/rust-target}

mode=build
skip_missing=
case "${1:-}" in
--check) mode="check"; shift ;;
--test) mode="test"; shift ;;
--skip-missing) skip_missing=1; shift ;;
esac

# have_debian reports whether Debian's Rust for WASI and crates are there.
have_debian() {
	[ -x /usr/bin/rustc ] && [ -d /usr/lib/rustlib/wasm32-wasi/lib ] &&
		[ -x /usr/bin/cargo ] &&
		compgen -G '/usr/share/cargo/registry/serde-1.*' >/dev/null &&
		compgen -G '/usr/share/cargo/registry/serde_json-1.*' >/dev/null &&
		compgen -G '/usr/share/cargo/registry/serde_derive-1.*' >/dev/null
}

# path_target prints the WASI target the rustc on PATH has a standard
# library for, if any.
path_target() {
	command -v cargo >/dev/null 2>&1 && command -v rustc >/dev/null 2>&1 || return 1
	local sysroot
	sysroot=$(rustc --print sysroot 2>/dev/null) || return 1
	for t in wasm32-wasip1 wasm32-wasi; do
		if [ -d "$sysroot/lib/rustlib/$t/lib" ]; then
			echo "$t"
			return 0
		fi
	done
	return 1
}

toolchain=
target=
cargo=(cargo)
choose() {
	local want=${MCPHOST_RUST:-}
	if [ "$want" != path ] && have_debian; then
		toolchain=debian
		target=wasm32-wasi
		export RUSTC=/usr/bin/rustc
		[ -x /usr/bin/rustdoc ] && export RUSTDOC=/usr/bin/rustdoc
		cargo=(/usr/bin/cargo --offline --config "$here/debian-offline.toml")
		return 0
	fi
	if [ "$want" != debian ] && target=$(path_target); then
		toolchain=path
		cargo=(cargo)
		return 0
	fi
	return 1
}

if ! choose; then
	msg="no Rust toolchain for WebAssembly: run scripts/setup-rust.sh (Debian: rustc, cargo, libstd-rust-dev-wasm32, serde crates), or install Rust with rustup and 'rustup target add wasm32-wasip1'"
	if [ "$mode" = build ] && [ -n "$skip_missing" ] && [ -z "${CI:-}" ]; then
		echo "WARNING: skipping the Rust plugin ${1:-}: $msg" >&2
		exit 0
	fi
	echo "build-plugin.sh: $msg" >&2
	exit 2
fi

# Cargo.lock is not kept in the repository (.gitignore): a lock file that a
# newer cargo wrote (format 4) would stop Debian's cargo, so it is dropped
# and resolved again, offline, from Debian's crates.
fresh_lock() {
	if [ "$toolchain" = debian ] && grep -qE '^version = ([4-9]|[1-9][0-9])' "$1/Cargo.lock" 2>/dev/null; then
		echo "build-plugin.sh: removing $1/Cargo.lock (written by a newer cargo)" >&2
		rm -f "$1/Cargo.lock"
	fi
}

case $mode in
check)
	echo "toolchain=$toolchain target=$target rustc=$("${RUSTC:-rustc}" --version)"
	exit 0
	;;
test)
	[ $# -eq 1 ] || { echo "usage: $0 --test CRATE_DIR" >&2; exit 64; }
	fresh_lock "$1"
	cd "$1"
	# A cold build is mostly serde_derive and its parser: skip debug info
	# and incremental state, which only slow a one-off build down.
	export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0} CARGO_PROFILE_DEV_DEBUG=${CARGO_PROFILE_DEV_DEBUG:-0}
	exec "${cargo[@]}" test --quiet
	;;
esac

[ $# -eq 2 ] || { echo "usage: $0 [--skip-missing] CRATE_DIR OUT.wasm" >&2; exit 64; }
crate=$(cd "$1" && pwd)
out=$2
case $out in /*) ;; *) out=$PWD/$out ;; esac

# The library name cargo gives the module: the package name, '-' as '_'.
name=$(sed -n '/^\[package\]/,/^\[/s/^name *= *"\([^"]*\)".*/\1/p' "$crate/Cargo.toml" | head -1)
[ -n "$name" ] || { echo "build-plugin.sh: no package name in $crate/Cargo.toml" >&2; exit 1; }
name=${name//-/_}

fresh_lock "$crate"
(cd "$crate" && "${cargo[@]}" build --release --target "$target")
mkdir -p "$(dirname "$out")"
cp "$CARGO_TARGET_DIR/$target/release/$name.wasm" "$out.tmp"
mv "$out.tmp" "$out"
echo "built $out ($(wc -c <"$out") bytes, $toolchain toolchain, $target)" >&2
