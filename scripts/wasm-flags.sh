# shellcheck shell=bash
# How the browser engine is built, and the size it must stay within; sourced
# by scripts/build-wasm.sh and scripts/wasm-size.sh (the lint step's budget
# check), so that what is measured is what is served.

# wasm_budget_gzip is issue 11's budget, "the .wasm stays within 2 MB gzip",
# checked against gzip -9 of the module (wasm/BENCHMARKS.md: the served
# rvplay.wasm.gz, from Go's encoder, is about 1% larger; browsers that
# accept brotli get rvplay.wasm.br, about 28% smaller).
wasm_budget_gzip=2000000

# wasm_inline lists the only packages compiled with inlining; every other
# one is compiled without it (-gcflags=all=-l). Under WebAssembly an
# inlined call copies the callee's code into every caller, and Go's code
# there is about five bytes of wasm per byte of source: inlining
# everywhere costs about 160 KB of the 2 MB gzip budget. It is kept where
# it buys speed: the store (its range and watch paths run per stored key;
# 19.6 KB) and the runtime with its internal packages (allocation, maps,
# channels, atomics: +53.7 KB, and a Kubernetes request through the
# session takes 0.8x the CPU of the build without it under Node, where
# inlining engine/kube, kubeapi, session, schema and apply, +22.8 KB,
# bought nothing measurable). bench/enginebench is built without these
# flags, so the engine's benchmark figures are those of inlined code.
# Figures in wasm/BENCHMARKS.md.
wasm_inline=(
	github.com/rvplay/rvplay/engine/mvcc
	runtime
	internal/runtime/...
)

# The commit, for rvplay.version in the page ("devel" outside a checkout).
wasm_version=$(git rev-parse --short=12 HEAD 2>/dev/null || echo devel)
wasm_build_flags=(-trimpath "-ldflags=-s -w -X main.version=$wasm_version" "-gcflags=all=-l")
for p in "${wasm_inline[@]}"; do
	wasm_build_flags+=("-gcflags=$p=") # the last matching -gcflags wins
done

# wasm_build OUT [FLAG...] builds ./wasm for the browser into OUT with the
# flags above (extra flags, such as another -ldflags, follow them and win),
# then joins the data segments that Go's linker cut at every run of zeros
# (wasm/cmd/packdata: the same memory, 167 KB less gzip) and takes the
# names, files and lines of the functions outside the module (the runtime,
# the standard library, dependencies), which only tracebacks print, out of
# the runtime's function table (about 120 KB less gzip; a traceback keeps
# the module's own frames whole). RVPLAY_WASM_SYMBOLS=1 keeps them all,
# for a build whose panics must show every frame.
wasm_build() {
	local out=$1
	shift
	GOOS=js GOARCH=wasm go build "${wasm_build_flags[@]}" "$@" -o "$out" ./wasm
	local symbols=()
	[ -n "${RVPLAY_WASM_SYMBOLS:-}" ] && symbols=(-keep-symbols)
	GOOS= GOARCH= go run ./wasm/cmd/packdata "${symbols[@]}" "$out"
}
