//go:build !(js && wasm)

package main

import (
	"fmt"
	"os"
)

// The bridge exists only in WebAssembly; natively this package offers the
// engine workload (workload.go) to benchmarks, and its main says so.
func main() {
	fmt.Fprintln(os.Stderr, "wasm: build with GOOS=js GOARCH=wasm (scripts/build-wasm.sh)")
	os.Exit(2)
}
