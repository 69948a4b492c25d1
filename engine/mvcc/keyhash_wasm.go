//go:build wasm

package mvcc

import "math/rand/v2"

// keyHasher hashes eight bytes at a time with a random seed per table:
// under WebAssembly hash/maphash has no AES instructions and falls back to
// a byte-at-a-time hash (see keytable.go).
type keyHasher struct{ seed uint64 }

func newKeyHasher() keyHasher              { return keyHasher{rand.Uint64()} }
func (h keyHasher) hash(key []byte) uint64 { return hashWords(key, h.seed) }
