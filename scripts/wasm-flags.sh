# shellcheck shell=bash
# How the browser engine is built, and the size it must stay within; sourced
# by scripts/build-wasm.sh and scripts/wasm-size.sh (the lint step's budget
# check), so that what is measured is what is served.

# wasm_budget_gzip is issue 11's budget, "the .wasm stays within 2 MB gzip",
# checked against gzip -9 of the module (wasm/BENCHMARKS.md: the served
# rvplay.wasm.gz, from Go's encoder, is about 1% larger; browsers that
# accept brotli get rvplay.wasm.br, about 28% smaller).
wasm_budget_gzip=2000000

# wasm_no_inline lists the packages compiled without inlining (-l). Under
# WebAssembly an inlined call copies the callee's code into every caller,
# so inlining costs more bytes there than natively; in these packages it
# buys no speed anyone measures: they run once per learner action or per
# lab client step, never per stored key (the lab's clients and their JSON
# operations, the lesson engine and its embedded definitions, JSON patch
# and merge patch, fmt, which the engine uses only to word errors, YAML,
# regexp and tabwriter; the console is JavaScript, not in the module).
# The store, the gateway, the Kubernetes API, the session and the bridge
# keep inlining, and bench/enginebench is built without these flags.
# Figures in wasm/BENCHMARKS.md. A pattern that matches no linked package
# is harmless.
wasm_no_inline=(
	fmt
	regexp/...
	text/tabwriter
	github.com/rvplay/rvplay/engine/client
	github.com/rvplay/rvplay/engine/controllers
	github.com/rvplay/rvplay/engine/kube/patch
	github.com/rvplay/rvplay/engine/lesson/...
	github.com/rvplay/rvplay/wasm/internal/labapi
	github.com/rvplay/rvplay/wasm/internal/remote
	github.com/rvplay/rvplay/web/lessons
	go.yaml.in/yaml/v2
)

# The commit, for rvplay.version in the page ("devel" outside a checkout).
wasm_version=$(git rev-parse --short=12 HEAD 2>/dev/null || echo devel)
wasm_build_flags=(-trimpath "-ldflags=-s -w -X main.version=$wasm_version")
for p in "${wasm_no_inline[@]}"; do
	wasm_build_flags+=("-gcflags=$p=-l")
done

# wasm_build builds ./wasm for the browser with the flags above; extra
# arguments (-o FILE, or another -ldflags) follow them and win.
wasm_build() {
	GOOS=js GOARCH=wasm go build "${wasm_build_flags[@]}" "$@" ./wasm
}
