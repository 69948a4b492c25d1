#!/usr/bin/env bash
# Runs the bridge tests, the engine tests and the lessons' replays as
# WebAssembly under Node (go_js_wasm_exec from the Go toolchain). With
# --bench it instead runs the
# engine benchmark ops natively and under Node, interleaved, and prints
# wasm/native ratios.
set -euo pipefail
cd "$(dirname "$0")/.."

exec_wasm="$(go env GOROOT)/lib/wasm/go_js_wasm_exec"
if ! command -v node >/dev/null; then
	echo "test-wasm: node is required (apt-get install nodejs)" >&2
	exit 1
fi

if [ "${1:-}" != "--bench" ]; then
	GOOS=js GOARCH=wasm go test -exec="$exec_wasm" ./wasm/... ./engine/... ./web/lessons/ ./bench/enginebench/
	exit 0
fi

# The engine benchmark ops (bench/enginebench: Put,
# TxnCompareAndSwap, RangeKey1, RangeKey100, WatchFanOut100), natively and
# in one long-lived Node WebAssembly instance, interleaved round by round
# after warm-up rounds (V8 tiers the hot code up meanwhile); per op the
# median of the per-round wasm/native ratios, the only figure a shared,
# loaded machine gives reliably. ROUNDS and WARMUP set the counts;
# WASM_TIERING=no-liftoff runs V8's optimising tier from the start.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/enginebench" ./bench/enginebench
GOOS=js GOARCH=wasm go build -o "$tmp/enginebench.wasm" ./bench/enginebench
node_flags=(--stack-size=8192)
[ "${WASM_TIERING:-}" = no-liftoff ] && node_flags+=(--no-liftoff)
node "${node_flags[@]}" bench/enginebench/node-driver.mjs "$tmp/enginebench" "$tmp/enginebench.wasm" \
	"$(go env GOROOT)/lib/wasm/wasm_exec.js" "${ROUNDS:-7}" "${WARMUP:-3}"
