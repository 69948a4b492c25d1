#!/usr/bin/env bash
# Runs one command in the main module and then in every separate Go module
# (a directory with its own go.mod) found under the given roots, so that test
# and benchmark modules that keep heavy dependencies (client-go, etcd's server)
# out of the product's module graph are never skipped silently.
#
#   scripts/each-module.sh [--beside MODULE[,MODULE...]] ROOT[,ROOT...] -- COMMAND [ARG...]
#
# --beside runs the command in those modules at the same time as in the
# others, one after another in the background, instead of in turn: for
# modules whose tests spend their time waiting on real servers' clocks
# (a watch cache's 3 s, a compactor's period), not on the processor. Their
# output is kept apart and printed when they end.
#
# Every module runs even when an earlier one fails; the exit status is 1 if
# any failed, and the failures are listed at the end. A root that does not
# exist yet is simply empty.
set -uo pipefail
cd "$(dirname "$0")/.."

usage() {
	echo "usage: $0 [--beside MODULE[,MODULE...]] ROOT[,ROOT...] -- COMMAND [ARG...]" >&2
	exit 2
}
beside=()
if [ "${1:-}" = --beside ]; then
	[ $# -ge 2 ] || usage
	IFS=, read -r -a beside <<<"$2"
	shift 2
fi
if [ $# -lt 3 ] || [ "$2" != "--" ]; then
	usage
fi
IFS=, read -r -a roots <<<"$1"
shift 2

is_beside() {
	local m
	for m in "${beside[@]}"; do
		[ "$m" = "$1" ] && return 0
	done
	return 1
}

modules=(.)
background=()
for root in "${roots[@]}"; do
	[ -d "$root" ] || continue
	while IFS= read -r gomod; do
		module=$(dirname "$gomod")
		if is_beside "$module"; then
			background+=("$module")
		else
			modules+=("$module")
		fi
	done < <(find "$root" -name go.mod -not -path '*/testdata/*' -not -path '*/node_modules/*' | sort)
done

failed=()
if [ "${#background[@]}" -gt 0 ]; then
	out=$(mktemp)
	failures=$(mktemp)
	trap 'rm -f "$out" "$failures"' EXIT
	echo "== ${background[*]}: $* (beside the others; output when done)" >&2
	(
		for module in "${background[@]}"; do
			echo "== ${module}: $*"
			(cd "$module" && "$@") || echo "$module" >>"$failures"
		done
	) >"$out" 2>&1 &
	pid=$!
fi
for module in "${modules[@]}"; do
	echo "== ${module}: $*" >&2
	if ! (cd "$module" && "$@"); then
		failed+=("$module")
	fi
done
if [ "${#background[@]}" -gt 0 ]; then
	wait "$pid"
	cat "$out"
	while IFS= read -r module; do
		failed+=("$module")
	done <"$failures"
fi
if [ "${#failed[@]}" -gt 0 ]; then
	echo "FAILED in: ${failed[*]}" >&2
	exit 1
fi
