# Sourced by the set-up scripts: installs Debian packages the tests need,
# saying first, in one line, what it installs, why, and how much.
#
#   apt_install NAME WHY PACKAGE...
#
# installs the PACKAGEs that are missing, printing
#   NAME: installing P1 P2 (12.3 MB to download, 45.6 MB on disk) for WHY
# before it starts. It returns 0 when all are installed, and 2 without
# apt-get (the caller decides whether that is a skip or an error); it
# fails without root or sudo.

apt_install() {
	local name=$1 why=$2
	shift 2
	local missing=() p
	for p in "$@"; do
		if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
			missing+=("$p")
		fi
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if ! command -v apt-get >/dev/null 2>&1; then
		return 2
	fi
	local sudo=()
	if [ "$(id -u)" -ne 0 ]; then
		if ! command -v sudo >/dev/null 2>&1; then
			echo "$name: need root (or sudo) to install ${missing[*]} for $why" >&2
			return 1
		fi
		sudo=(sudo)
	fi
	export DEBIAN_FRONTEND=noninteractive
	# An update first: a fresh machine may have no package lists, or old ones.
	"${sudo[@]}" apt-get update -qq
	local size
	size=$("${sudo[@]}" apt-get install --no-install-recommends --assume-no "${missing[@]}" 2>/dev/null |
		sed -n 's/^Need to get \([^ ]* [kMG]*B\).*/\1 to download/p; s/^After this operation, \([^ ]* [kMG]*B\) of additional disk space.*/\1 on disk/p' |
		paste -sd, - | sed 's/,/, /')
	echo "$name: installing ${missing[*]}${size:+ ($size)} for $why"
	"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# apt_tool NAME WHY VERSION_COMMAND PACKAGE...
#
# installs the PACKAGEs (apt_install) for WHY, the tests that need them,
# and prints what VERSION_COMMAND says. Without apt-get it warns that those
# tests are SKIPPED, or fails when CI is set: CI runs every test.
apt_tool() {
	local name=$1 why=$2 version=$3
	shift 3
	local rc=0
	apt_install "$name" "$why" "$@" || rc=$?
	case $rc in
	0) echo "$name: $($version 2>/dev/null | head -1)" ;;
	2)
		if [ -n "${CI:-}" ]; then
			echo "$name: apt-get not found and CI is set: install $*, which $why need" >&2
			return 1
		fi
		echo "$name: *** SKIP *** apt-get not found: install $* yourself, or $why are SKIPPED" >&2
		;;
	*) return "$rc" ;;
	esac
}
