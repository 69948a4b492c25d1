#!/usr/bin/env bash
# Runs tasks one after another and keeps going when one fails, so that one run
# of `task test` (and of CI, which takes minutes) reports every failing stage
# instead of stopping at the first. Prints each stage's duration and a
# summary; exits 1 if any stage failed.
#
#   scripts/stages.sh TASK_EXECUTABLE STAGE...
set -uo pipefail
cd "$(dirname "$0")/.."

task_exe=$1
shift
failed=()
summary=()
for stage in "$@"; do
	echo "=== stage $stage" >&2
	start=$SECONDS
	if "$task_exe" "$stage"; then
		result=ok
	else
		result=FAILED
		failed+=("$stage")
	fi
	summary+=("$(printf '%-12s %-6s %5ds' "$stage" "$result" $((SECONDS - start)))")
done
echo "=== summary" >&2
printf '    %s\n' "${summary[@]}" >&2
if [ "${#failed[@]}" -gt 0 ]; then
	echo "=== FAILED: ${failed[*]}" >&2
	exit 1
fi
