# Sourced by the scripts that build the browser's engine (build-wasm.sh,
# wasm-size.sh): WASM_GCFLAGS holds -gcflags arguments that turn inlining
# off in packages off the engine's hot paths. Under WebAssembly an inlined
# call copies the callee's code into every caller, so inlining costs more
# bytes there than natively; in these packages it buys no speed anyone
# measures (the lab's clients and their JSON operations, the lesson engine
# and its embedded definitions, JSON patch and merge patch, fmt, which the
# engine uses only to word errors), and turning it off took 57 KB off the
# gzip size (wasm/BENCHMARKS.md). The store, the gateway, the Kubernetes
# API, the session and the bridge keep inlining.
m=github.com/rvplay/rvplay
WASM_GCFLAGS=(
	-gcflags="$m/wasm/internal/labapi=-l"
	-gcflags="$m/wasm/internal/remote=-l"
	-gcflags="$m/engine/client=-l"
	-gcflags="$m/engine/lesson/...=-l"
	-gcflags="$m/web/lessons=-l"
	-gcflags="$m/engine/kube/patch=-l"
	-gcflags="github.com/evanphx/json-patch/...=-l"
	-gcflags="fmt=-l"
)
