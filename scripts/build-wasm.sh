#!/usr/bin/env bash
# Builds the playground engine for the browser into web/static/wasm/:
# rvplay.wasm (+ .gz and .br, served precompressed) and the wasm_exec.js of
# the same Go toolchain. The server embeds that directory, so run this before
# `go build ./server`. Warns (fails with RVPLAY_WASM_BUDGET_STRICT=1) when
# the gzip size exceeds the 2 MB budget.
set -euo pipefail
cd "$(dirname "$0")/.."

out=web/static/wasm
mkdir -p "$out"
# shellcheck source=wasm-gcflags.sh
. scripts/wasm-gcflags.sh
GOOS=js GOARCH=wasm go build -trimpath "${WASM_GCFLAGS[@]}" -ldflags="-s -w" -o "$out/rvplay.wasm.tmp" ./wasm
mv "$out/rvplay.wasm.tmp" "$out/rvplay.wasm"
cp "$(go env GOROOT)/lib/wasm/wasm_exec.js" "$out/wasm_exec.js"
sizes=$(go run ./wasm/cmd/precompress "$out/rvplay.wasm")
echo "$sizes"

gz=$(stat -c %s "$out/rvplay.wasm.gz")
budget=$((2 * 1024 * 1024))
if [ "$gz" -gt "$budget" ]; then
	echo "build-wasm: WARNING: rvplay.wasm.gz is $gz bytes, over the 2 MB budget" >&2
	# Strict mode (CI, once the engine fits) fails the build instead.
	if [ "${RVPLAY_WASM_BUDGET_STRICT:-}" = 1 ]; then
		exit 1
	fi
fi
