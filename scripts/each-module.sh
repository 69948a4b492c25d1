#!/usr/bin/env bash
# Runs one command in the main module and then in every separate Go module
# (a directory with its own go.mod) found under the given roots, so that test
# and benchmark modules that keep heavy dependencies (client-go, etcd's server)
# out of the product's module graph are never skipped silently.
#
#   scripts/each-module.sh test,bench -- go test ./...
#
# Every module runs even when an earlier one fails; the exit status is 1 if
# any failed, and the failures are listed at the end. A root that does not
# exist yet is simply empty.
set -uo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 3 ] || [ "$2" != "--" ]; then
	echo "usage: $0 ROOT[,ROOT...] -- COMMAND [ARG...]" >&2
	exit 2
fi
IFS=, read -r -a roots <<<"$1"
shift 2

modules=(.)
for root in "${roots[@]}"; do
	[ -d "$root" ] || continue
	while IFS= read -r gomod; do
		modules+=("$(dirname "$gomod")")
	done < <(find "$root" -name go.mod -not -path '*/testdata/*' -not -path '*/node_modules/*' | sort)
done

failed=()
for module in "${modules[@]}"; do
	echo "== ${module}: $*" >&2
	if ! (cd "$module" && "$@"); then
		failed+=("$module")
	fi
done
if [ "${#failed[@]}" -gt 0 ]; then
	echo "FAILED in: ${failed[*]}" >&2
	exit 1
fi
