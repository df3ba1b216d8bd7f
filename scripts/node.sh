# Sourced by the scripts that run Node.js: finds or installs Node and npm,
# the one place that does so.
#
#   need_npm WHY          installs Debian's npm (and nodejs) with apt_install
#                         when there is no npm; returns as apt_install does
#                         (0, 2 without apt-get, 1 on failure)
#   need_node MAJOR WHY   sets node to a Node.js >= MAJOR: the machine's,
#                         else the npm package node-OS-ARCH@MAJOR installed
#                         into .cache/node (npm first, with need_npm); on
#                         failure returns non-zero with the reason in
#                         node_missing
#
# Nothing is installed globally but Debian's packages. Callers source
# scripts/apt.sh too and run from the repository's root.

# node_major prints the major version of the node binary $1 (0 if unknown).
node_major() {
	local v
	v=$("$1" --version 2>/dev/null || true)
	v=${v#v}
	v=${v%%.*}
	case "$v" in
	'' | *[!0-9]*) echo 0 ;;
	*) echo "$v" ;;
	esac
}

need_npm() {
	command -v npm >/dev/null 2>&1 && return 0
	apt_install node "$1" npm
}

need_node() {
	local want=$1 why=$2 os arch pkg
	node_missing=
	if command -v node >/dev/null 2>&1 && [ "$(node_major node)" -ge "$want" ]; then
		node=$(command -v node)
		return 0
	fi
	case "$(uname -s)" in
	Linux) os=linux ;;
	Darwin) os=darwin ;;
	*) node_missing="no Node.js >= $want, and no npm package of Node for $(uname -s)"; return 1 ;;
	esac
	case "$(uname -m)" in
	x86_64 | amd64) arch=x64 ;;
	aarch64 | arm64) arch=arm64 ;;
	*) node_missing="no Node.js >= $want, and no npm package of Node for $(uname -m)"; return 1 ;;
	esac
	pkg="node-$os-$arch"
	node=".cache/node/node_modules/$pkg/bin/node"
	if [ -x "$node" ] && [ "$(node_major "$node")" -ge "$want" ]; then
		return 0
	fi
	if ! need_npm "$why"; then
		node_missing="Node.js >= $want is missing (found: $(node --version 2>/dev/null || echo none)) and npm is missing too"
		return 1
	fi
	echo "node: installing Node $want into .cache/node ($pkg) for $why" >&2
	npm install --prefix .cache/node --no-audit --no-fund --loglevel=error "$pkg@$want" >&2
	if [ "$(node_major "$node")" -lt "$want" ]; then
		node_missing="$node is not Node >= $want after npm install $pkg@$want"
		return 1
	fi
}
