#!/usr/bin/env bash
# Measures the browser app as served: builds ./wasm for GOOS=js GOARCH=wasm
# with the flags of build-wasm.sh (scripts/wasm-flags.sh) and prints raw and
# gzip -9 sizes against issue 11's budget of 2 MB gzip (aim 1.2 MB). With
# --check it fails when the module is over the budget (the lint step runs
# it). With --packages it also builds with symbols and prints the function
# code per Go package (raw bytes, and each package's code gzipped on its
# own, which overstates a package's share of the whole file but ranks
# them). `go tool nm` does not read wasm files, hence the small reader of
# the wasm name section below.
# Usage: scripts/wasm-size.sh [--check | --packages [N]]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/wasm-flags.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

wasm_build "$tmp/app.wasm"
raw=$(stat -c %s "$tmp/app.wasm")
gz=$(gzip -9 -c "$tmp/app.wasm" | wc -c)
printf 'wasm raw %d B, gzip -9 %d B (budget %d B: %d%%, %d B left; aim 1,200,000)\n' \
	"$raw" "$gz" "$wasm_budget_gzip" $((100 * gz / wasm_budget_gzip)) $((wasm_budget_gzip - gz))

case "${1:-}" in
--check)
	if [ "$gz" -gt "$wasm_budget_gzip" ]; then
		echo "wasm-size: the module is $((gz - wasm_budget_gzip)) B over the budget of $wasm_budget_gzip B gzip (issue 11); scripts/wasm-size.sh --packages ranks what it links, wasm/BENCHMARKS.md says what was tried" >&2
		exit 1
	fi
	exit 0
	;;
--packages) ;;
*) exit 0 ;;
esac
wasm_build "$tmp/sym.wasm" -ldflags=
mkdir -p "$tmp/reader"
cat >"$tmp/reader/main.go" <<'GO'
package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

func uleb(b []byte, i int) (int, int) {
	r, s := 0, 0
	for {
		x := b[i]
		i++
		r |= int(x&0x7f) << s
		s += 7
		if x < 0x80 {
			return r, i
		}
	}
}

// pkgOf maps a wasm function name ("github.com_x_y.(*T).f") to its package.
func pkgOf(name string) string {
	prefix := ""
	for _, d := range []string{"github.com", "go.yaml.in", "sigs.k8s.io", "golang.org", "modernc.org"} {
		if strings.HasPrefix(name, d) {
			prefix, name = d, name[len(d):]
			break
		}
	}
	if i := strings.IndexByte(name, '.'); i >= 0 {
		name = name[:i]
	}
	if strings.HasPrefix(name, "type:") {
		return "type:"
	}
	return prefix + name
}

func main() {
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	top, _ := strconv.Atoi(os.Args[2])
	imports := 0
	var bodies [][]byte
	names := map[int]string{}
	for i := 8; i < len(data); {
		id := data[i]
		size, j := uleb(data, i+1)
		b := data[j : j+size]
		i = j + size
		switch id {
		case 2: // imports: count function imports (they take the first indices)
			n, k := uleb(b, 0)
			for ; n > 0; n-- {
				l, k2 := uleb(b, k)
				k = k2 + l
				l, k2 = uleb(b, k)
				k = k2 + l
				kind := b[k]
				k++
				switch kind {
				case 0:
					_, k = uleb(b, k)
					imports++
				case 1:
					k++
					f := b[k]
					_, k = uleb(b, k+1)
					if f&1 != 0 {
						_, k = uleb(b, k)
					}
				case 2:
					f := b[k]
					_, k = uleb(b, k+1)
					if f&1 != 0 {
						_, k = uleb(b, k)
					}
				case 3:
					k += 2
				}
			}
		case 10: // code
			n, k := uleb(b, 0)
			for ; n > 0; n-- {
				l, k2 := uleb(b, k)
				bodies = append(bodies, b[k2:k2+l])
				k = k2 + l
			}
		case 0: // custom: the "name" section's function names
			l, k := uleb(b, 0)
			if string(b[k:k+l]) != "name" {
				continue
			}
			for k += l; k < len(b); {
				sub := b[k]
				ss, k2 := uleb(b, k+1)
				end := k2 + ss
				if sub == 1 {
					n, p := uleb(b, k2)
					for ; n > 0; n-- {
						var idx, nl int
						idx, p = uleb(b, p)
						nl, p = uleb(b, p)
						names[idx] = string(b[p : p+nl])
						p += nl
					}
				}
				k = end
			}
		}
	}
	raw := map[string]int{}
	code := map[string]*bytes.Buffer{}
	for i, body := range bodies {
		p := pkgOf(names[imports+i])
		raw[p] += len(body)
		if code[p] == nil {
			code[p] = &bytes.Buffer{}
		}
		code[p].Write(body)
	}
	pkgs := make([]string, 0, len(raw))
	for p := range raw {
		pkgs = append(pkgs, p)
	}
	sort.Slice(pkgs, func(i, j int) bool { return raw[pkgs[i]] > raw[pkgs[j]] })
	fmt.Printf("%10s %10s  %s\n", "code B", "gzip B", "package")
	for i, p := range pkgs {
		if i == top {
			break
		}
		var z bytes.Buffer
		w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
		w.Write(code[p].Bytes())
		w.Close()
		fmt.Printf("%10d %10d  %s\n", raw[p], z.Len(), p) // "/" is "_" in wasm names
	}
}
GO
(cd "$tmp/reader" && GOOS= GOARCH= GOFLAGS= go run main.go "$tmp/sym.wasm" "${2:-30}")
