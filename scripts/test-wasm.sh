#!/usr/bin/env bash
# Runs the bridge tests and the engine tests as WebAssembly under Node
# (go_js_wasm_exec from the Go toolchain). With --bench it also runs the
# engine benchmarks natively and under Node and prints wasm/native ratios.
set -euo pipefail
cd "$(dirname "$0")/.."

exec_wasm="$(go env GOROOT)/lib/wasm/go_js_wasm_exec"
if ! command -v node >/dev/null; then
	echo "test-wasm: node is required (apt-get install nodejs)" >&2
	exit 1
fi

if [ "${1:-}" != "--bench" ]; then
	GOOS=js GOARCH=wasm go test -exec="$exec_wasm" ./wasm/... ./engine/...
	exit 0
fi

pkgs=(./wasm ./engine/mvcc)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Steady-state figures: V8 runs the optimising tier from the start
# (--no-liftoff). Otherwise a short benchmark measures mostly V8's baseline
# compiler, which a lab left open for a few seconds has already left behind.
# WASM_TIERING=default measures with V8's default tiering instead.
bench_exec="$tmp/go_js_wasm_exec"
node_flags="--stack-size=8192"
[ "${WASM_TIERING:-}" = default ] || node_flags="$node_flags --no-liftoff"
printf '#!/bin/sh\nexec node %s "%s" "$@"\n' "$node_flags" "$(go env GOROOT)/lib/wasm/wasm_exec_node.js" > "$bench_exec"
chmod +x "$bench_exec"
go test -run '^$' -bench . -benchtime=${BENCHTIME:-2s} "${pkgs[@]}" | tee "$tmp/native.txt"
GOOS=js GOARCH=wasm go test -exec="$bench_exec" -run '^$' -bench . -benchtime=${BENCHTIME:-2s} "${pkgs[@]}" | tee "$tmp/wasm.txt"
echo
echo "benchmark                                   native ns/op     wasm ns/op   wasm/native throughput"
awk '
	FNR == 1 { file++ }
	/^Benchmark/ { name = $1; sub(/-[0-9]+$/, "", name); ns[file, name] = $3; names[name] = 1 }
	END {
		for (n in names) if ((1, n) in ns && (2, n) in ns)
			printf "%-42s %14.0f %14.0f %8.0f%%\n", n, ns[1, n], ns[2, n], 100 * ns[1, n] / ns[2, n]
	}' "$tmp/native.txt" "$tmp/wasm.txt" | sort
