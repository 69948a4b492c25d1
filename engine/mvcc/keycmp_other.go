//go:build !wasm

package mvcc

import "bytes"

// compareKeys orders keys as bytes.Compare does (see keycmp_wasm.go for
// why WebAssembly builds have their own).
func compareKeys(a, b []byte) int { return bytes.Compare(a, b) }
