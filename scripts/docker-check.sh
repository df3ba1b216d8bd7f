#!/usr/bin/env bash
# Builds the Dockerfile without a Docker daemon and checks the image: it
# serves the example plugins over stdio as a user that is not root.
# Optional, not part of make test (it takes minutes and downloads the
# Rust toolchain and the Go modules into the image); run it with
# `make docker-check`.
#
# It uses buildah (Debian's, installed with scripts/apt.sh) with chroot
# isolation and vfs storage, which need no daemon and no overlay mounts.
# When the Dockerfile's base images cannot be pulled (a machine that
# reaches only Debian's and Go's package servers), it builds stand-ins
# and passes them as the Dockerfile's GO_IMAGE and RUNTIME_IMAGE:
#   - for golang:1.26.8-bookworm: Debian bookworm (mmdebstrap, from this
#     machine's apt sources) with make, git, ca-certificates and this
#     machine's Go, which must be go.mod's version;
#   - for distroless static's nonroot: an image with only the CA
#     certificates, /etc/passwd's nonroot (65532) and its home.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/apt.sh

say() { echo "docker-check: $*" >&2; }

rc=0
apt_install docker-check "building the Dockerfile without a daemon (scripts/docker-check.sh)" buildah mmdebstrap || rc=$?
if [ "$rc" -ne 0 ]; then
	say "ERROR: buildah and mmdebstrap are needed (Debian packages)"
	exit 1
fi
export STORAGE_DRIVER=vfs BUILDAH_ISOLATION=chroot

arg() { sed -n "s/^ARG $1=//p" Dockerfile; }
go_image=$(arg GO_IMAGE)
runtime_image=$(arg RUNTIME_IMAGE)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# standin_go builds the stand-in of the Go image, tagged $1.
standin_go() {
	local want have
	want=$(sed -n 's/^go //p' go.mod)
	have=$(go env GOVERSION)
	if [ "go$want" != "$have" ]; then
		say "ERROR: the stand-in of $go_image needs Go $want here, not $have"
		exit 1
	fi
	say "building a stand-in for $go_image: Debian bookworm and $have"
	local sources=() f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] && sources+=("$f")
	done
	mmdebstrap --quiet --variant=minbase --include=make,git,ca-certificates --mode=root \
		bookworm "$work/rootfs.tar" "${sources[@]}"
	cp -a "$(go env GOROOT)" "$work/go"
	# This machine's CA certificates, which may include a TLS proxy's.
	cp /etc/ssl/certs/ca-certificates.crt "$work/"
	cat >"$work/Containerfile" <<-EOF
		FROM scratch
		ADD rootfs.tar /
		COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
		COPY go /usr/local/go
		ENV GOPATH=/go GOTOOLCHAIN=local PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
		WORKDIR /go
	EOF
	buildah bud --quiet -t "$1" -f "$work/Containerfile" "$work" >/dev/null
	rm -rf "$work/go" "$work/rootfs.tar"
}

# standin_runtime builds the stand-in of the runtime image, tagged $1.
standin_runtime() {
	say "building a stand-in for $runtime_image: CA certificates and the nonroot user"
	local r=$work/runtime
	mkdir -p "$r/etc/ssl/certs" "$r/home/nonroot" "$r/tmp"
	cp /etc/ssl/certs/ca-certificates.crt "$r/etc/ssl/certs/"
	printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$r/etc/passwd"
	printf 'root:x:0:\nnonroot:x:65532:\n' >"$r/etc/group"
	chmod 1777 "$r/tmp"
	tar -C "$r" --numeric-owner --owner=0 --group=0 -cf "$work/runtime.tar" etc tmp
	tar -C "$r" --numeric-owner --owner=65532 --group=65532 -rf "$work/runtime.tar" home
	printf 'FROM scratch\nADD runtime.tar /\nENV HOME=/home/nonroot\nUSER 65532:65532\n' >"$work/Containerfile.runtime"
	buildah bud --quiet -t "$1" -f "$work/Containerfile.runtime" "$work" >/dev/null
}

# A stand-in already built is used again: its tag names what it stands for.
exists() { buildah inspect --type image "$1" >/dev/null 2>&1; }
build_args=()
if ! timeout 60 buildah pull --quiet "$go_image" >/dev/null 2>&1; then
	standin=localhost/mcphost-standin-go:$(sed -n 's/^go //p' go.mod)
	exists "$standin" || standin_go "$standin"
	build_args+=(--build-arg "GO_IMAGE=$standin")
fi
if ! timeout 60 buildah pull --quiet "$runtime_image" >/dev/null 2>&1; then
	standin=localhost/mcphost-standin-runtime:nonroot
	exists "$standin" || standin_runtime "$standin"
	build_args+=(--build-arg "RUNTIME_IMAGE=$standin")
fi

say "buildah bud ${build_args[*]} -t localhost/mcphost-check ."
start=$SECONDS
buildah bud --layers=false "${build_args[@]}" --build-arg "VERSION=$(git describe --tags --always 2>/dev/null || echo dev)" \
	-t localhost/mcphost-check . >"$work/build.log" 2>&1 || {
	say "ERROR: the image did not build; the end of its log:"
	tail -40 "$work/build.log" >&2
	exit 1
}
say "built in $((SECONDS - start))s"

failed=0
user=$(buildah inspect --type image --format '{{.OCIv1.Config.User}}' localhost/mcphost-check)
case $user in
"" | 0 | 0:* | root | root:*) say "ERROR: the image runs as '$user'"; failed=1 ;;
esac
label=$(buildah inspect --type image --format '{{index .OCIv1.Config.Labels "io.modelcontextprotocol.server.name"}}' localhost/mcphost-check)
name=$(sed -n 's/^  "name": "\(.*\)",$/\1/p' server.json)
[ "$label" = "$name" ] || { say "ERROR: the image's label names '$label', server.json '$name'"; failed=1; }

# Serve the baked-in examples as the image's command does, and call one.
ctr=$(buildah from localhost/mcphost-check)
trap 'buildah rm "$ctr" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
mapfile -t cmd < <(buildah inspect --type image --format '{{range .OCIv1.Config.Entrypoint}}{{println .}}{{end}}{{range .OCIv1.Config.Cmd}}{{println .}}{{end}}' localhost/mcphost-check | sed '/^$/d')
answer=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"docker-check","version":"1"}}}' \
	'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hash","arguments":{"text":"abc"}}}' |
	buildah run "$ctr" -- "${cmd[@]}" 2>"$work/serve.log" | tail -n 1)
if [[ $answer != *ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad* ]]; then
	say "ERROR: the image's server did not answer the hash tool: $answer; its log:"
	sed 's/^/  | /' "$work/serve.log" >&2
	failed=1
fi
[ "$failed" -eq 0 ] || exit 1
say "the image builds, runs as $user, carries the label $label and serves the examples"
