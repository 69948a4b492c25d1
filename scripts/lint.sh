#!/usr/bin/env bash
# Static checks for every Go module of the repository (the main module and
# the separate ones under test/ and bench/):
#   1. gofmt: no file may need formatting;
#   2. go vet, natively and, for every package of the browser build, with
#      GOOS=js GOARCH=wasm;
#   3. staticcheck (pinned in tools/go.mod), natively and for js/wasm;
#   4. go mod tidy -diff: tidying changes no module's go.mod or go.sum
#      (tools/ included; directly used modules are not "// indirect");
#   5. templ: regenerating web/**/*_templ.go must change nothing, since the
#      generated code is committed; in CI (CI set) `git diff --exit-code` on
#      the generated files must be clean as well;
#   5. the WebAssembly build must stay within issue 11's budget of 2 MB gzip
#      (scripts/wasm-size.sh --check).
# Every check runs; the exit status is 1 if any failed.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

# The staticcheck binary pinned by tools/go.mod, built for this machine. It is
# resolved once (`go tool -n` prints the cached executable) because
# `go tool staticcheck` under GOOS=js would build staticcheck itself for js.
staticcheck_bin=$(go tool -n -modfile="$root/tools/go.mod" staticcheck) || exit 1
if [ ! -x "$staticcheck_bin" ]; then
	echo "lint: cannot resolve staticcheck from tools/go.mod (got '$staticcheck_bin')" >&2
	exit 1
fi
staticcheck=("$staticcheck_bin")
failed=()
check() {
	local name=$1
	shift
	echo "== lint: $name" >&2
	"$@" || failed+=("$name")
}

gofmt_clean() {
	local files unformatted
	# Tracked and new files, minus what .gitignore excludes (node_modules...).
	mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.go' | while read -r f; do [ -f "$f" ] && echo "$f"; done)
	[ "${#files[@]}" -eq 0 ] && return 0
	unformatted=$(gofmt -l "${files[@]}")
	if [ -n "$unformatted" ]; then
		echo "gofmt: these files need formatting (gofmt -w):" >&2
		echo "$unformatted" >&2
		return 1
	fi
}

templ_fresh() {
	local before after
	generated() { git ls-files --cached --others --exclude-standard -- '*_templ.go' | sort | while read -r f; do [ -f "$f" ] && sha256sum "$f"; done; }
	before=$(generated)
	go tool templ generate -path web -include-version=false -log-level warn || return 1
	after=$(generated)
	if [ "$before" != "$after" ]; then
		echo "templ: generated code was stale; it has been regenerated, commit it:" >&2
		diff <(echo "$before") <(echo "$after") >&2
		return 1
	fi
	if [ -n "${CI:-}" ]; then
		git diff --exit-code -- '*_templ.go' || return 1
		local untracked
		untracked=$(git ls-files --others --exclude-standard -- '*_templ.go')
		if [ -n "$untracked" ]; then
			echo "templ: generated files are not committed: $untracked" >&2
			return 1
		fi
	fi
}

check gofmt gofmt_clean
check "go vet" bash scripts/each-module.sh test,bench -- go vet ./...
check "staticcheck" bash scripts/each-module.sh test,bench -- "${staticcheck[@]}" ./...
if [ -d wasm ]; then
	# Every package the browser build compiles: the engine's wasm-only files
	# (and code that only native files use) are checked as the browser sees
	# them. Packages with no files for js/wasm (engine/sqlite) drop out.
	mapfile -t wasm_pkgs < <(GOOS=js GOARCH=wasm go list -e -f '{{if not .Error}}{{.ImportPath}}{{end}}' ./engine/... ./wasm/... ./bench/enginebench | grep .)
	check "go vet (js/wasm)" env GOOS=js GOARCH=wasm go vet "${wasm_pkgs[@]}"
	check "staticcheck (js/wasm)" env GOOS=js GOARCH=wasm "${staticcheck[@]}" "${wasm_pkgs[@]}"
	check "wasm size budget" bash scripts/wasm-size.sh --check
fi
check "go mod tidy" bash scripts/each-module.sh test,bench,tools -- go mod tidy -diff
check templ templ_fresh

if [ "${#failed[@]}" -gt 0 ]; then
	echo "lint FAILED: ${failed[*]}" >&2
	exit 1
fi
echo "lint: ok" >&2
