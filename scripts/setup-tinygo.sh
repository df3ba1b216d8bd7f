#!/usr/bin/env bash
# Installs TinyGo 0.41.0, which builds Go plugins into small modules
# (mcphost build --tinygo, mcphost new NAME --lang tinygo), from sources
# and packages the project can reach: TinyGo's Go module from the Go module
# proxy, built against Debian's LLVM 19, linking Debian's wasi-libc and
# compiler-rt builtins instead of the C libraries TinyGo's releases bundle.
#
#   1. apt-get install llvm-19-dev libclang-19-dev lld-19 clang-19 wasi-libc
#      libclang-rt-19-dev-wasm32 binaryen
#   2. go mod download github.com/tinygo-org/tinygo@v0.41.0, copied (made
#      writable) to TINYGOROOT = ${XDG_CACHE_HOME:-~/.cache}/mcphost/tinygo-0.41.0,
#      the folder mcphost build looks in; an empty src/net (the tinygo-org/net
#      submodule is not in the module: plugins cannot import net)
#   3. TINYGOROOT/targets/wasip1.json replaced by internal/tinygo/wasip1.json:
#      TinyGo's own, but linking /usr/lib/wasm32-wasi/libc.a and Debian's
#      libclang_rt.builtins-wasm32.a, with 256 KiB goroutine and system stacks
#   4. CGO_ENABLED=1 go build -tags llvm19 -o TINYGOROOT/bin/tinygo (about
#      half a minute on 2 cores)
#   5. internal/tinygo/runtime.patch applied to TINYGOROOT/src/runtime: a
#      collector that skips non-heap words and an object's pointers into
#      itself without a call, and rebuilds its free list a state byte at a
#      time (RATIONALE.md, "Why does the project's TinyGo carry a patch?");
#      plugins compile the runtime from these sources, so nothing is rebuilt
#
# Safe to run again: each step is done only when its result is missing or
# stale (the target file and the patch are compared with the repository's). Installing the
# packages needs root (or sudo); CI runs as root. Prints the TINYGOROOT it
# leaves on the last line, "TINYGOROOT=...".
#
# Environment: MCPHOST_TINYGO_ROOT overrides where TinyGo goes.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/apt.sh

version=0.41.0
root=${MCPHOST_TINYGO_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/mcphost/tinygo-$version}
target=internal/tinygo/wasip1.json
patch=internal/tinygo/runtime.patch

say() { echo "setup-tinygo: $*" >&2; }

packages=(
	llvm-19-dev                # LLVM, which TinyGo's compiler links (-tags llvm19)
	libclang-19-dev            # clang's libraries, for cgo and C files
	lld-19                     # wasm-ld
	clang-19
	wasi-libc                  # the C library for wasm32-wasi, linked instead of TinyGo's
	libclang-rt-19-dev-wasm32  # compiler-rt builtins for wasm32, instead of TinyGo's rtlib
	binaryen                   # wasm-opt, which TinyGo runs on wasm output
)

rc=0
apt_install setup-tinygo "building Go plugins with TinyGo (mcphost build --tinygo, the TinyGo tests)" "${packages[@]}" || rc=$?
case $rc in
0) ;;
2)
	say "apt-get not found; install ${packages[*]} (Debian package names), or TinyGo $version from https://tinygo.org"
	exit 1
	;;
*) exit "$rc" ;;
esac

# module_dir prints the folder of TinyGo's module in the Go module cache,
# downloading it if needed.
module_dir() {
	local dir
	dir=$(go mod download -json "github.com/tinygo-org/tinygo@v$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
	if [ -z "$dir" ] || [ ! -d "$dir" ]; then
		say "go mod download gave no folder for github.com/tinygo-org/tinygo@v$version"
		exit 1
	fi
	echo "$dir"
}

# built reports whether root holds a working TinyGo of this version.
built() {
	[ -x "$root/bin/tinygo" ] &&
		TINYGOROOT=$root "$root/bin/tinygo" version 2>/dev/null | grep -q "tinygo version $version "
}

if built; then
	say "TinyGo $version already built in $root"
else
	say "downloading TinyGo $version (Go module github.com/tinygo-org/tinygo@v$version)"
	src=$(module_dir)
	rm -rf "$root.tmp"
	mkdir -p "$(dirname "$root")"
	cp -R "$src" "$root.tmp"
	chmod -R u+w "$root.tmp"
	mkdir -p "$root.tmp/src/net"
	say "building TinyGo $version in $root (go build -tags llvm19, about 30 s)"
	start=$SECONDS
	(cd "$root.tmp" && CGO_ENABLED=1 go build -tags llvm19 -o bin/tinygo .)
	rm -rf "$root"
	mv "$root.tmp" "$root"
	say "built $root/bin/tinygo in $((SECONDS - start)) s: binary $(du -sh "$root/bin/tinygo" | cut -f1), TINYGOROOT $(du -sh "$root" | cut -f1)"
fi

if ! cmp -s "$target" "$root/targets/wasip1.json"; then
	say "installing $target as $root/targets/wasip1.json"
	cp "$target" "$root/targets/wasip1.json"
fi

# The patch is applied to the module's own files, copied again, so that a
# changed patch replaces the old one; the copy applied is kept beside them.
if ! cmp -s "$patch" "$root/.mcphost-runtime.patch"; then
	say "patching TinyGo's collector with $patch"
	src=$(module_dir)
	for f in $(sed -n 's|^+++ b/||p' "$patch"); do
		rm -f "$root/$f"
		if [ -f "$src/$f" ]; then # else a file the patch adds
			cp "$src/$f" "$root/$f"
			chmod u+w "$root/$f"
		fi
	done
	# git apply works as patch(1) outside a repository; the ceiling keeps
	# it from finding one above root.
	(cd "$root" && GIT_CEILING_DIRECTORIES=$(dirname "$root") git apply -p1 "$OLDPWD/$patch")
	cp "$patch" "$root/.mcphost-runtime.patch"
fi

TINYGOROOT=$root "$root/bin/tinygo" version >&2
echo "TINYGOROOT=$root"
