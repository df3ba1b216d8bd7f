#!/usr/bin/env bash
# Runs the README's walk-through as it is written, so that the README
# cannot drift from what works (make test runs it).
#
# The walk-through is the part of README.md between the lines
# <!-- walkthrough:begin --> and <!-- walkthrough:end -->. Its ```sh blocks
# run in order, in one bash (set -euo pipefail), in an empty temporary
# folder, with the freshly built build/mcphost first on PATH. A ```text
# block that follows a sh block shows what that block prints: each of its
# lines must be a whole line of the block's output (stdout and stderr), in
# order, "…" standing for any text. Other lines may come between them.
#
# Exits non-zero, naming the block and showing its output, when a command
# fails or a shown output is not printed.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

say() { echo "walkthrough: $*" >&2; }

make --no-print-directory build >&2

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/blocks" "$work/out" "$work/walk"

# Extract the blocks: N.sh for the Nth sh block, N.text for what it prints.
awk -v dir="$work/blocks" '
	/^<!-- walkthrough:begin -->$/ { on = 1; next }
	/^<!-- walkthrough:end -->$/ { on = 0; next }
	!on { next }
	inblock && /^```$/ { inblock = 0; next }
	inblock { print > file; next }
	/^```sh$/ { n++; file = dir "/" n ".sh"; inblock = 1; printf "" > file; next }
	/^```text$/ && n > 0 { file = dir "/" n ".text"; inblock = 1; next }
' README.md
blocks=$(find "$work/blocks" -name '*.sh' | wc -l)
if [ "$blocks" -eq 0 ]; then
	say "ERROR: README.md has no \`\`\`sh block between <!-- walkthrough:begin --> and <!-- walkthrough:end -->"
	exit 1
fi

# One bash runs every block, so that what a block defines (a folder, a
# function) serves the next; it records which block it is in.
{
	echo 'set -euo pipefail'
	for ((i = 1; i <= blocks; i++)); do
		echo "echo $i > '$work/at'"
		echo ". '$work/blocks/$i.sh' > '$work/out/$i' 2>&1"
	done
	echo "echo done > '$work/at'"
} >"$work/run.sh"

# shown reports whether line is what the pattern shows: the same text, each
# "…" of the pattern standing for any text.
shown() {
	local s=$1 pat=$2 part
	if [[ $pat != *…* ]]; then
		[[ $s == "$pat" ]]
		return
	fi
	part=${pat%%…*} pat=${pat#*…}
	[[ $s == "$part"* ]] || return 1
	s=${s#"$part"}
	while [[ $pat == *…* ]]; do
		part=${pat%%…*} pat=${pat#*…}
		[[ $s == *"$part"* ]] || return 1
		s=${s#*"$part"}
	done
	[[ $s == *"$pat" ]]
}

# report prints block $1 and what it printed.
report() {
	sed 's/^/  $ /' "$work/blocks/$1.sh" >&2
	say "its output:"
	sed 's/^/  | /' "$work/out/$1" >&2 2>/dev/null || true
}

start=$SECONDS
if ! (cd "$work/walk" && PATH="$repo/build:$PATH" bash "$work/run.sh" </dev/null); then
	at=$(cat "$work/at")
	say "ERROR: block $at of the README's walk-through failed:"
	report "$at"
	exit 1
fi

failed=0
for ((i = 1; i <= blocks; i++)); do
	[ -f "$work/blocks/$i.text" ] || continue
	mapfile -t got <"$work/out/$i"
	next=0
	while IFS= read -r want; do
		[ -n "$want" ] || continue
		while [ "$next" -lt "${#got[@]}" ] && ! shown "${got[next]}" "$want"; do
			next=$((next + 1))
		done
		if [ "$next" -ge "${#got[@]}" ]; then
			say "ERROR: block $i of the README's walk-through did not print, as the README shows:"
			echo "  > $want" >&2
			report "$i"
			failed=1
			break
		fi
		next=$((next + 1))
	done <"$work/blocks/$i.text"
done
[ "$failed" -eq 0 ] || exit 1
say "the README's $blocks blocks ran as written in $((SECONDS - start))s"
