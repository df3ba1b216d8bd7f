#!/usr/bin/env bash
# Builds the mcphost JavaScript engine, internal/jsengine/engine.wasm: QuickJS plus
# the glue in pdk/js/src, for wasm32-wasi, with Debian's clang, lld and
# wasi-libc (scripts/setup-js.sh installs them).
#
#   internal/jsengine/build.sh            rebuild internal/jsengine/engine.wasm
#   internal/jsengine/build.sh --check    rebuild into a temporary file and compare it
#                              with the committed internal/jsengine/engine.wasm
#   internal/jsengine/build.sh -o FILE    write the engine to FILE
#
# Exit status: 0 done (or matching), 1 mismatch or bad source, 3 toolchain
# missing, 4 source unavailable (no npm or no network).
#
# The build is reproducible: pinned source (checked by its SHA-256), fixed
# flags, no timestamps, no build paths in the output (-ffile-prefix-map,
# relative file names, stripped), a deterministic link. The same Debian
# toolchain gives the same bytes. The QuickJS source comes from the npm
# package below (npm pack); set QUICKJS_TGZ to a copy of that tarball to
# build offline.
set -euo pipefail

# ---- Pinned inputs ----
QUICKJS_NPM="qjsc@0.3.0"
QUICKJS_TGZ_SHA256="4a9ed1852b334d842d5dac42d1782817ae26310b448de39532451fd45c9ba0ee"
QUICKJS_DIR="package/deps/quickjs_2021_03_27"
QUICKJS_VERSION="2021-03-27"
QUICKJS_FILES="quickjs.c quickjs.h quickjs-atom.h quickjs-opcode.h libregexp.c libregexp.h
libregexp-opcode.h libunicode.c libunicode.h libunicode-table.h cutils.c cutils.h list.h
libbf.c libbf.h VERSION LICENSE"
# The toolchain the committed engine.wasm was built with (Debian bookworm).
CLANG_VERSION="14.0.6"

here="$(cd "$(dirname "$0")" && pwd)"
src="$(cd "$here/../../pdk/js/src" && pwd)" # guest-side sources: the C glue and the JavaScript prelude
repo="$(cd "$here/../.." && pwd)"
out="$here/engine.wasm"
check=0
while [ $# -gt 0 ]; do
  case "$1" in
    --check) check=1 ;;
    -o) out="$(realpath -m "$2")"; shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "build.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

for tool in clang wasm-ld patch; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "build.sh: $tool not found; run scripts/setup-js.sh (apt-get install clang lld wasi-libc libclang-rt-dev-wasm32 patch)" >&2
    exit 3
  fi
done
sysinc=/usr/include/wasm32-wasi
syslib=/usr/lib/wasm32-wasi
if [ ! -f "$sysinc/stdio.h" ] || [ ! -f "$syslib/libc.a" ]; then
  echo "build.sh: wasi-libc not found in $sysinc and $syslib; run scripts/setup-js.sh" >&2
  exit 3
fi
have_clang="$(clang --version | sed -n 's/.*clang version \([0-9.]*\).*/\1/p' | head -1)"
if [ "$have_clang" != "$CLANG_VERSION" ]; then
  echo "build.sh: warning: clang $have_clang; the committed engine was built with clang $CLANG_VERSION, so the bytes will differ" >&2
fi
resource_dir="$(clang -print-resource-dir)"
builtins="$resource_dir/lib/wasi/libclang_rt.builtins-wasm32.a"
if [ ! -f "$builtins" ]; then
  echo "build.sh: $builtins not found; run scripts/setup-js.sh (libclang-rt-dev-wasm32)" >&2
  exit 3
fi

# ---- Source ----
cache="${JS_ENGINE_CACHE:-$repo/build/js-engine}"
mkdir -p "$cache"
tgz="${QUICKJS_TGZ:-$cache/qjsc-0.3.0.tgz}"
if [ ! -f "$tgz" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "build.sh: npm not found: it fetches the QuickJS source ($QUICKJS_NPM); or set QUICKJS_TGZ" >&2
    exit 4
  fi
  echo "build.sh: fetching $QUICKJS_NPM from npm" >&2
  if ! (cd "$cache" && npm pack "$QUICKJS_NPM" --silent >/dev/null); then
    echo "build.sh: npm pack $QUICKJS_NPM failed" >&2
    exit 4
  fi
fi
sum="$(sha256sum "$tgz" | cut -d' ' -f1)"
if [ "$sum" != "$QUICKJS_TGZ_SHA256" ]; then
  echo "build.sh: $tgz has SHA-256 $sum, want $QUICKJS_TGZ_SHA256" >&2
  exit 1
fi

work="$(mktemp -d "$cache/build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/extract" "$work/src"
# shellcheck disable=SC2086
tar -xzf "$tgz" -C "$work/extract" $(for f in $QUICKJS_FILES; do echo "$QUICKJS_DIR/$f"; done)
for f in $QUICKJS_FILES; do cp "$work/extract/$QUICKJS_DIR/$f" "$work/src/$f"; done
if [ "$(cat "$work/src/VERSION")" != "$QUICKJS_VERSION" ]; then
  echo "build.sh: QuickJS source is version $(cat "$work/src/VERSION"), want $QUICKJS_VERSION" >&2
  exit 1
fi
(cd "$work/src" && patch -s -p1 < "$src/quickjs-wasi.patch")
cp "$src/engine.c" "$src/fround.c" "$work/src/"

# prelude.js as a C array (od is in coreutils).
{
  echo "static const unsigned char prelude_js[] = {"
  od -An -v -tx1 "$src/prelude.js" | sed 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'
  echo "};"
  echo "static const unsigned int prelude_js_len = sizeof(prelude_js);"
} > "$work/src/prelude.h"

# ---- Compile and link ----
# -nostdinc keeps the host's /usr/include out: only wasi-libc's headers.
# The wasm features are those of WebAssembly 2.0, which wazero implements.
CFLAGS=(
  --target=wasm32-wasi -O2 -std=gnu11
  -mbulk-memory -msign-ext -mnontrapping-fptoint -mmutable-globals
  -nostdinc -isystem "$resource_dir/include" -isystem "$sysinc"
  -D_GNU_SOURCE -DCONFIG_VERSION="\"$QUICKJS_VERSION\"" -DCONFIG_BIGNUM
  -fno-ident -ffile-prefix-map="$work/src"=. -ffile-prefix-map="$repo"=.
  -g0 -Wno-everything
)
objs=()
for f in quickjs libregexp libunicode cutils libbf fround engine; do
  (cd "$work/src" && clang "${CFLAGS[@]}" -c "$f.c" -o "$f.o")
  objs+=("$f.o")
done
# A reactor (exports _initialize, no main), 1 MiB of stack placed first so
# that an overflow traps instead of overwriting data, no symbol names.
(cd "$work/src" && clang --target=wasm32-wasi -nostdlib -o engine.wasm \
  "$syslib/crt1-reactor.o" "${objs[@]}" -L"$syslib" -lc "$builtins" \
  -Wl,--strip-all -Wl,--stack-first -Wl,-z,stack-size=1048576 \
  -Wl,--no-entry -Wl,--export=_initialize)

if [ "$check" = 1 ]; then
  if cmp -s "$work/src/engine.wasm" "$here/engine.wasm"; then
    echo "internal/jsengine/engine.wasm matches its source ($(wc -c < "$here/engine.wasm") bytes, sha256 $(sha256sum "$here/engine.wasm" | cut -d' ' -f1))"
    exit 0
  fi
  echo "internal/jsengine/engine.wasm does NOT match a rebuild from its source:" >&2
  echo "  committed: $(wc -c < "$here/engine.wasm" 2>/dev/null || echo missing) bytes, sha256 $(sha256sum "$here/engine.wasm" 2>/dev/null | cut -d' ' -f1)" >&2
  echo "  rebuilt:   $(wc -c < "$work/src/engine.wasm") bytes, sha256 $(sha256sum "$work/src/engine.wasm" | cut -d' ' -f1)" >&2
  echo "  toolchain: clang $have_clang (the committed engine was built with clang $CLANG_VERSION)" >&2
  echo "  run internal/jsengine/build.sh (make js-engine) and commit internal/jsengine/engine.wasm" >&2
  exit 1
fi
cp "$work/src/engine.wasm" "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out ($(wc -c < "$out") bytes, sha256 $(sha256sum "$out" | cut -d' ' -f1))"
