#!/usr/bin/env bash
# Builds the playground engine for the browser into web/static/wasm/:
# rvplay.wasm (+ .gz and .br, served precompressed) and the wasm_exec.js of
# the same Go toolchain. The .gz and .br of a module built before (brotli's
# quality 11 takes about 30 s of one core) come from wasm/cmd/precompress's
# cache in ~/.cache/rvplay/precompress, by the module's content. The server embeds that directory, so run this before
# `go build ./server`. The flags and the size budget are those of
# scripts/wasm-flags.sh; a module over the budget is built anyway (so the lab
# can be tried while it is trimmed) with a warning, and fails the lint step
# (scripts/wasm-size.sh --check), or this script with
# RVPLAY_WASM_BUDGET_STRICT=1.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/wasm-flags.sh

out=web/static/wasm
mkdir -p "$out"
wasm_build "$out/rvplay.wasm.tmp"
mv "$out/rvplay.wasm.tmp" "$out/rvplay.wasm"
cp "$(go env GOROOT)/lib/wasm/wasm_exec.js" "$out/wasm_exec.js"
sizes=$(go run ./wasm/cmd/precompress "$out/rvplay.wasm")
echo "$sizes"

gz=$(gzip -9 -c "$out/rvplay.wasm" | wc -c)
if [ "$gz" -gt "$wasm_budget_gzip" ]; then
	echo "build-wasm: WARNING: rvplay.wasm is $gz bytes gzip -9, over the budget of $wasm_budget_gzip (issue 11)" >&2
	if [ "${RVPLAY_WASM_BUDGET_STRICT:-}" = 1 ]; then
		exit 1
	fi
fi
